"""Spans as they arrive: a trace becomes events once complete or idle, sessions end, memory stays bounded."""

from __future__ import annotations

from collections.abc import Callable

import orjson
from support.records import events_of

from monitor.models import Record, RecordError, SessionEnd, ToolCall, ToolResult, ToolsListed, UserMessage
from monitor.spans import SpanAssembler, SpanRecord

SpanFactory = Callable[..., SpanRecord]


def run(assembler: SpanAssembler, spans: list[SpanRecord], drain_each: bool = False) -> list[Record]:
    out: list[Record] = []
    for s in spans:
        assembler.add(s, "test:1")
        if drain_each:
            out.extend(assembler.drain())
    out.extend(assembler.drain())
    out.extend(assembler.finish())
    return out


def run_partial(assembler: SpanAssembler, spans: list[SpanRecord]) -> list[Record]:
    for s in spans:
        assembler.add(s, "f:1")
    return list(assembler.drain())


def test_a_trace_becomes_events_once_its_root_arrives(span: SpanFactory, tool_span: SpanFactory) -> None:
    assembler = SpanAssembler()
    root = span("a" * 16, None, gen_ai__conversation__id="s1", start=0, end=10_000)
    chat = span(
        "b" * 16,
        "a" * 16,
        start=100,
        end=200,
        gen_ai__input__messages='[{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]',
        gen_ai__tool__definitions='[{"type": "function", "name": "mcp__srv__lookup", "description": "d"}]',
    )
    call = tool_span("c" * 16, "a" * 16, name="mcp__srv__lookup", start=300, end=400, gen_ai__tool__call__id="t1")
    for s in (chat, call):
        assembler.add(s, "f:1")
    assert list(assembler.drain()) == []
    assert assembler.buffered_spans == 2
    assembler.add(root, "f:2")
    out = list(assembler.drain())
    assert [type(e) for e in out] == [ToolsListed, UserMessage, ToolCall, ToolResult]
    assert assembler.buffered_spans == 0
    listed, user, tool_call, result = out
    assert (
        isinstance(listed, ToolsListed)
        and listed.server == "srv"
        and listed.tools == [{"name": "lookup", "description": "d"}]
    )
    assert isinstance(user, UserMessage) and user.text == "hi"
    assert isinstance(tool_call, ToolCall)
    assert (tool_call.session_id, tool_call.server, tool_call.tool, tool_call.call_id, tool_call.arguments) == (
        "s1",
        "srv",
        "lookup",
        "t1",
        None,
    )
    assert isinstance(result, ToolResult) and result.call_id == "t1" and result.result is None
    assert list(assembler.finish()) == [SessionEnd(session_id="s1")]


def test_calls_and_results_follow_span_times(span: SpanFactory, tool_span: SpanFactory) -> None:
    root = span("a" * 16, None, session__id="s", start=0, end=100)
    first = tool_span("b" * 16, "a" * 16, name="one", start=10, end=50)
    second = tool_span("c" * 16, "a" * 16, name="two", start=20, end=30)
    instant = tool_span("d" * 16, "a" * 16, name="three", start=60, end=60)
    out = events_of(run(SpanAssembler(), [instant, second, first, root]))
    order = [(type(e).__name__, getattr(e, "call_id", None)) for e in out]
    assert order == [
        ("ToolCall", "b" * 16),
        ("ToolCall", "c" * 16),
        ("ToolResult", "c" * 16),
        ("ToolResult", "b" * 16),
        ("ToolCall", "d" * 16),
        ("ToolResult", "d" * 16),
    ]


def test_user_messages_and_tool_lists_are_emitted_once_per_session(span: SpanFactory) -> None:
    messages = '[{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]'
    definitions = '[{"type": "function", "name": "mcp__srv__t", "description": "d"}]'
    spans = []
    for turn in range(2):
        root = f"{turn + 1:016x}"
        spans.append(
            span(
                root,
                None,
                gen_ai__conversation__id="s",
                start=turn * 1000,
                end=turn * 1000 + 900,
                trace_id=f"{turn + 1:032x}",
            )
        )
        for k in range(2):
            spans.append(
                span(
                    f"{turn + 1}{k + 1:015x}",
                    root,
                    trace_id=f"{turn + 1:032x}",
                    start=turn * 1000 + 10 * k + 1,
                    end=turn * 1000 + 10 * k + 5,
                    gen_ai__input__messages=messages,
                    gen_ai__tool__definitions=definitions,
                )
            )
    out = events_of(run(SpanAssembler(), spans))
    assert [type(e) for e in out] == [ToolsListed, UserMessage]


def test_a_rootless_trace_is_emitted_after_the_idle_window_and_sessions_end_when_idle(
    span: SpanFactory, tool_span: SpanFactory
) -> None:
    assembler = SpanAssembler(trace_idle_spans=3, session_idle_spans=3)
    orphan = tool_span("a" * 16, "f" * 16, trace_id="1" * 32, session__id="s-orphan")
    assembler.add(orphan, "f:1")
    assert list(assembler.drain()) == []
    out: list[Record] = []
    for i in range(8):
        assembler.add(span(f"{i + 1:016x}", None, trace_id=f"{i + 2:032x}"), f"f:{i + 2}")
        out.extend(assembler.drain())
    calls = [e for e in out if isinstance(e, ToolCall)]
    assert [c.session_id for c in calls] == ["s-orphan"]
    [end] = [e for e in out if isinstance(e, SessionEnd)]
    assert (end.session_id, end.source) == ("s-orphan", "f:8")  # named by the span whose arrival made it idle
    assert list(assembler.finish()) == []


def test_a_session_that_continues_after_it_ended_is_reported(span: SpanFactory, tool_span: SpanFactory) -> None:
    assembler = SpanAssembler(session_idle_spans=2)
    out: list[Record] = []
    for i, s in enumerate(
        [
            tool_span("a" * 16, None, trace_id="1" * 32, session__id="s"),
            span("b" * 16, None, trace_id="2" * 32),
            span("c" * 16, None, trace_id="3" * 32),
            span("d" * 16, None, trace_id="4" * 32),
            tool_span("e" * 16, None, trace_id="5" * 32, session__id="s"),
        ]
    ):
        assembler.add(s, f"f:{i + 1}")
        out.extend(assembler.drain())
    out.extend(assembler.finish())
    ends = [r.session_id for r in out if isinstance(r, SessionEnd)]
    errors = [r for r in out if isinstance(r, RecordError)]
    assert ends == ["s", "s"]
    assert len(errors) == 1 and errors[0].source == "f:5" and "continues after it ended" in errors[0].message
    assert len([e for e in out if isinstance(e, ToolCall)]) == 2


def test_a_late_child_inherits_its_session_and_a_late_duplicate_is_dropped(
    span: SpanFactory, tool_span: SpanFactory
) -> None:
    assembler = SpanAssembler()
    root = span("a" * 16, None, gen_ai__conversation__id="s1", start=0, end=1000)
    execute = tool_span("b" * 16, "a" * 16, name="mcp__gh__get", gen_ai__tool__call__id="t1", start=10, end=900)
    out = run_partial(assembler, [execute, root])
    assert [type(e) for e in out] == [ToolCall, ToolResult]
    late_server = span("c" * 16, "b" * 16, mcp__method__name="tools/call", gen_ai__tool__name="get", start=20, end=800)
    late_other = tool_span("d" * 16, "a" * 16, name="other", start=950, end=990)
    out = run_partial(assembler, [late_server, late_other]) + list(assembler.finish())
    calls = [e for e in out if isinstance(e, ToolCall)]
    assert [(c.tool, c.session_id) for c in calls] == [("other", "s1")]
    assert not [r for r in out if isinstance(r, RecordError)]


def test_the_same_span_twice_is_read_once(span: SpanFactory, tool_span: SpanFactory) -> None:
    root = span("a" * 16, None, session__id="s")
    call = tool_span("b" * 16, "a" * 16)
    out = events_of(run(SpanAssembler(), [call, call, root, call]))
    assert [type(e) for e in out] == [ToolCall, ToolResult]


def test_buffered_spans_stay_under_the_bound(tool_span: SpanFactory) -> None:
    assembler = SpanAssembler(max_buffered_spans=50, trace_idle_spans=10**9)
    peak = 0
    ends = 0
    for t in range(200):
        trace_id = f"{t + 1:032x}"
        for k in range(3):  # no root: only the bound makes these traces leave the buffer
            assembler.add(tool_span(f"{t + 1:08x}{k + 1:08x}", "f" * 16, trace_id=trace_id, session__id=f"s{t}"), "f:1")
        ends += sum(isinstance(r, SessionEnd) for r in assembler.drain())
        peak = max(peak, assembler.buffered_spans)
    assert peak <= 50
    ends += sum(isinstance(r, SessionEnd) for r in assembler.finish())
    assert ends == 200


def test_buffered_content_stays_under_the_byte_bound(tool_span: SpanFactory) -> None:
    assembler = SpanAssembler(max_buffered_bytes=20_000, trace_idle_spans=10**9)
    big = orjson.dumps({"body": "x" * 5_000}).decode()
    peak = 0
    calls = 0
    for t in range(40):
        record = tool_span(f"{t + 1:016x}", "f" * 16, trace_id=f"{t + 1:032x}", gen_ai__tool__call__result=big)
        assembler.add(record, "f:1")
        calls += sum(isinstance(r, ToolResult) and r.result == {"body": "x" * 5_000} for r in assembler.drain())
        peak = max(peak, assembler.buffered_bytes)
    assert peak <= 20_000 + 6_000  # the bound, plus the span that crossed it
    calls += sum(isinstance(r, ToolResult) for r in assembler.finish())
    assert calls == 40
