"""The native JSONL reader: one event per line, bad lines reported with file:line, sessions ended."""

from __future__ import annotations

import io
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from support.records import ended, errors_of, events_of

from monitor.analysis import analyze_records
from monitor.ingest._jsonl import read_jsonl, read_jsonl_stream
from monitor.models import (
    AssistantMessage,
    Leg,
    RecordError,
    SessionEnd,
    SessionReport,
    ToolCall,
    ToolResult,
    ToolsListed,
    UserMessage,
)
from monitor.session import SessionMonitor

Writer = Callable[..., Path]

TOOLS_LISTED = {
    "kind": "tools_listed",
    "session_id": "s1",
    "server": "mail",
    "tools": [{"name": "read_inbox", "description": "Read the inbox", "inputSchema": {"type": "object"}}],
    "trusted": True,
}
USER = {"kind": "user_message", "session_id": "s1", "text": "Summarise my inbox", "time": "2026-01-02T03:04:05Z"}
ASSISTANT = {"kind": "assistant_message", "session_id": "s1", "text": "Reading it now."}
CALL = {
    "kind": "tool_call",
    "session_id": "s1",
    "call_id": "c1",
    "server": "mail",
    "tool": "read_inbox",
    "arguments": {},
}
RESULT = {"kind": "tool_result", "session_id": "s1", "call_id": "c1", "result": {"emails": []}, "is_error": False}


def _event(kind: str, sid: str, **extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"kind": kind, "session_id": sid}
    if kind in ("user_message", "assistant_message"):
        base["text"] = "hello"
    elif kind == "tool_call":
        base.update(server="srv", tool="lookup", call_id=extra.pop("call_id", "c"))
    base.update(extra)
    return base


def test_each_event_kind_parses(tmp_path: Path, write_jsonl: Writer) -> None:
    path = write_jsonl(tmp_path / "trace.jsonl", [TOOLS_LISTED, USER, ASSISTANT, CALL, RESULT])

    records = list(read_jsonl(path))

    assert errors_of(records) == []
    events = events_of(records)
    assert [type(e) for e in events] == [ToolsListed, UserMessage, AssistantMessage, ToolCall, ToolResult]
    listed, user, assistant, call, result = events
    assert isinstance(listed, ToolsListed) and listed.server == "mail" and listed.trusted is True
    assert listed.tools == TOOLS_LISTED["tools"]
    assert isinstance(user, UserMessage) and user.text == "Summarise my inbox"
    assert user.time == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert isinstance(assistant, AssistantMessage) and assistant.text == "Reading it now."
    assert isinstance(call, ToolCall)
    assert (call.call_id, call.server, call.tool, call.arguments) == ("c1", "mail", "read_inbox", {})
    assert isinstance(result, ToolResult)
    assert (result.call_id, result.result, result.is_error) == ("c1", {"emails": []}, False)
    assert all(e.session_id == "s1" for e in events)
    assert records[-1] == SessionEnd(session_id="s1", source=str(path))  # ended where the input ended


def test_optional_fields_default(tmp_path: Path, write_jsonl: Writer) -> None:
    path = write_jsonl(
        tmp_path / "trace.jsonl",
        [
            {"kind": "tool_call", "session_id": "s", "server": "srv", "tool": "t"},
            {"kind": "tool_call", "session_id": "s", "server": "srv", "tool": "t", "call_id": "x"},
            {"kind": "tool_result", "session_id": "s", "call_id": "x"},
        ],
    )

    bare_call, call, result = events_of(list(read_jsonl(path)))

    assert isinstance(bare_call, ToolCall) and bare_call.call_id is None and bare_call.arguments is None
    assert isinstance(call, ToolCall) and call.call_id == "x"
    assert isinstance(result, ToolResult) and result.result is None and result.is_error is False


def test_result_for_a_call_never_requested_is_reported(tmp_path: Path, write_jsonl: Writer) -> None:
    path = write_jsonl(
        tmp_path / "trace.jsonl",
        [
            {"kind": "tool_call", "session_id": "s", "server": "srv", "tool": "t", "call_id": "a"},
            {"kind": "tool_result", "session_id": "s", "call_id": "b"},
            {"kind": "tool_result", "session_id": "s", "call_id": "a"},
        ],
    )

    records = list(read_jsonl(path))

    [error] = errors_of(records)
    assert error.source == f"{path}:2"
    assert "'b'" in error.message
    assert [e.call_id for e in events_of(records) if isinstance(e, ToolResult)] == ["a"]


def test_malformed_json_line_is_reported_with_its_line_and_the_rest_is_kept(
    tmp_path: Path, write_jsonl: Writer
) -> None:
    path = write_jsonl(tmp_path / "trace.jsonl", [USER, CALL, '{"kind": "tool_result", "session_id": ', RESULT])

    records = list(read_jsonl(path))

    [error] = errors_of(records)
    assert error.source == f"{path}:3"
    assert "JSON" in error.message
    assert [type(e) for e in events_of(records)] == [UserMessage, ToolCall, ToolResult]


def test_schema_invalid_line_is_reported_with_its_line_and_the_rest_is_kept(
    tmp_path: Path, write_jsonl: Writer
) -> None:
    lines: list[dict[str, Any] | str] = [
        USER,
        {"kind": "tool_call", "session_id": "s1", "tool": "no_server_given"},
        {"kind": "not_a_kind", "session_id": "s1"},
        {**USER, "unexpected": 1},
        {**USER, "session_id": ""},
        "[1, 2, 3]",
        CALL,
    ]
    path = write_jsonl(tmp_path / "trace.jsonl", lines)

    records = list(read_jsonl(path))

    errors = errors_of(records)
    assert [e.source for e in errors] == [f"{path}:{n}" for n in (2, 3, 4, 5, 6)]
    assert all(e.message.startswith("not a valid event") for e in errors)
    assert "server" in errors[0].message
    assert [type(e) for e in events_of(records)] == [UserMessage, ToolCall]


def test_blank_lines_are_ignored_but_counted_in_line_numbers(tmp_path: Path, write_jsonl: Writer) -> None:
    path = write_jsonl(tmp_path / "trace.jsonl", ["", USER, "   ", "\t", "not json", "", CALL, ""])

    records = list(read_jsonl(path))

    [error] = errors_of(records)
    assert error.source == f"{path}:5"
    assert [type(e) for e in events_of(records)] == [UserMessage, ToolCall]


def test_empty_file_is_one_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"\n\n")

    assert list(read_jsonl(path)) == [RecordError(source=str(path), message="empty file: no events in it")]


def test_stream_reader_names_the_source_in_errors() -> None:
    data = b'{"kind": "user_message", "session_id": "s", "text": "hi"}\n{oops\n'

    records = list(read_jsonl_stream(io.BytesIO(data), "stdin"))

    assert [e.source for e in errors_of(records)] == ["stdin:2"]
    assert ended(records) == ["s"]


def test_sessions_end_at_end_of_file(tmp_path: Path, write_jsonl: Writer) -> None:
    lines = [_event("user_message", "a"), _event("user_message", "b"), _event("user_message", "c")]
    path = write_jsonl(tmp_path / "trace.jsonl", lines)

    records = list(read_jsonl(path))

    assert ended(records) == ["a", "b", "c"]
    # every session ends after the last event
    first_end = next(i for i, r in enumerate(records) if isinstance(r, SessionEnd))
    assert all(isinstance(r, SessionEnd) for r in records[first_end:])
    assert len(records) == 6


def test_interleaved_sessions_end_at_end_of_file_in_first_seen_order(tmp_path: Path, write_jsonl: Writer) -> None:
    lines = [
        _event("user_message", "a"),
        _event("user_message", "b"),
        _event("tool_call", "a", call_id="a1"),
        _event("user_message", "c"),
        _event("tool_call", "b", call_id="b1"),
    ]
    path = write_jsonl(tmp_path / "trace.jsonl", lines)

    records = list(read_jsonl(path))

    assert errors_of(records) == []
    assert len(events_of(records)) == 5
    assert ended(records) == ["a", "b", "c"]


def test_least_recently_active_session_is_ended_early(tmp_path: Path, write_jsonl: Writer) -> None:
    lines = [
        _event("user_message", "a"),
        _event("user_message", "b"),
        _event("tool_call", "a", call_id="a1"),  # a is now more recent than b
        _event("user_message", "c"),  # a third open session: b, the least recently active, ends
        _event("tool_call", "c", call_id="c1"),
    ]
    path = write_jsonl(tmp_path / "trace.jsonl", lines)

    records = list(read_jsonl(path, max_open_sessions=2))

    assert errors_of(records) == []
    assert sorted(ended(records)) == ["a", "b", "c"]
    [end_b] = [i for i, r in enumerate(records) if isinstance(r, SessionEnd) and r.session_id == "b"]
    assert records[end_b].source is not None and records[end_b].source.startswith(f"{path}:")  # the line closing it
    first_c = next(i for i, r in enumerate(records) if not isinstance(r, SessionEnd) and r.session_id == "c")
    last_event = max(i for i, r in enumerate(records) if not isinstance(r, SessionEnd))
    assert end_b < first_c  # ended early, before the event that made one session too many
    assert records.index(SessionEnd(session_id="a", source=str(path))) > last_event
    assert records.index(SessionEnd(session_id="c", source=str(path))) > last_event


def test_session_reappearing_after_it_was_ended_is_reported_and_still_analysed(
    tmp_path: Path, write_jsonl: Writer
) -> None:
    lines = [
        _event("user_message", "a", text="first part of a"),
        _event("user_message", "b"),  # only one session may stay open: a ends here
        _event("tool_call", "a", call_id="late", tool="lookup"),  # a comes back (and b ends)
    ]
    path = write_jsonl(tmp_path / "trace.jsonl", lines)

    records = list(read_jsonl(path, max_open_sessions=1))

    [error] = errors_of(records)
    assert error.source == f"{path}:3"
    assert "'a'" in error.message
    assert len(events_of(records)) == 3  # the reappearing event is still yielded
    assert ended(records) == ["a", "b", "a"]

    reports = [r for r in analyze_records(records, SessionMonitor()) if isinstance(r, SessionReport)]
    assert [r.session_id for r in reports] == ["a", "b", "a"]
    first_a, _, second_a = reports
    assert first_a.calls == ()
    assert Leg.PRIVATE_DATA in first_a.legs  # the user message of the first part
    assert [c.call_id for c in second_a.calls] == ["late"]  # the later events, analysed on their own
