"""Which span attributes name the session and the server, and in which order.

Attribute names from the OpenTelemetry semantic conventions (open-telemetry/semantic-conventions-genai,
``docs/gen-ai/mcp.md``: ``mcp.session.id`` "when the MCP request or notification is part of a session",
``mcp.protocol.version``, ``server.address``/``server.port``; ``docs/gen-ai/gen-ai-spans.md``:
``gen_ai.conversation.id``), Traceloop (``traceloop.workflow.name`` = ``<server>.mcp`` on FastMCP servers)
and the early MCP draft as Sentry writes it (``mcp.server.name``).
"""

from __future__ import annotations

import warnings
from typing import Any

from spans.conftest import TRACE, SpanFactory

from monitor.errors import MonitorWarning
from monitor.spans import UNKNOWN_SERVER, SpanFacts, SpanRecord, assemble_trace, extract_span_facts

SESSION_ID = "191c4850af6c49e08843a3f6c80e5046"


def facts_of(*records: SpanRecord) -> dict[str, SpanFacts]:
    return {r.span_id: extract_span_facts(r) for r in records}


def mcp_attributes(version: str) -> dict[str, Any]:
    return {"mcp__method__name": "tools/call", "mcp__protocol__version": version, "mcp__session__id": SESSION_ID}


def test_a_conversation_id_anywhere_up_the_chain_beats_mcp_session_id(
    span: SpanFactory, tool_span: SpanFactory
) -> None:
    root = span("a" * 16, None, gen_ai__conversation__id="conv-1")
    call = tool_span("b" * 16, "a" * 16, **mcp_attributes("2025-06-18"))
    assembly = assemble_trace(TRACE, facts_of(call, root))
    assert assembly.calls[0].session_id == "conv-1"


def test_resource_session_beats_mcp_session_id(span: SpanFactory, tool_span: SpanFactory) -> None:
    call = tool_span("b" * 16, None, resource={"session.id": "host-session"}, **mcp_attributes("2025-06-18"))
    assert assemble_trace(TRACE, facts_of(call)).calls[0].session_id == "host-session"


def test_mcp_session_id_is_the_last_resort_before_the_trace_id(span: SpanFactory, tool_span: SpanFactory) -> None:
    root = span("a" * 16, None)
    call = tool_span("b" * 16, "a" * 16, **mcp_attributes("2025-06-18"))
    for order in ((root, call), (call, root)):
        assembly = assemble_trace(TRACE, facts_of(*order))
        assert assembly.calls[0].session_id == SESSION_ID


def test_mcp_session_id_of_a_2026_07_28_peer_is_never_read(span: SpanFactory, tool_span: SpanFactory) -> None:
    call = tool_span("b" * 16, None, **mcp_attributes("2026-07-28"))
    assert assemble_trace(TRACE, facts_of(call)).calls[0].session_id == TRACE


def server_of(tool_span: SpanFactory, name: str = "lookup", **extra: Any) -> str:
    return assemble_trace(TRACE, facts_of(tool_span("c" * 16, None, name, **extra))).calls[0].server


def test_each_attribute_that_names_the_server(tool_span: SpanFactory) -> None:
    assert server_of(tool_span, mcp__server__name="issues") == "issues"
    assert server_of(tool_span, traceloop__workflow__name="issues.mcp") == "issues"
    assert server_of(tool_span, traceloop__workflow__name="nightly-report") == UNKNOWN_SERVER
    assert server_of(tool_span, "mcp__issues__lookup") == "issues"
    assert server_of(tool_span, server__address="mcp.example.com", server__port=443) == "mcp.example.com"


def test_the_server_order(tool_span: SpanFactory) -> None:
    every = {
        "mcp__server__name": "named",
        "traceloop__workflow__name": "workflow.mcp",
        "server__address": "mcp.example.com",
    }
    assert server_of(tool_span, "mcp__prefixed__lookup", **every) == "named"
    del every["mcp__server__name"]
    assert server_of(tool_span, "mcp__prefixed__lookup", **every) == "workflow"
    del every["traceloop__workflow__name"]
    assert server_of(tool_span, "mcp__prefixed__lookup", **every) == "prefixed"
    assert server_of(tool_span, "lookup", **every) == "mcp.example.com"


def test_an_unnamed_server_warns_once_naming_the_attributes_to_set(tool_span: SpanFactory) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        assert server_of(tool_span, "lookup") == UNKNOWN_SERVER
        assert server_of(tool_span, "search") == UNKNOWN_SERVER
        assert server_of(tool_span, "lookup", mcp__server__name="issues") == "issues"
    messages = [str(w.message) for w in caught if issubclass(w.category, MonitorWarning)]
    assert len(messages) == 1
    assert "'mcp.server.name'" in messages[0] and "'server.address'" in messages[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # as a test run or ``python -W error`` sets it: the call is still analysed
        assert server_of(tool_span, "fetch") == UNKNOWN_SERVER
