"""A whole trace: sessions from the nearest ancestor, one call recorded by several spans, servers and call ids."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from monitor.spans import UNKNOWN_SERVER, SpanFacts, SpanRecord, assemble_trace, extract_span_facts

SpanFactory = Callable[..., SpanRecord]

TRACE = "7f0e6a1c2b3d4e5f60718293a4b5c6d7"


def facts_of(*records: SpanRecord) -> dict[str, SpanFacts]:
    return {r.span_id: extract_span_facts(r) for r in records}


# -- sessions ------------------------------------------------------------------------------------------


def test_sessions_come_from_the_nearest_ancestor_even_when_children_come_first(
    span: SpanFactory, tool_span: SpanFactory
) -> None:
    root = span("a" * 16, None, session__id="outer")
    middle = span("b" * 16, "a" * 16, gen_ai__conversation__id="inner")
    leaf = tool_span("c" * 16, "b" * 16)
    sibling = tool_span("d" * 16, "a" * 16)
    assembly = assemble_trace(TRACE, facts_of(leaf, sibling, middle, root))  # children first
    sessions = {call.span_ids[0]: call.session_id for call in assembly.calls}
    assert sessions == {"c" * 16: "inner", "d" * 16: "outer"}


def test_session_falls_back_to_resource_then_trace_id(span: SpanFactory, tool_span: SpanFactory) -> None:
    with_resource = tool_span("1" * 16, "2" * 16, resource={"session.id": "from-resource"})
    parent = span("2" * 16, None, resource={"session.id": "root-resource"})
    assembly = assemble_trace(TRACE, facts_of(with_resource, parent))
    assert [c.session_id for c in assembly.calls] == ["root-resource"]
    orphan = tool_span("3" * 16, "9" * 16)  # its parent is not in the trace
    assert [c.session_id for c in assemble_trace(TRACE, facts_of(orphan)).calls] == [TRACE]


# -- one call, several spans ---------------------------------------------------------------------------


def test_agent_mcp_client_and_mcp_server_spans_are_one_call(span: SpanFactory, tool_span: SpanFactory) -> None:
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


def test_a_tool_that_calls_another_tool_makes_two_calls(span: SpanFactory, tool_span: SpanFactory) -> None:
    outer = tool_span("a" * 16, None, name="research", gen_ai__tool__call__id="c1")
    inner = tool_span("b" * 16, "a" * 16, name="web_search", gen_ai__tool__call__id="c2")
    inner_mcp = span("c" * 16, "b" * 16, mcp__method__name="tools/call", gen_ai__tool__name="web_search")
    calls = assemble_trace(TRACE, facts_of(inner_mcp, inner, outer)).calls
    assert sorted((c.tool, c.call_id) for c in calls) == [("research", "c1"), ("web_search", "c2")]


def test_spans_with_the_same_call_id_are_one_call(span: SpanFactory, tool_span: SpanFactory) -> None:
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


def test_call_ids_given_then_rpc_ids_then_made_up_from_the_span(span: SpanFactory, tool_span: SpanFactory) -> None:
    given = tool_span("a" * 16, None, gen_ai__tool__call__id="toolu_x")
    rpc = span("b" * 16, None, mcp__method__name="tools/call", gen_ai__tool__name="x", jsonrpc__request__id="12")
    nothing = tool_span("c" * 16, None, name="other")
    calls = {c.span_ids[0]: c.call_id for c in assemble_trace(TRACE, facts_of(given, rpc, nothing)).calls}
    assert calls == {"a" * 16: "toolu_x", "b" * 16: "12", "c" * 16: "c" * 16}


def test_server_order_explicit_then_prefix_then_address_then_unknown(tool_span: SpanFactory) -> None:
    def server_of(**extra: Any) -> str:
        return assemble_trace(TRACE, facts_of(tool_span("a" * 16, None, **extra))).calls[0].server

    assert server_of(name="mcp__github__x", mcp__server__name="gh", server__address="h.example") == "gh"
    assert server_of(name="mcp__github__x", server__address="h.example") == "github"
    assert server_of(name="x", server__address="h.example") == "h.example"
    assert server_of(name="x") == UNKNOWN_SERVER
