"""``trifecta analyze`` on the hook store: the same sessions as the same payloads in a JSON Lines file."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from support.sqlite_files import run_sql

from monitor.cli import main
from monitor.ingest import InputFormat, Record, RecordError, SessionEnd, detect_format, read_hook_store, read_inputs
from monitor.models import ToolCall
from monitor.store import HookStore

ROOT = Path(__file__).resolve().parents[2]
HOOKS_SAMPLE = ROOT / "samples" / "claude-code" / "hooks.jsonl"
WRITER_SCRIPT = ROOT / "tests" / "store" / "store_writer.py"


def _store_lines(path: Path, lines: list[str]) -> Path:
    """Store each line as the hook would: its session, its event name, the text as it came."""
    with HookStore(path) as store:
        for i, line in enumerate(lines):
            try:
                obj = json.loads(line)
            except ValueError:
                obj = {}
            store.append(str(obj.get("session_id", "")), str(obj.get("hook_event_name", "")), line, received=1000.0 + i)
    return path


def _analyze_json(path: Path) -> dict[str, object]:
    """``trifecta analyze --format json PATH``, without the places records were read (they name the file)."""
    result = CliRunner().invoke(main, ["analyze", "--format", "json", str(path)])
    assert result.exit_code in (0, 1), result.output
    return _without_sources(json.loads(result.stdout))  # type: ignore[no-any-return]


def _without_sources(value: Any) -> Any:
    """``value`` with every ``source`` key of its objects taken out."""
    if isinstance(value, dict):
        return {k: _without_sources(v) for k, v in value.items() if k != "source"}
    if isinstance(value, list):
        return [_without_sources(v) for v in value]
    return value


def _unsourced(records: Iterable[Record]) -> list[Record]:
    """The records with the place each event was read left out (a store and a file name them apart)."""
    return [r if isinstance(r, RecordError) else r.model_copy(update={"source": None}) for r in records]


def test_analyze_reads_a_store_as_it_reads_the_same_payloads_in_a_jsonl_file(tmp_path: Path) -> None:
    lines = [line for line in HOOKS_SAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]
    store = _store_lines(tmp_path / "hooks.sqlite3", lines)
    assert detect_format(store) is InputFormat.HOOK_STORE
    from_store = _analyze_json(store)
    from_file = _analyze_json(HOOKS_SAMPLE)
    assert from_store == from_file
    sessions = from_store["sessions"]
    assert isinstance(sessions, list) and sessions and all(s["calls"] for s in sessions)
    # And record for record, as the engine receives them.
    from_store_records = list(read_inputs([store]))
    assert _unsourced(from_store_records) == _unsourced(read_inputs([HOOKS_SAMPLE]))
    # Each event names the stored payload it was read from: stored in order, payload n is line n.
    sources = [getattr(r, "source", None) for r in from_store_records if hasattr(r, "kind")]
    assert sources and all(re.fullmatch(rf"{re.escape(str(store))}#seq=\d+", s or "") for s in sources)
    lines_of = {s: int(s.rsplit("=", 1)[1]) for s in sources if s}
    from_file = [r for r in read_inputs([HOOKS_SAMPLE]) if hasattr(r, "kind")]
    assert [f"{HOOKS_SAMPLE}:{lines_of[s]}" for s in sources if s] == [getattr(r, "source", None) for r in from_file]


def test_made_up_call_ids_and_errors_match_the_jsonl_reading_but_for_their_names(tmp_path: Path) -> None:
    sid = "s-no-ids"
    lines = [
        json.dumps({"session_id": sid, "hook_event_name": "UserPromptSubmit", "prompt": "summarise the page"}),
        json.dumps({"session_id": sid, "hook_event_name": "PreToolUse", "tool_name": "WebFetch", "tool_input": {}}),
        json.dumps(
            {"session_id": sid, "hook_event_name": "PostToolUse", "tool_name": "WebFetch", "tool_response": "x"}
        ),
        json.dumps({"session_id": sid, "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {}}),
        '{"session_id": "s-no-ids", "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_name": "Read"}',
        json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash"}),
    ]
    jsonl = tmp_path / "hooks.jsonl"
    jsonl.write_text("\n".join(lines) + "\n", encoding="utf-8")
    store = _store_lines(tmp_path / "hooks.sqlite3", lines)

    def named_apart(records: Sequence[object], name: str) -> list[object]:
        return [
            RecordError(source=re.sub(rf"^{re.escape(name)}(:|#seq=)", "<source>#", r.source), message=r.message)
            if isinstance(r, RecordError)
            else r
            for r in records
        ]

    from_store = list(read_hook_store(store))
    assert named_apart(_unsourced(from_store), str(store)) == named_apart(_unsourced(read_inputs([jsonl])), str(jsonl))
    assert [r.call_id for r in from_store if isinstance(r, ToolCall)] == ["hook-line-2", "hook-line-4"]
    assert {r.source for r in from_store if isinstance(r, RecordError)} == {f"{store}#seq=5", f"{store}#seq=6"}


def test_a_payload_that_is_not_json_is_an_error_naming_its_seq_and_the_rest_is_read(tmp_path: Path) -> None:
    store = _store_lines(
        tmp_path / "hooks.sqlite3",
        [
            json.dumps({"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Read", "tool_use_id": "a"}),
            '{"session_id": "s", "hook_event_name": "PreTo',
            json.dumps({"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "b"}),
        ],
    )
    records = list(read_inputs([store]))
    errors = [r for r in records if isinstance(r, RecordError)]
    assert [(e.source, e.message.split(":")[0]) for e in errors] == [(f"{store}#seq=2", "not JSON")]
    assert [r.call_id for r in records if isinstance(r, ToolCall)] == ["a", "b"]
    assert records[-1] == SessionEnd(session_id="s", source=f"{store}#seq=3")  # the input ended after it


def test_a_file_that_cannot_be_read_as_a_store_is_one_error_and_the_next_path_is_read(tmp_path: Path) -> None:
    newer = _store_lines(tmp_path / "newer.sqlite3", ['{"session_id": "s", "hook_event_name": "Stop"}'])
    run_sql(newer, "PRAGMA user_version = 99")
    foreign = tmp_path / "foreign.sqlite3"
    run_sql(foreign, "CREATE TABLE notes (body TEXT)")
    empty = tmp_path / "empty.sqlite3"
    HookStore(empty).close()
    records = list(read_inputs([newer, foreign, empty, HOOKS_SAMPLE]))
    errors = [r for r in records if isinstance(r, RecordError)]
    assert [e.source for e in errors] == [str(newer), str(foreign), str(empty)]
    assert "schema 99" in errors[0].message
    assert "not a trifecta-monitor hook store" in errors[1].message
    assert "no hook events" in errors[2].message
    assert any(isinstance(r, ToolCall) for r in records)


def test_a_folder_holding_a_store_is_read_with_it(tmp_path: Path) -> None:
    lines = [line for line in HOOKS_SAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]
    _store_lines(tmp_path / "hooks.sqlite3", lines)
    assert _unsourced(read_inputs([tmp_path])) == _unsourced(read_inputs([HOOKS_SAMPLE]))


def test_a_store_is_read_while_hooks_write_it(tmp_path: Path) -> None:
    path = tmp_path / "hooks.sqlite3"
    writer = subprocess.Popen([sys.executable, str(WRITER_SCRIPT), str(path), "0", "400"], stdout=subprocess.PIPE)
    assert writer.stdout is not None
    writer.stdout.readline()  # the store exists and holds a first event
    seen: list[int] = []
    while writer.poll() is None or not seen:
        records = list(read_hook_store(path))
        assert not [r for r in records if isinstance(r, RecordError)]
        calls = [r for r in records if isinstance(r, ToolCall)]
        assert [c.call_id for c in calls] == [f"toolu-0-{i}" for i in range(len(calls))]  # a prefix, in order
        seen.append(len(calls))
        time.sleep(0.01)
    writer.stdout.read()
    writer.stdout.close()
    assert writer.wait() == 0
    assert seen == sorted(seen)
    assert len([r for r in read_hook_store(path) if isinstance(r, ToolCall)]) == 400
