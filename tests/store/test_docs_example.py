"""The store's documented example (docs/examples/hosts/hook_store_report.py) and sqlite3 queries, run."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from monitor.store import HookStore, StoredDecision

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "hosts" / "hook_store_report.py"


def _fill(path: Path) -> None:
    with HookStore(path) as store:
        start = {"session_id": "s1", "hook_event_name": "SessionStart", "cwd": "/home/user/project"}
        store.append("s1", "SessionStart", json.dumps(start), received=1_780_000_000.0)
        call = {"session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": "Bash"}
        ask = StoredDecision(0, "s1", "toolu_1", "Bash", "confirm", "trifecta", ("trifecta",), "asks: it sends out")
        store.append("s1", "PreToolUse", json.dumps(call), received=1_780_000_001.0, decision=ask, level="trifecta")
        store.append("s1", "PostToolUse", "{}", received=1_780_000_002.0, processed=False)


def test_the_report_example_prints_sessions_decisions_and_waiting_events(tmp_path: Path) -> None:
    path = tmp_path / "hooks.sqlite3"
    _fill(path)
    done = subprocess.run([sys.executable, str(EXAMPLE), str(path)], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == [
        "s1  last seen 2026-05-28 20:26:42 UTC  open  level=trifecta  worst=confirm  calls=1  events=3  "
        "cwd=/home/user/project",
        "  #2 confirm Bash: asks: it sends out",
        "  1 event(s) not yet processed by the engine",
    ]


def test_the_report_example_reads_the_default_store_and_names_a_missing_one(tmp_path: Path) -> None:
    env = {**os.environ, "TRIFECTA_STATE_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 2
    assert done.stderr == f"error: {tmp_path / 'hooks.sqlite3'}: no such store file\n"
    _fill(tmp_path / "hooks.sqlite3")
    done = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.startswith("s1  last seen")


def test_the_documented_sqlite3_queries_run(tmp_path: Path) -> None:
    path = tmp_path / "hooks.sqlite3"
    _fill(path)
    raw = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    sessions = raw.execute(
        "SELECT session_id, datetime(last_seen, 'unixepoch'), level, worst_action, calls, ended, cwd "
        "FROM sessions ORDER BY last_seen DESC"
    ).fetchall()
    assert sessions == [("s1", "2026-05-28 20:26:42", "trifecta", "confirm", 1, 0, "/home/user/project")]
    asked = raw.execute(
        "SELECT seq, tool, action, message FROM decisions WHERE session_id = ? AND action != 'allow' ORDER BY seq",
        ("s1",),
    ).fetchall()
    assert asked == [(2, "Bash", "confirm", "asks: it sends out")]
    payload = raw.execute(
        "SELECT json_extract(payload, '$.tool_name') FROM events WHERE seq = 2",
    ).fetchone()
    assert payload == ("Bash",)
    reasons = raw.execute("SELECT value FROM decisions, json_each(decisions.reasons) WHERE seq = 2").fetchall()
    assert reasons == [("trifecta",)]
    waiting = raw.execute("SELECT count(*) FROM events WHERE processed = 0").fetchone()
    assert waiting == (1,)
    raw.close()
