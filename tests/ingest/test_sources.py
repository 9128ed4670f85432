"""Every event names where it was read: ``file:line``, ``file#<pointer>``, ``archive!member#messages/N``."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path
from typing import Any

from monitor.ingest import read_agentdojo, read_claude_code, read_inputs, read_jsonl, read_mcp, read_otlp
from monitor.models import RecordError, SessionEnd, ToolCall, ToolResult, ToolsListed, UserMessage

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"


def _events(records: Any) -> list[Any]:
    return [r for r in records if not isinstance(r, RecordError | SessionEnd)]


def _line(source: str | None, path: Path) -> dict[str, Any]:
    """The JSON object on the line ``source`` (``<path>:<n>``) names; fails when it names another file."""
    assert source is not None
    name, _, number = source.rpartition(":")
    assert name == str(path), source
    return json.loads(path.read_text(encoding="utf-8").splitlines()[int(number) - 1])  # type: ignore[no-any-return]


def test_native_jsonl_events_name_their_line() -> None:
    for path in sorted((SAMPLES / "sessions").glob("*.jsonl")):
        events = _events(read_jsonl(path))
        assert events
        for event in events:
            line = _line(event.source, path)
            assert line["kind"] == event.kind
            if isinstance(event, ToolCall | ToolResult):
                assert line["call_id"] == event.call_id


def test_a_line_cannot_say_where_it_was_read(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    lines = [
        {"kind": "user_message", "session_id": "s", "text": "hi", "source": "elsewhere.py:99"},
        {"kind": "tool_call", "session_id": "s", "call_id": "c", "server": "x", "tool": "t", "source": None},
    ]
    path.write_text("\n\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    events = _events(read_inputs([path]))
    assert [e.source for e in events] == [f"{path}:1", f"{path}:3"]


def test_mcp_log_events_name_the_line_of_their_message() -> None:
    path = SAMPLES / "mcp" / "calendar-invite.jsonl"
    events = _events(read_mcp(path))
    assert {type(e) for e in events} >= {ToolCall, ToolResult, ToolsListed}
    for event in events:
        line = _line(event.source, path)
        message = line.get("message", {})
        if isinstance(event, UserMessage):
            assert line["kind"] == "user_message" and line["text"] == event.text
        elif isinstance(event, ToolCall):
            assert message["method"] == "tools/call" and message["params"]["name"] == event.tool
            assert str(message["id"]) == event.call_id
        elif isinstance(event, ToolResult):
            assert "result" in message or "error" in message
            assert str(message["id"]) == event.call_id
        elif isinstance(event, ToolsListed):
            assert [t["name"] for t in message["result"]["tools"]] == [t["name"] for t in event.tools]


def test_claude_code_transcript_events_name_their_line() -> None:
    path = SAMPLES / "claude-code" / "calendar-invite.jsonl"
    events = _events(read_claude_code(path))
    assert {type(e) for e in events} >= {ToolCall, ToolResult, UserMessage}
    for event in events:
        line = _line(event.source, path)
        blocks = line["message"]["content"]
        blocks = blocks if isinstance(blocks, list) else [{"type": "text", "text": blocks}]
        if isinstance(event, ToolCall):
            assert any(b.get("type") == "tool_use" and b.get("id") == event.call_id for b in blocks)
        elif isinstance(event, ToolResult):
            assert any(b.get("type") == "tool_result" and b.get("tool_use_id") == event.call_id for b in blocks)
        elif isinstance(event, UserMessage):
            assert line["type"] == "user"


def test_claude_code_hook_events_name_their_payload_line() -> None:
    path = SAMPLES / "claude-code" / "hooks.jsonl"
    events = _events(read_claude_code(path))
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert calls
    for event in calls:
        payload = _line(event.source, path)
        assert payload["hook_event_name"] in ("PreToolUse", "PostToolUse") and payload["tool_use_id"] == event.call_id


def test_otlp_json_lines_events_name_the_line_of_their_span() -> None:
    for name in ("genai.jsonl", "openinference.jsonl"):
        path = SAMPLES / "otel" / name
        calls = [e for e in _events(read_otlp(path)) if isinstance(e, ToolCall)]
        assert calls
        for call in calls:
            assert call.tool in json.dumps(_line(call.source, path))


def test_a_whole_otlp_document_names_the_place_of_each_span(tmp_path: Path) -> None:
    source = SAMPLES / "otel" / "genai.jsonl"
    lines = source.read_text(encoding="utf-8").splitlines()
    first = {"resourceSpans": [block for line in lines for block in json.loads(line)["resourceSpans"]]}
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(first, indent=2), encoding="utf-8")  # pretty-printed: read whole
    calls = [e for e in _events(read_otlp(path)) if isinstance(e, ToolCall)]
    assert calls
    for call in calls:
        assert call.source is not None
        name, _, pointer = call.source.partition("#")
        assert name == str(path) and pointer.startswith("resourceSpans/")
        node: Any = first
        for part in pointer.split("/"):
            node = node[int(part)] if isinstance(node, list) else node[part]
        assert "spanId" in node and call.tool in json.dumps(node)


def test_agentdojo_events_name_their_file_and_message(tmp_path: Path, agentdojo_run: Any) -> None:
    run = agentdojo_run()
    path = tmp_path / "runs" / "user_task_0" / "none" / "none.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(run), encoding="utf-8")
    archive = tmp_path / "runs.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        data = path.read_bytes()
        info = tarfile.TarInfo("user_task_0/none/none.json")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    for records, prefix in ((read_agentdojo(tmp_path / "runs"), str(path)), (read_agentdojo(archive), None)):
        events = _events(records)
        assert any(isinstance(e, ToolCall) for e in events)
        for event in events:
            assert event.source is not None
            where, _, pointer = event.source.partition("#")
            assert where == (prefix or f"{archive}!user_task_0/none/none.json")
            kind, index = pointer.split("/")
            message = run["messages"][int(index)]
            assert kind == "messages"
            if isinstance(event, ToolCall):
                assert any(tc["function"] == event.tool for tc in message["tool_calls"])
            elif isinstance(event, ToolResult):
                assert message["role"] == "tool"
            else:
                assert message["role"] == "user"
