"""Spans to events: tool-span detection and reading in three flavours, sessions, dedup, streaming assembly."""

from __future__ import annotations

import itertools
from typing import Any

import orjson
import pytest

from monitor.models._events import ToolCall, ToolResult, ToolsListed, UserMessage
from monitor.models._records import Record, RecordError, SessionEnd
from monitor.spans import (
    UNKNOWN_SERVER,
    ParseCache,
    SpanAssembler,
    SpanKind,
    SpanRecord,
    StatusCode,
    assemble_trace,
    convert_readable_span,
    extract_span_facts,
    extract_tool_facts,
    extract_tool_lists,
    extract_user_texts,
    is_tool_span,
    read_session_key,
)

TRACE = "0af7651916cd43dd8448eb211c80319c"
_ids = itertools.count(1)


def span(
    span_id: str | None = None,
    parent: str | None = None,
    *,
    trace_id: str = TRACE,
    name: str = "span",
    start: int | None = 1_000,
    end: int | None = 2_000,
    status: StatusCode = StatusCode.UNSET,
    resource: dict[str, Any] | None = None,
    **attributes: Any,
) -> SpanRecord:
    """A span; keyword attributes use ``__`` for ``.`` (``gen_ai__tool__name``)."""
    return SpanRecord(
        trace_id=trace_id,
        span_id=span_id or f"{next(_ids):016x}",
        parent_span_id=parent,
        name=name,
        kind=SpanKind.INTERNAL,
        start_time_ns=start,
        end_time_ns=end,
        attributes={k.replace("__", "."): v for k, v in attributes.items()},
        resource_attributes=resource or {},
        status_code=status,
    )


def attrs(**attributes: Any) -> dict[str, Any]:
    return {k.replace("__", "."): v for k, v in attributes.items()}


def facts_of(*records: SpanRecord) -> dict[str, Any]:
    return {r.span_id: extract_span_facts(r) for r in records}


def events(records: list[Record]) -> list[Record]:
    return [r for r in records if not isinstance(r, RecordError | SessionEnd)]


def run(assembler: SpanAssembler, spans: list[SpanRecord], drain_each: bool = False) -> list[Record]:
    out: list[Record] = []
    for s in spans:
        assembler.add(s, "test:1")
        if drain_each:
            out.extend(assembler.drain())
    out.extend(assembler.drain())
    out.extend(assembler.finish())
    return out


# -- which spans are tool calls ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "attributes",
    [
        {"gen_ai.operation.name": "execute_tool"},
        {"mcp.method.name": "tools/call"},
        {"openinference.span.kind": "TOOL"},
        {"openinference.span.kind": "tool"},
        {"traceloop.span.kind": "tool"},
    ],
)
def test_tool_spans_of_every_flavour_are_detected(attributes: dict[str, Any]) -> None:
    assert is_tool_span(attributes)


@pytest.mark.parametrize(
    "attributes",
    [
        {"gen_ai.operation.name": "chat"},
        {"mcp.method.name": "tools/list"},
        {"openinference.span.kind": "LLM"},
        {"traceloop.span.kind": "workflow"},
        {"tool.name": "search"},
        {},
    ],
)
def test_other_spans_are_not_tool_calls(attributes: dict[str, Any]) -> None:
    assert not is_tool_span(attributes)


# -- reading a tool span -------------------------------------------------------------------------------


def test_genai_tool_span_is_read() -> None:
    facts = extract_tool_facts(
        span(
            gen_ai__operation__name="execute_tool",
            gen_ai__tool__name="mcp__github__list_issues",
            gen_ai__tool__call__id="call_1",
            gen_ai__tool__call__arguments='{"owner": "acme", "repo": "site"}',
            gen_ai__tool__call__result='{"issues": []}',
        )
    )
    assert (facts.tool, facts.prefix_server, facts.call_id) == ("list_issues", "github", "call_1")
    assert facts.arguments == {"owner": "acme", "repo": "site"}
    assert facts.result == {"issues": []}
    assert facts.is_error is False


def test_structured_arguments_and_results_are_kept_as_they_are() -> None:
    facts = extract_tool_facts(
        span(
            gen_ai__operation__name="execute_tool",
            gen_ai__tool__name="lookup",
            gen_ai__tool__call__arguments={"q": "x", "n": [1, 2]},
            gen_ai__tool__call__result=[{"type": "text", "text": "hi"}],
        )
    )
    assert facts.arguments == {"q": "x", "n": [1, 2]}
    assert facts.result == [{"type": "text", "text": "hi"}]


def test_missing_arguments_and_results_are_none() -> None:
    facts = extract_tool_facts(span(gen_ai__operation__name="execute_tool", gen_ai__tool__name="lookup"))
    assert facts.arguments is None
    assert facts.result is None
    assert facts.call_id is None


def test_arguments_that_are_not_an_object_are_wrapped_and_plain_results_kept() -> None:
    facts = extract_tool_facts(
        span(
            gen_ai__operation__name="execute_tool",
            gen_ai__tool__name="echo",
            gen_ai__tool__call__arguments="just some text",
            gen_ai__tool__call__result="plain output, not JSON",
        )
    )
    assert facts.arguments == {"input": "just some text"}
    assert facts.result == "plain output, not JSON"


def test_doubly_encoded_json_arguments_are_decoded() -> None:
    inner = orjson.dumps({"a": 1}).decode()
    facts = extract_tool_facts(
        span(
            gen_ai__operation__name="execute_tool",
            gen_ai__tool__name="t",
            gen_ai__tool__call__arguments=orjson.dumps(inner).decode(),
        )
    )
    assert facts.arguments == {"a": 1}


def test_tool_name_falls_back_to_the_span_name() -> None:
    assert (
        extract_tool_facts(span(name="execute_tool send_email", gen_ai__operation__name="execute_tool")).tool
        == "send_email"
    )
    assert extract_tool_facts(span(name="tools/call get-weather", mcp__method__name="tools/call")).tool == "get-weather"
    assert extract_tool_facts(span(name="search.tool", traceloop__span__kind="tool")).tool == "search"


def test_openinference_tool_span_is_read() -> None:
    facts = extract_tool_facts(
        span(
            openinference__span__kind="TOOL",
            tool__name="get_weather",
            tool_call__id="call_62136355",
            input__value='{"city": "London"}',
            output__value="Rainy, 12 degrees",
            tool__parameters='{"type": "object", "properties": {"city": {"type": "string"}}}',
        )
    )
    assert (facts.tool, facts.call_id) == ("get_weather", "call_62136355")
    assert facts.arguments == {"city": "London"}
    assert facts.result == "Rainy, 12 degrees"


def test_openinference_tool_id_and_function_arguments_are_read() -> None:
    facts = extract_tool_facts(
        span(
            openinference__span__kind="TOOL",
            tool__name="t",
            tool__id="call_9",
            tool_call__function__arguments='{"x": 1}',
        )
    )
    assert facts.call_id == "call_9"
    assert facts.arguments == {"x": 1}


def test_openinference_tool_parameters_are_arguments_unless_they_are_a_schema() -> None:
    values = extract_tool_facts(
        span(openinference__span__kind="TOOL", tool__name="t", tool__parameters='{"query": "llamas"}')
    )
    assert values.arguments == {"query": "llamas"}
    schema = extract_tool_facts(
        span(openinference__span__kind="TOOL", tool__name="t", tool__parameters='{"query": {"type": "string"}}')
    )
    assert schema.arguments is None


def test_traceloop_tool_spans_are_read_in_both_input_shapes() -> None:
    decorated = extract_tool_facts(
        span(
            traceloop__span__kind="tool",
            traceloop__entity__name="send_email",
            traceloop__entity__input='{"args": ["x"], "kwargs": {"to": "a@b.example"}}',
            traceloop__entity__output='{"sent": true}',
        )
    )
    assert decorated.tool == "send_email"
    assert decorated.arguments == {"to": "a@b.example", "args": ["x"]}
    assert decorated.result == {"sent": True}
    mcp = extract_tool_facts(
        span(
            traceloop__span__kind="tool",
            traceloop__entity__name="query",
            traceloop__entity__input='{"tool_name": "query", "arguments": {"sql": "SELECT 1"}}',
            traceloop__workflow__name="postgres.mcp",
        )
    )
    assert mcp.arguments == {"sql": "SELECT 1"}
    assert mcp.explicit_server == "postgres"


def test_per_argument_mcp_attributes_are_gathered() -> None:
    facts = extract_tool_facts(
        span(
            mcp__method__name="tools/call",
            mcp__tool__name="weather",
            mcp__request__id="7",
            **{"mcp.request.argument.location": '"London"', "mcp.request.argument.days": "3"},
            mcp__tool__result__content="Sunny",
        )
    )
    assert facts.tool == "weather"
    assert facts.arguments == {"location": "London", "days": "3"}
    assert facts.rpc_id == "7"
    assert facts.result == "Sunny"


def test_errors_come_from_status_or_error_type() -> None:
    base = {"gen_ai__operation__name": "execute_tool", "gen_ai__tool__name": "t"}
    assert extract_tool_facts(span(status=StatusCode.ERROR, **base)).is_error
    assert extract_tool_facts(span(error__type="tool_error", **base)).is_error
    assert not extract_tool_facts(span(status=StatusCode.OK, **base)).is_error


# -- user messages and tool lists ----------------------------------------------------------------------


def test_user_texts_from_genai_messages_only_for_role_user() -> None:
    messages = [
        {"role": "system", "parts": [{"type": "text", "content": "be nice"}]},
        {"role": "user", "parts": [{"type": "text", "content": "hello"}, {"type": "text", "content": "there"}]},
        {"role": "assistant", "parts": [{"type": "text", "content": "hi"}]},
        {"role": "user", "content": "legacy string content"},
    ]
    assert extract_user_texts(attrs(gen_ai__input__messages=orjson.dumps(messages).decode())) == (
        "hello\nthere",
        "legacy string content",
    )
    assert extract_user_texts(attrs(gen_ai__input__messages=messages)) == ("hello\nthere", "legacy string content")


def test_user_texts_from_openinference_and_traceloop() -> None:
    openinference = {
        "llm.input_messages.0.message.role": "system",
        "llm.input_messages.0.message.content": "rules",
        "llm.input_messages.1.message.role": "user",
        "llm.input_messages.1.message.content": "what is on my calendar?",
        "llm.input_messages.2.message.role": "user",
        "llm.input_messages.2.message.contents.0.message_content.type": "text",
        "llm.input_messages.2.message.contents.0.message_content.text": "and tomorrow",
        "llm.input_messages.2.message.contents.1.message_content.type": "image",
    }
    assert extract_user_texts(openinference) == ("what is on my calendar?", "and tomorrow")
    traceloop = {
        "gen_ai.prompt.0.role": "system",
        "gen_ai.prompt.0.content": "rules",
        "gen_ai.prompt.1.role": "user",
        "gen_ai.prompt.1.content": '[{"type": "text", "text": "send the report"}]',
    }
    assert extract_user_texts(traceloop) == ("send the report",)


def test_tool_definitions_are_grouped_by_server_as_mcp_tools() -> None:
    definitions = [
        {
            "type": "function",
            "name": "mcp__github__list_issues",
            "description": "List issues",
            "parameters": {"type": "object"},
            "annotations": {"readOnlyHint": True},
        },
        {"type": "function", "name": "mcp__supabase__execute_sql", "description": "Run SQL", "parameters": {}},
        {"type": "function", "name": "local_helper", "description": "A function"},
    ]
    lists = extract_tool_lists(attrs(gen_ai__tool__definitions=orjson.dumps(definitions).decode()))
    assert lists == (
        (
            "github",
            (
                {
                    "name": "list_issues",
                    "description": "List issues",
                    "inputSchema": {"type": "object"},
                    "annotations": {"readOnlyHint": True},
                },
            ),
        ),
        ("supabase", ({"name": "execute_sql", "description": "Run SQL", "inputSchema": {}},)),
        (UNKNOWN_SERVER, ({"name": "local_helper", "description": "A function"},)),
    )


def test_tool_lists_from_openinference_and_traceloop() -> None:
    openinference = {
        "llm.tools.0.tool.json_schema": orjson.dumps(
            {
                "type": "function",
                "function": {
                    "name": "mcp__fetch__fetch",
                    "description": "Fetch a URL",
                    "parameters": {"type": "object"},
                },
            }
        ).decode(),
        "llm.tools.1.tool.name": "mcp__fetch__head",
        "llm.tools.1.tool.description": "HEAD a URL",
    }
    assert extract_tool_lists(openinference) == (
        (
            "fetch",
            (
                {"name": "fetch", "description": "Fetch a URL", "inputSchema": {"type": "object"}},
                {"name": "head", "description": "HEAD a URL"},
            ),
        ),
    )
    traceloop = {
        "llm.request.functions.0.name": "get_weather",
        "llm.request.functions.0.parameters": '{"type": "object"}',
    }
    assert extract_tool_lists(traceloop) == (
        (UNKNOWN_SERVER, ({"name": "get_weather", "inputSchema": {"type": "object"}},)),
    )


def test_repeated_definitions_are_parsed_once() -> None:
    cache = ParseCache()
    raw = orjson.dumps([{"type": "function", "name": "mcp__s__t", "description": "d"}]).decode()
    first = extract_tool_lists({"gen_ai.tool.definitions": raw}, cache)
    second = extract_tool_lists({"gen_ai.tool.definitions": raw}, cache)
    assert first is second


# -- sessions ------------------------------------------------------------------------------------------


def test_session_key_precedence_on_one_span() -> None:
    every = {
        "traceloop.association.properties.session_id": "tl",
        "langfuse.session.id": "lf",
        "session.id": "oi",
        "gen_ai.conversation.id": "conv",
    }
    assert read_session_key(every) == "conv"
    del every["gen_ai.conversation.id"]
    assert read_session_key(every) == "oi"
    del every["session.id"]
    assert read_session_key(every) == "lf"
    del every["langfuse.session.id"]
    assert read_session_key(every) == "tl"
    assert read_session_key({"session.id": ""}) is None


def tool_span(span_id: str, parent: str | None, name: str = "lookup", **extra: Any) -> SpanRecord:
    return span(span_id, parent, gen_ai__operation__name="execute_tool", gen_ai__tool__name=name, **extra)


def test_sessions_come_from_the_nearest_ancestor_even_when_children_come_first() -> None:
    root = span("a" * 16, None, session__id="outer")
    middle = span("b" * 16, "a" * 16, gen_ai__conversation__id="inner")
    leaf = tool_span("c" * 16, "b" * 16)
    sibling = tool_span("d" * 16, "a" * 16)
    assembly = assemble_trace(TRACE, facts_of(leaf, sibling, middle, root))  # children first
    sessions = {call.span_ids[0]: call.session_id for call in assembly.calls}
    assert sessions == {"c" * 16: "inner", "d" * 16: "outer"}


def test_session_falls_back_to_resource_then_trace_id() -> None:
    with_resource = tool_span("1" * 16, "2" * 16, resource={"session.id": "from-resource"})
    parent = span("2" * 16, None, resource={"session.id": "root-resource"})
    assembly = assemble_trace(TRACE, facts_of(with_resource, parent))
    assert [c.session_id for c in assembly.calls] == ["root-resource"]
    orphan = tool_span("3" * 16, "9" * 16)  # its parent is not in the trace
    assert [c.session_id for c in assemble_trace(TRACE, facts_of(orphan)).calls] == [TRACE]


# -- one call, several spans ---------------------------------------------------------------------------


def test_agent_mcp_client_and_mcp_server_spans_are_one_call() -> None:
    agent = span("a" * 16, None, gen_ai__conversation__id="s1")
    execute = tool_span(
        "b" * 16,
        "a" * 16,
        name="mcp__github__create_pull_request",
        gen_ai__tool__call__id="toolu_1",
        gen_ai__tool__call__arguments='{"title": "x"}',
        start=100,
        end=900,
    )
    client = span(
        "c" * 16,
        "b" * 16,
        mcp__method__name="tools/call",
        gen_ai__tool__name="create_pull_request",
        jsonrpc__request__id="4",
        start=110,
        end=890,
    )
    server = span(
        "d" * 16,
        "c" * 16,
        mcp__method__name="tools/call",
        gen_ai__tool__name="create_pull_request",
        jsonrpc__request__id="4",
        gen_ai__tool__call__result='{"url": "https://example.com/pr/1"}',
        mcp__server__name="github-enterprise",
        error__type="tool_error",
        start=120,
        end=880,
    )
    assembly = assemble_trace(TRACE, facts_of(server, client, execute, agent))
    assert len(assembly.calls) == 1
    call = assembly.calls[0]
    assert call.span_ids == ("b" * 16, "c" * 16, "d" * 16)
    assert (call.call_id, call.tool, call.server, call.session_id) == (
        "toolu_1",
        "create_pull_request",
        "github-enterprise",
        "s1",
    )
    assert call.arguments == {"title": "x"}
    assert call.result == {"url": "https://example.com/pr/1"}
    assert call.is_error is True
    assert (call.start_ns, call.end_ns) == (100, 900)


def test_a_tool_that_calls_another_tool_makes_two_calls() -> None:
    outer = tool_span("a" * 16, None, name="research", gen_ai__tool__call__id="c1")
    inner = tool_span("b" * 16, "a" * 16, name="web_search", gen_ai__tool__call__id="c2")
    inner_mcp = span("c" * 16, "b" * 16, mcp__method__name="tools/call", gen_ai__tool__name="web_search")
    calls = assemble_trace(TRACE, facts_of(inner_mcp, inner, outer)).calls
    assert sorted((c.tool, c.call_id) for c in calls) == [("research", "c1"), ("web_search", "c2")]


def test_spans_with_the_same_call_id_are_one_call() -> None:
    one = tool_span(
        "a" * 16, None, name="search", gen_ai__tool__call__id="call_7", gen_ai__tool__call__arguments='{"q": 1}'
    )
    two = span(
        "b" * 16,
        None,
        openinference__span__kind="TOOL",
        tool__name="search",
        tool_call__id="call_7",
        output__value="ok",
    )
    calls = assemble_trace(TRACE, facts_of(two, one)).calls
    assert len(calls) == 1
    assert (calls[0].arguments, calls[0].result) == ({"q": 1}, "ok")


def test_call_ids_given_then_rpc_ids_then_made_up_from_the_span() -> None:
    given = tool_span("a" * 16, None, gen_ai__tool__call__id="toolu_x")
    rpc = span("b" * 16, None, mcp__method__name="tools/call", gen_ai__tool__name="x", jsonrpc__request__id="12")
    nothing = tool_span("c" * 16, None, name="other")
    calls = {c.span_ids[0]: c.call_id for c in assemble_trace(TRACE, facts_of(given, rpc, nothing)).calls}
    assert calls == {"a" * 16: "toolu_x", "b" * 16: "12", "c" * 16: "c" * 16}


def test_server_order_explicit_then_prefix_then_address_then_unknown() -> None:
    def server_of(**extra: Any) -> str:
        return assemble_trace(TRACE, facts_of(tool_span("a" * 16, None, **extra))).calls[0].server

    assert server_of(name="mcp__github__x", mcp__server__name="gh", server__address="h.example") == "gh"
    assert server_of(name="mcp__github__x", server__address="h.example") == "github"
    assert server_of(name="x", server__address="h.example") == "h.example"
    assert server_of(name="x") == UNKNOWN_SERVER


# -- streaming -----------------------------------------------------------------------------------------


def test_a_trace_becomes_events_once_its_root_arrives() -> None:
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


def test_calls_and_results_follow_span_times() -> None:
    root = span("a" * 16, None, session__id="s", start=0, end=100)
    first = tool_span("b" * 16, "a" * 16, name="one", start=10, end=50)
    second = tool_span("c" * 16, "a" * 16, name="two", start=20, end=30)
    instant = tool_span("d" * 16, "a" * 16, name="three", start=60, end=60)
    out = events(run(SpanAssembler(), [instant, second, first, root]))
    order = [(type(e).__name__, getattr(e, "call_id", None)) for e in out]
    assert order == [
        ("ToolCall", "b" * 16),
        ("ToolCall", "c" * 16),
        ("ToolResult", "c" * 16),
        ("ToolResult", "b" * 16),
        ("ToolCall", "d" * 16),
        ("ToolResult", "d" * 16),
    ]


def test_user_messages_and_tool_lists_are_emitted_once_per_session() -> None:
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
    out = events(run(SpanAssembler(), spans))
    assert [type(e) for e in out] == [ToolsListed, UserMessage]


def test_a_rootless_trace_is_emitted_after_the_idle_window_and_sessions_end_when_idle() -> None:
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
    assert SessionEnd(session_id="s-orphan") in out
    assert list(assembler.finish()) == []


def test_a_session_that_continues_after_it_ended_is_reported() -> None:
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


def test_a_late_child_inherits_its_session_and_a_late_duplicate_is_dropped() -> None:
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


def run_partial(assembler: SpanAssembler, spans: list[SpanRecord]) -> list[Record]:
    for s in spans:
        assembler.add(s, "f:1")
    return list(assembler.drain())


def test_the_same_span_twice_is_read_once() -> None:
    root = span("a" * 16, None, session__id="s")
    call = tool_span("b" * 16, "a" * 16)
    out = events(run(SpanAssembler(), [call, call, root, call]))
    assert [type(e) for e in out] == [ToolCall, ToolResult]


def test_buffered_spans_stay_under_the_bound() -> None:
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


# -- live SDK spans ------------------------------------------------------------------------------------


def test_sdk_spans_convert_and_assemble() -> None:
    from opentelemetry import trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource({"service.name": "agent"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    tool_attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "mcp__mail__send",
        "gen_ai.tool.call.id": "c1",
        "gen_ai.tool.call.arguments": '{"to": "x@example.com"}',
        "tags": ("a", "b"),
    }
    with (
        tracer.start_as_current_span("invoke_agent", attributes={"gen_ai.conversation.id": "live"}),
        tracer.start_as_current_span("execute_tool mcp__mail__send", attributes=tool_attributes) as tool,
    ):
        tool.set_status(trace.Status(trace.StatusCode.ERROR, "boom"))
    records = [convert_readable_span(s) for s in exporter.get_finished_spans()]
    tool_record = records[0]
    assert tool_record.kind is SpanKind.INTERNAL
    assert tool_record.status_code is StatusCode.ERROR and tool_record.status_message == "boom"
    assert tool_record.attributes["tags"] == ["a", "b"]
    assert tool_record.resource_attributes["service.name"] == "agent"
    assert records[1].parent_span_id is None and tool_record.parent_span_id == records[1].span_id
    out = events(run(SpanAssembler(), records))
    call, result = out
    assert isinstance(call, ToolCall) and (call.session_id, call.server, call.tool) == ("live", "mail", "send")
    assert call.arguments == {"to": "x@example.com"}
    assert isinstance(result, ToolResult) and result.is_error


def test_buffered_content_stays_under_the_byte_bound() -> None:
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
