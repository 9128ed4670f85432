"""The hook store: what it keeps, the session summaries, threads, locks and files it refuses."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.sqlite_files import run_sql

from monitor.errors import InputError
from monitor.store import (
    SCHEMA_VERSION,
    HookStore,
    StoredDecision,
    StoredEvent,
    StoredSession,
    default_state_dir,
    default_store_path,
)


def _decision(action: str = "allow", level: str = "partial", call_id: str = "c1") -> StoredDecision:
    return StoredDecision(0, "", call_id, "Bash", action, level, ("no-external-communication",), f"{action}: why")


def _payload(session_id: str = "s1", event: str = "PreToolUse", **extra: object) -> str:
    return json.dumps({"session_id": session_id, "hook_event_name": event, **extra})


@pytest.fixture
def store(tmp_path: Path) -> Iterator[HookStore]:
    with HookStore(tmp_path / "hooks.sqlite3") as opened:
        yield opened


# -- where it lives and what importing it costs ------------------------------------------------------------


def test_importing_the_store_loads_the_standard_library_only(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "import monitor.store\n"
        "path = monitor.store.default_store_path()\n"
        "for name in sorted(set(sys.modules) - before):\n"
        "    print(name, getattr(sys.modules[name], '__file__', None) or '')\n"
    )
    env = {**os.environ, "TRIFECTA_STATE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    loaded = dict(line.partition(" ")[::2] for line in out.splitlines())
    roots = {name.split(".")[0] for name in loaded}
    assert not roots & {"pydantic", "networkx", "re2", "orjson", "platformdirs", "yaml", "click", "rich"}
    assert not [name for name, file in loaded.items() if "site-packages" in file or "dist-packages" in file]
    assert {name for name in loaded if name.startswith("monitor")} <= {
        "monitor",
        "monitor.errors",
        "monitor.store",
        "monitor.store._paths",
        "monitor.store._schema",
        "monitor.store._store",
    }


def test_the_store_lives_in_the_state_dir_the_environment_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRIFECTA_STATE_DIR", str(tmp_path / "state"))
    assert default_state_dir() == tmp_path / "state"
    assert default_store_path() == tmp_path / "state" / "hooks.sqlite3"
    assert default_store_path(tmp_path) == tmp_path / "hooks.sqlite3"
    monkeypatch.setenv("TRIFECTA_STATE_DIR", "")
    import platformdirs

    assert default_state_dir() == Path(platformdirs.user_state_dir("trifecta-monitor", appauthor=False))


def test_a_new_store_is_private_versioned_and_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "state" / "deeper" / "hooks.sqlite3"
    with HookStore(path) as opened:
        opened.append("s1", "SessionStart", _payload(event="SessionStart"), received=1.0)
        assert opened.schema_version == SCHEMA_VERSION
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        for file in path.parent.iterdir():  # the file and its -wal and -shm
            assert stat.S_IMODE(file.stat().st_mode) == 0o600, file
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert raw.execute("PRAGMA application_id").fetchone()[0] == 0x54524946
    raw.close()


# -- what it keeps -----------------------------------------------------------------------------------------


def test_events_and_decisions_come_back_exactly_and_in_order(store: HookStore) -> None:
    odd = _payload(prompt="naïve ✓ \U0001f600 \x00 after a NUL\n\r\t", cwd="/home/ü")
    big = _payload(tool_input={"content": "x" * 3_000_000})
    s1 = store.append("s1", "UserPromptSubmit", odd, received=10.5)
    s2 = store.append("s2", "PreToolUse", big, received=11.0, decision=_decision("confirm", call_id="c2"))
    s3 = store.append("s1", "PreToolUse", "  not json, kept as it came ", received=12.0, decision=_decision())
    assert s1 < s2 < s3
    assert list(store.events()) == [
        StoredEvent(s1, "s1", "UserPromptSubmit", 10.5, odd, True),
        StoredEvent(s2, "s2", "PreToolUse", 11.0, big, True),
        StoredEvent(s3, "s1", "PreToolUse", 12.0, "  not json, kept as it came ", True),
    ]
    assert [e.seq for e in store.events("s1")] == [s1, s3]
    assert [e.seq for e in store.events(after_seq=s1)] == [s2, s3]
    assert [e.seq for e in store.events("s1", after_seq=s1)] == [s3]
    assert list(store.decisions()) == [
        StoredDecision(s2, "s2", "c2", "Bash", "confirm", "partial", ("no-external-communication",), "confirm: why"),
        StoredDecision(s3, "s1", "c1", "Bash", "allow", "partial", ("no-external-communication",), "allow: why"),
    ]
    assert [d.seq for d in store.decisions("s1")] == [s3]


def test_iterating_more_than_a_page_yields_every_event_once(tmp_path: Path) -> None:
    store = HookStore(tmp_path / "hooks.sqlite3", durable=False)  # many commits: no fsync each
    seqs = [store.append(f"s{i % 3}", "PostToolUse", _payload(i=i), received=float(i)) for i in range(700)]
    assert [e.seq for e in store.events()] == seqs
    assert [e.seq for e in store.events("s1")] == seqs[1::3]
    decided = [store.append("d", "PreToolUse", "{}", received=1.0, decision=_decision()) for _ in range(300)]
    assert [d.seq for d in store.decisions()] == decided
    store.close()


def test_a_decision_is_stored_under_its_events_seq_and_session(store: HookStore) -> None:
    given = StoredDecision(999, "another-session", "c9", "Write", "deny", "trifecta", (), "no")
    seq = store.append("s1", "PreToolUse", "{}", received=1.0, decision=given)
    assert list(store.decisions()) == [StoredDecision(seq, "s1", "c9", "Write", "deny", "trifecta", (), "no")]


# -- the session summaries ---------------------------------------------------------------------------------


def test_the_session_summary_follows_each_event(store: HookStore) -> None:
    store.append("s1", "SessionStart", _payload(event="SessionStart", cwd="/a"), received=100.0)
    assert store.session("s1") == StoredSession("s1", 100.0, 100.0, 1, 0, "", "", False, "/a")
    store.append("s1", "PreToolUse", _payload(cwd="/b"), received=90.0, decision=_decision("confirm", "armed"))
    store.append("s1", "PreToolUse", _payload(cwd=7), received=110.0, decision=_decision("allow", "trifecta"))
    store.append("s1", "PostToolUse", "[1, 2]", received=105.0, level="exfiltration")
    assert store.session("s1") == StoredSession("s1", 90.0, 110.0, 4, 2, "exfiltration", "confirm", False, "/b")
    # The level given wins over the decision's; without one, the decision's is the session's.
    store.append("s1", "PreToolUse", "{}", received=111.0, decision=_decision("deny", "exfiltration"), level="armed")
    assert store.session("s1").level == "armed"  # type: ignore[union-attr]
    store.append("s1", "PreToolUse", "{}", received=112.0, decision=_decision("allow", "trifecta"))
    summary = store.session("s1")
    assert summary is not None
    assert (summary.level, summary.worst_action, summary.calls, summary.events) == ("trifecta", "deny", 4, 6)


def test_a_session_is_ended_by_its_latest_event(store: HookStore) -> None:
    store.append("s1", "SessionStart", "{}", received=1.0)
    store.append("s1", "SessionEnd", "{}", received=2.0)
    assert store.session("s1").ended  # type: ignore[union-attr]
    store.append("s1", "SessionStart", "{}", received=3.0)  # resumed
    assert not store.session("s1").ended  # type: ignore[union-attr]
    store.append("s1", "Stop", "{}", received=4.0, ended=True)
    assert store.session("s1").ended  # type: ignore[union-attr]


def test_sessions_are_listed_most_recent_first(store: HookStore) -> None:
    store.append("old", "SessionStart", "{}", received=1.0)
    store.append("new", "SessionStart", "{}", received=5.0)
    store.append("middle", "SessionStart", "{}", received=3.0)
    store.append("old", "SessionEnd", "{}", received=2.0)
    assert store.session_ids() == ["new", "middle", "old"]
    assert [s.session_id for s in store.sessions()] == ["new", "middle", "old"]
    assert store.session("nope") is None


# -- events the engine processes later ---------------------------------------------------------------------


def test_unprocessed_events_are_marked_processed_with_their_decisions(store: HookStore) -> None:
    store.append("s1", "SessionStart", "{}", received=1.0)
    first = store.append("s1", "PreToolUse", "{}", received=2.0, processed=False)
    second = store.append("s1", "PostToolUse", "{}", received=3.0, processed=False)
    other = store.append("s2", "PreToolUse", "{}", received=3.0, processed=False)
    assert [e.seq for e in store.unprocessed("s1")] == [first, second]
    assert store.session("s1").calls == 0  # type: ignore[union-attr]

    decided = StoredDecision(first, "", "c1", "Bash", "confirm", "armed", ("r",), "ask")
    store.mark_processed([second], [decided], level="trifecta")
    assert store.unprocessed("s1") == []
    assert [e.seq for e in store.unprocessed("s2")] == [other]
    assert list(store.decisions()) == [StoredDecision(first, "s1", "c1", "Bash", "confirm", "armed", ("r",), "ask")]
    after = store.session("s1")
    assert after is not None and (after.calls, after.worst_action, after.level) == (1, "confirm", "trifecta")

    store.mark_processed([first, second], [decided])  # again: nothing changes
    assert store.session("s1").calls == 1  # type: ignore[union-attr]
    assert len(list(store.decisions())) == 1


def test_marking_an_unknown_event_changes_nothing(store: HookStore) -> None:
    seq = store.append("s1", "PreToolUse", "{}", received=2.0, processed=False)
    with pytest.raises(ValueError, match="no event of seq 12345"):
        store.mark_processed([seq, 12345])
    assert [e.seq for e in store.unprocessed("s1")] == [seq]


# -- wrong arguments and closed stores ---------------------------------------------------------------------


def test_wrong_arguments_store_nothing(store: HookStore) -> None:
    with pytest.raises(ValueError, match="action"):
        store.append("s1", "PreToolUse", "{}", received=1.0, decision=_decision("ask"))
    with pytest.raises(ValueError, match="finite"):
        store.append("s1", "PreToolUse", "{}", received=float("nan"))
    with pytest.raises(ValueError, match="Unicode"):
        store.append("s1", "PreToolUse", '{"x": "\udcff"}', received=1.0)
    assert list(store.events()) == [] and store.sessions() == []
    store.close()
    store.close()
    with pytest.raises(ValueError, match="closed"):
        store.append("s1", "PreToolUse", "{}", received=1.0)


# -- threads, processes and locks --------------------------------------------------------------------------


def test_one_store_serves_several_threads(store: HookStore) -> None:
    seqs: list[int] = []

    def write(t: int) -> None:
        for i in range(50):
            seqs.append(store.append(f"s{t % 2}", "PreToolUse", _payload(t=t, i=i), received=1.0, decision=_decision()))
            list(store.events(f"s{t % 2}", after_seq=seqs[-1] - 1))

    threads = [threading.Thread(target=write, args=(t,)) for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(seqs)) == 400
    assert sorted(e.seq for e in store.events()) == sorted(seqs)
    assert sum(s.events for s in store.sessions()) == 400
    assert sum(s.calls for s in store.sessions()) == 400


def test_a_write_that_waits_beyond_the_timeout_is_an_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "hooks.sqlite3"
    with HookStore(path) as first:
        first.append("s1", "SessionStart", "{}", received=1.0)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the file
    try:
        with HookStore(path, busy_timeout=0.05) as waiting:
            with pytest.raises(InputError, match=r"locked: another process held it for more than 0\.05 s") as caught:
                waiting.append("s1", "PreToolUse", "{}", received=2.0)
            assert caught.value.source == str(path)
            assert [e.seq for e in waiting.events()] == [1]  # readers are not held up
            holder.execute("COMMIT")
            waiting.append("s1", "PreToolUse", "{}", received=2.0)
            assert [e.event for e in waiting.events()] == ["SessionStart", "PreToolUse"]
    finally:
        holder.close()


def test_a_new_store_opened_while_another_writes_it_waits_its_turn(tmp_path: Path) -> None:
    """Several hooks open a store that does not exist yet (the first events of parallel agents): turning the
    new file to WAL needs it alone, and SQLite answers "locked" at once rather than waiting for that."""
    path = tmp_path / "hooks.sqlite3"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # another opener of the new file, in its first write
    release = threading.Timer(0.5, lambda: holder.execute("COMMIT"))
    release.start()
    try:
        with HookStore(path) as store:
            store.append("s1", "UserPromptSubmit", "{}", received=1.0)
            assert [e.event for e in store.events()] == ["UserPromptSubmit"]
    finally:
        release.join()
        holder.close()


def test_a_read_only_store_reads_while_another_writes_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "hooks.sqlite3"
    with pytest.raises(InputError, match="no such store file"):
        HookStore(path, read_only=True)
    assert not path.exists()
    with HookStore(path) as writer:
        writer.append("s1", "SessionStart", "{}", received=1.0)
        with HookStore(path, read_only=True) as reader:
            writer.append("s1", "PreToolUse", "{}", received=2.0, decision=_decision())
            assert [e.event for e in reader.events()] == ["SessionStart", "PreToolUse"]
            assert reader.session_ids() == ["s1"]
            with pytest.raises(InputError, match="read-only"):
                reader.append("s1", "PreToolUse", "{}", received=3.0)
            with pytest.raises(InputError, match="read-only"):
                reader.mark_processed([1])


# -- files it refuses --------------------------------------------------------------------------------------


def test_a_file_that_is_not_a_store_is_refused_and_left_alone(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.sqlite3"
    garbage.write_bytes(b"this is not a database\n" * 200)
    foreign = tmp_path / "foreign.sqlite3"
    run_sql(foreign, "CREATE TABLE notes (body TEXT)")
    other_app = tmp_path / "other-app.sqlite3"
    run_sql(other_app, "PRAGMA application_id = 1234")
    for path, problem in [(garbage, "not a SQLite database"), (foreign, "other tables"), (other_app, "0x4d2")]:
        before = path.read_bytes()
        for read_only in (False, True):
            with pytest.raises(InputError, match=problem) as caught:
                HookStore(path, read_only=read_only)
            assert caught.value.source == str(path)
            assert str(path) in str(caught.value)
        assert path.read_bytes() == before
        assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(path.name)) == [path.name]


def test_a_damaged_store_is_an_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "hooks.sqlite3"
    with HookStore(path, durable=False) as opened:
        for i in range(200):
            opened.append("s1", "PreToolUse", _payload(i=i, pad="p" * 500), received=1.0, decision=_decision())
    raw = sqlite3.connect(path)
    raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw.close()
    data = bytearray(path.read_bytes())
    data[4096 * 3 : 4096 * 6] = b"\xa5" * (4096 * 3)  # pages of the tables, past the header
    path.write_bytes(bytes(data))
    with pytest.raises(InputError, match="damaged") as caught, HookStore(path, read_only=True) as damaged:
        list(damaged.events())
        list(damaged.decisions())
    assert caught.value.source == str(path)
