"""The hook store survives ``kill -9`` of the engine in the middle of a stream of hook events: every event a
hook answered is stored, and the stored decisions are those of a sequential replay of the stored events."""

from __future__ import annotations

import io
import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from support.engines import kill_engines

from monitor.ingest import read_claude_code_stream
from monitor.models import RecordError, SessionEnd
from monitor.session import SessionMonitor
from monitor.store import HookStore

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = [json.loads(line) for line in (ROOT / "samples" / "claude-code" / "hooks.jsonl").read_text().splitlines()]
CLIENTS = 4
EVENTS_PER_CLIENT = 250
KILLS = 3

# One client process: it answers its events one after the other with the hook client's own code (run_hook),
# each event fed on stdin and answered on stdout as in a hook process, and logs each answer as one line.
DRIVER = """
import io, json, sys
from monitor.hosts.claude_code import run_hook
state_dir, events_file, answers_file = sys.argv[1:4]
with open(events_file) as events, open(answers_file, "w") as answers:
    for line in events:
        out = io.StringIO()
        sys.stdin = io.TextIOWrapper(io.BytesIO(line.encode()))
        sys.stdout = out
        try:
            run_hook(["--state-dir", state_dir, "--timeout", "30"])
        finally:
            sys.stdout = sys.__stdout__
        answers.write(json.dumps({"event": json.loads(line), "answer": json.loads(out.getvalue())}) + "\\n")
        answers.flush()
"""


def session_events(session_id: str, count: int) -> list[dict[str, Any]]:
    """``count`` hook payloads of one session: a prompt, then rounds of the sample's three calls (list the
    issues, read a private file, open a pull request with it) with their results, call ids of their own."""
    prompt, calls = TEMPLATE[1], TEMPLATE[2:8]
    events: list[dict[str, Any]] = []
    round_no = 0
    while len(events) < count:
        events.append({**prompt, "session_id": session_id, "prompt": f"{prompt['prompt']} (round {round_no})"})
        for payload in calls:
            events.append({**payload, "session_id": session_id, "tool_use_id": f"{payload['tool_use_id']}_{round_no}"})
        round_no += 1
    return events[:count]


def replay_decisions(payloads: list[str]) -> dict[str, tuple[str, str, tuple[str, ...]]]:
    """The decisions of a fresh monitor fed the payloads in order through the Claude Code reader."""
    monitor = SessionMonitor()
    decided = {}
    for record in read_claude_code_stream(io.BytesIO("".join(p + "\n" for p in payloads).encode()), "replay"):
        if isinstance(record, (RecordError, SessionEnd)):
            continue
        decision = monitor.observe(record)
        if decision is not None:
            decided[decision.call_id] = (decision.action.value, decision.level.value, tuple(map(str, decision.reasons)))
    return decided


def test_kill_9_of_the_engine_during_1000_hook_events_loses_nothing_committed(tmp_path: Path, state_dir: Path) -> None:
    drivers = []
    for i in range(CLIENTS):
        events = tmp_path / f"events-{i}.jsonl"
        events.write_text("".join(json.dumps(e) + "\n" for e in session_events(f"crash-{i}", EVENTS_PER_CLIENT)))
        answers = tmp_path / f"answers-{i}.jsonl"
        command = [sys.executable, "-c", DRIVER, str(state_dir), str(events), str(answers)]
        drivers.append((subprocess.Popen(command, stderr=subprocess.PIPE), answers))
    killed: set[int] = set()
    while len(killed) < KILLS and any(proc.poll() is None for proc, _ in drivers):
        time.sleep(1.0)
        killed |= kill_engines(state_dir)
    errors = [proc.communicate(timeout=240)[1] for proc, _ in drivers]
    assert [proc.returncode for proc, _ in drivers] == [0] * CLIENTS, errors
    assert len(killed) >= 2, "the engine was not killed while the hooks ran"

    answered = [json.loads(line) for _, answers in drivers for line in answers.read_text().splitlines()]
    assert len(answered) == CLIENTS * EVENTS_PER_CLIENT
    # One more event per session starts a fresh engine, which processes what hooks stored without one.
    for i in range(CLIENTS):
        stop = {**TEMPLATE[8], "session_id": f"crash-{i}"}
        subprocess.run(
            [sys.executable, "-m", "monitor", "hook", "claude-code", "--state-dir", str(state_dir)],
            input=json.dumps(stop).encode(),
            capture_output=True,
            timeout=60,
            check=True,
        )

    conn = sqlite3.connect(state_dir / "hooks.sqlite3")
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.close()
    with HookStore(state_dir / "hooks.sqlite3") as store:
        events = list(store.events())
        assert not any(store.unprocessed(f"crash-{i}") for i in range(CLIENTS))
        stored_decisions = {(d.session_id, d.call_id): (d.action, d.level, d.reasons) for d in store.decisions()}
    stored = {(e.session_id, e.payload.strip()) for e in events}
    # Every answered event is in the store: those the engine answered were committed before the answer, and
    # those it could not answer were stored by the hook itself.
    missing = [a for a in answered if (a["event"]["session_id"], json.dumps(a["event"])) not in stored]
    assert missing == []
    unchecked = [a for a in answered if "could not check" in json.dumps(a["answer"])]
    assert all(a["event"]["hook_event_name"] == "PreToolUse" for a in unchecked)
    # The decisions stored, live and on recovery, are those of a sequential replay of the stored events.
    for i in range(CLIENTS):
        payloads = [e.payload for e in events if e.session_id == f"crash-{i}"]
        replayed = replay_decisions(payloads)
        assert replayed, "no decisions"
        assert {c: d for (sid, c), d in stored_decisions.items() if sid == f"crash-{i}"} == replayed
    assert len(stored_decisions) == sum(1 for a in answered if a["event"]["hook_event_name"] == "PreToolUse")
    actions = {d[0] for d in stored_decisions.values()}
    assert actions == {"allow", "confirm"}
    # A hook that the engine answered gets the stored decision.
    answers_by_call = {
        (a["event"]["session_id"], a["event"]["tool_use_id"]): a["answer"]
        for a in answered
        if a["event"]["hook_event_name"] == "PreToolUse"
    }
    for call_id, answer in answers_by_call.items():
        if "could not check" in json.dumps(answer):
            continue
        expected = {"allow": {}, "confirm": "ask"}[stored_decisions[call_id][0]]
        got = answer if answer == {} else answer["hookSpecificOutput"]["permissionDecision"]
        assert got == expected, call_id
