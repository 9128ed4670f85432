"""Schema versions: an older store is brought up to date keeping every event; a newer one is refused."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from support.sqlite_files import run_sql

from monitor.errors import InputError
from monitor.store import SCHEMA_VERSION, HookStore, StoredDecision, StoredEvent, StoredSession

# The schema of version 1 as it was released (kept here apart from the code, which may change).
VERSION_1 = """
CREATE TABLE events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    event TEXT NOT NULL,
    received REAL NOT NULL,
    payload TEXT NOT NULL
);
CREATE INDEX events_by_session ON events (session_id, seq);
CREATE TABLE decisions (
    seq INTEGER PRIMARY KEY REFERENCES events (seq),
    session_id TEXT NOT NULL,
    call_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    action TEXT NOT NULL CHECK (action IN ('allow', 'confirm', 'deny')),
    level TEXT NOT NULL,
    reasons TEXT NOT NULL,
    message TEXT NOT NULL
);
CREATE INDEX decisions_by_session ON decisions (session_id, seq);
PRAGMA application_id = 1414678854;  -- 0x54524946, "TRIF"
PRAGMA user_version = 1;
"""

# (session, event, received, payload, decision as (call_id, action, level) or None)
V1_EVENTS = [
    ("a", "SessionStart", 10.0, {"cwd": "/a/one"}, None),
    ("b", "SessionStart", 11.0, {"cwd": "/b"}, None),
    ("a", "PreToolUse", 12.0, {"cwd": "/a/two", "tool_name": "Read"}, ("c1", "allow", "partial")),
    ("a", "PostToolUse", 13.0, {"cwd": 5}, None),
    ("b", "PreToolUse", 14.0, "not json at all", ("c2", "deny", "trifecta")),
    ("a", "PreToolUse", 15.0, {"tool_name": "Bash"}, ("c3", "confirm", "armed")),
    ("b", "PreToolUse", 16.0, ["a", "list"], ("c4", "allow", "exfiltration")),
    ("a", "SessionEnd", 17.0, {"reason": "exit"}, None),
    ("c", "SessionEnd", 8.0, {"cwd": "/c"}, None),
    ("c", "SessionStart", 9.0, {"source": "resume"}, None),  # ended, then resumed: open
]


def _text(payload: object) -> str:
    return payload if isinstance(payload, str) else json.dumps(payload)


def _make_version_1(path: Path) -> None:
    raw = sqlite3.connect(path)
    raw.executescript(VERSION_1)
    for session, event, received, payload, decision in V1_EVENTS:
        cursor = raw.execute(
            "INSERT INTO events (session_id, event, received, payload) VALUES (?, ?, ?, ?)",
            (session, event, received, _text(payload)),
        )
        if decision is not None:
            call_id, action, level = decision
            raw.execute(
                "INSERT INTO decisions VALUES (?, ?, ?, 'Bash', ?, ?, ?, 'why')",
                (cursor.lastrowid, session, call_id, action, level, json.dumps(["r"])),
            )
    raw.commit()
    raw.close()


V1_SESSIONS = [
    StoredSession("a", 10.0, 17.0, 5, 2, "armed", "confirm", True, "/a/two"),
    StoredSession("b", 11.0, 16.0, 3, 2, "exfiltration", "deny", False, "/b"),
    StoredSession("c", 8.0, 9.0, 2, 0, "", "", False, "/c"),
]


def _expected_events() -> list[StoredEvent]:
    return [StoredEvent(i + 1, s, e, r, _text(p), True) for i, (s, e, r, p, _) in enumerate(V1_EVENTS)]


def test_a_version_1_store_is_migrated_keeping_every_event(tmp_path: Path) -> None:
    path = tmp_path / "hooks.sqlite3"
    _make_version_1(path)
    with HookStore(path) as store:
        assert store.schema_version == SCHEMA_VERSION == 3
        assert store.private_writes("/a/two") == []  # version 3's table, empty
        assert list(store.events()) == _expected_events()
        assert [(d.seq, d.call_id, d.action, d.reasons) for d in store.decisions()] == [
            (3, "c1", "allow", ("r",)),
            (5, "c2", "deny", ("r",)),
            (6, "c3", "confirm", ("r",)),
            (7, "c4", "allow", ("r",)),
        ]
        assert sorted(store.sessions(), key=lambda s: s.session_id) == V1_SESSIONS
        assert store.unprocessed("a") == []
        # The migrated store goes on from where it was.
        seq = store.append(
            "b",
            "PreToolUse",
            "{}",
            received=20.0,
            decision=StoredDecision(0, "", "c5", "X", "confirm", "armed", (), "m"),
        )
        assert seq == len(V1_EVENTS) + 1
        b = store.session("b")
        assert b is not None and (b.events, b.calls, b.worst_action, b.level) == (4, 3, "deny", "armed")
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    raw.close()


def test_a_version_1_store_opened_read_only_is_read_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "hooks.sqlite3"
    _make_version_1(path)
    before = path.read_bytes()
    with HookStore(path, read_only=True) as store:
        assert store.schema_version == 1
        assert list(store.events()) == _expected_events()
        assert len(list(store.decisions("b"))) == 2
        assert store.sessions() == sorted(V1_SESSIONS, key=lambda s: -s.last_seen)
        assert store.unprocessed("a") == []
    assert path.read_bytes() == before


def test_a_migration_that_fails_leaves_the_store_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "hooks.sqlite3"
    _make_version_1(path)
    run_sql(path, "CREATE TABLE sessions (stale TEXT)")  # in the way of version 2
    with pytest.raises(InputError) as caught:
        HookStore(path)
    assert caught.value.source == str(path)
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA user_version").fetchone()[0] == 1
    columns = [row[1] for row in raw.execute("PRAGMA table_info(events)")]
    assert "processed" not in columns
    assert raw.execute("SELECT count(*) FROM events").fetchone()[0] == len(V1_EVENTS)
    raw.close()


@pytest.mark.parametrize("read_only", [False, True])
def test_a_store_of_a_newer_version_is_refused_and_left_untouched(tmp_path: Path, read_only: bool) -> None:
    path = tmp_path / "hooks.sqlite3"
    _make_version_1(path)
    run_sql(path, f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    before = path.read_bytes()
    with pytest.raises(InputError) as caught:
        HookStore(path, read_only=read_only)
    message = str(caught.value)
    assert message.startswith(f"{path}: ")
    assert f"schema {SCHEMA_VERSION + 1}" in message and f"reads up to {SCHEMA_VERSION}" in message
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["hooks.sqlite3"]  # no -wal, no -journal


def test_a_private_write_is_kept_by_project_and_a_later_write_of_the_file_replaces_it(tmp_path: Path) -> None:
    """One row per file of a project; the newest first; another project sees none of them."""
    with HookStore(tmp_path / "hooks.sqlite3") as store:
        store.record_private_write("/p", "/p/notes.md", "s1", "c1", "GITHUB_TOKEN=ghp_…", written=1.0)
        store.record_private_write("/p", "/p/out.txt", "s1", "c2", "passport X44…", written=2.0)
        store.record_private_write("/p", "/p/notes.md", "s2", "c9", "token again", written=3.0)
        assert [(w.path, w.session_id, w.call_id) for w in store.private_writes("/p")] == [
            ("/p/notes.md", "s2", "c9"),
            ("/p/out.txt", "s1", "c2"),
        ]
        assert store.private_writes("/other") == []
