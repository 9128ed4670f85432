"""Crash safety with real processes: writers of one store killed with SIGKILL lose nothing they committed."""

from __future__ import annotations

import importlib.util
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from types import ModuleType

import pytest

from monitor.store import HookStore

WRITERS = 4
EVENTS_PER_WRITER = 250
VICTIM_EVENTS = 50_000
WRITER_SCRIPT = Path(__file__).with_name("store_writer.py")


def _load_writer() -> ModuleType:
    spec = importlib.util.spec_from_file_location("store_writer", WRITER_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


writer_module = _load_writer()


def _run_writers(path: Path, kill_after: dict[int, int]) -> dict[int, list[tuple[int, int]]]:
    """Start the writers together; kill writer w with SIGKILL once it printed kill_after[w] commits.
    Return every (seq, index) each writer printed."""
    # A writer to be killed has far more to write than it can before its kill, however late that comes.
    counts = [VICTIM_EVENTS if w in kill_after else EVENTS_PER_WRITER for w in range(WRITERS)]
    procs = [
        subprocess.Popen(
            [sys.executable, str(WRITER_SCRIPT), str(path), str(w), str(counts[w])],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(WRITERS)
    ]
    printed: dict[int, list[tuple[int, int]]] = {w: [] for w in range(WRITERS)}

    def follow(w: int) -> None:
        proc = procs[w]
        assert proc.stdout is not None
        for line in proc.stdout:  # lines printed before the kill are still read: they were committed
            seq, index = line.split()
            printed[w].append((int(seq), int(index)))
            if len(printed[w]) == kill_after.get(w):
                os.kill(proc.pid, signal.SIGKILL)

    threads = [threading.Thread(target=follow, args=(w,)) for w in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    for w, proc in enumerate(procs):
        proc.wait(timeout=30)
        assert proc.stderr is not None
        errors = proc.stderr.read()
        proc.stdout.close()  # type: ignore[union-attr]
        proc.stderr.close()
        if w in kill_after:
            assert proc.returncode == -signal.SIGKILL, f"writer {w} ended before its kill: {errors}"
        else:
            assert proc.returncode == 0, errors
            assert len(printed[w]) == EVENTS_PER_WRITER
    return printed


def _check_store(path: Path, printed: dict[int, list[tuple[int, int]]]) -> None:
    raw = sqlite3.connect(path)
    try:
        assert raw.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert raw.execute("PRAGMA foreign_key_check").fetchall() == []
        orphans = raw.execute("SELECT count(*) FROM decisions LEFT JOIN events USING (seq) WHERE events.seq IS NULL")
        assert orphans.fetchone()[0] == 0
        for sid, events, calls in raw.execute("SELECT session_id, events, calls FROM sessions"):
            counted = raw.execute("SELECT count(*) FROM events WHERE session_id = ?", (sid,)).fetchone()[0]
            decided = raw.execute("SELECT count(*) FROM decisions WHERE session_id = ?", (sid,)).fetchone()[0]
            assert (events, calls) == (counted, decided), sid
    finally:
        raw.close()

    all_seqs = [seq for lines in printed.values() for seq, _ in lines]
    assert len(all_seqs) == len(set(all_seqs)), "a seq was given to two commits"
    with HookStore(path) as store:
        events = {event.seq: event for event in store.events()}
        decisions = {decision.seq: decision for decision in store.decisions()}
        for w, lines in printed.items():
            assert [index for _, index in lines] == list(range(len(lines)))
            for seq, index in lines:
                event = events.get(seq)
                assert event is not None, f"writer {w} committed seq {seq} and it is gone"
                assert event.payload == writer_module.make_payload(w, index)
                assert event.session_id == writer_module.session_of(w)
        # Every stored event is one a writer made, each writer's a run from its first with at most one more
        # (committed, then killed before it printed), and an event's decision is there with it or not at all.
        stored: dict[int, list[int]] = {w: [] for w in range(WRITERS)}
        for seq, event in events.items():
            body = json.loads(event.payload)
            w, index = map(int, body["tool_input"]["command"].split()[1].split("-"))
            assert event.payload == writer_module.make_payload(w, index)
            stored[w].append(index)
            expected = writer_module.make_decision(w, index)
            if expected is None:
                assert seq not in decisions
            else:
                assert decisions[seq].call_id == expected.call_id
                assert decisions[seq].action == expected.action
        for w, indexes in stored.items():
            assert indexes == list(range(len(indexes)))
            assert len(printed[w]) <= len(indexes) <= len(printed[w]) + 1
        # The store takes writes again.
        store.append("after", "SessionStart", "{}", received=0.0)


@pytest.mark.parametrize(("seed", "killed"), [(1, "one"), (3, "all")])
def test_writers_killed_mid_run_lose_no_committed_event(tmp_path: Path, seed: int, killed: str) -> None:
    rng = random.Random(seed)
    victims = [rng.randrange(WRITERS)] if killed == "one" else list(range(WRITERS))
    kill_after = {w: rng.randint(5, EVENTS_PER_WRITER * 3 // 4) for w in victims}
    path = tmp_path / "state" / "hooks.sqlite3"  # a new store: the writers also race to create it
    printed = _run_writers(path, kill_after)
    _check_store(path, printed)
