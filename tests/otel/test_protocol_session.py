"""Spans without a conversation id: an MCP server's own spans are keyed by their protocol session
(``mcp.session.id``), unless their protocol version has none (MCP 2026-07-28: no ``Mcp-Session-Id``; the
OpenTelemetry MCP conventions, semantic-conventions-genai ``docs/gen-ai/mcp.md``, say ``mcp.session.id`` is not
set for such peers), live as offline.

The span shape is an MCP server span of the conventions' ``mcp.md`` (``tools/call <tool>``, kind SERVER, with
``mcp.method.name``, ``mcp.session.id``, ``mcp.protocol.version``, ``jsonrpc.request.id``, ``gen_ai.tool.name``).
"""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from monitor.analysis import analyze_records
from monitor.models import SessionReport
from monitor.otel import TrifectaSpanProcessor
from monitor.session import SessionMonitor
from monitor.spans import SpanAssembler, convert_readable_span

PROTOCOL_SESSION = "82073a29974e4f8a7b48b9a9ceae8290"


def serve_one_call(version: str, method_named: bool = True) -> tuple[list[str], set[str], str]:
    """One ``tools/call`` served, as an MCP server traces it; the live sessions, the offline ones, the trace id.
    ``method_named=False`` leaves out ``mcp.method.name`` (a tracer that sets only the session id)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    processor = TrifectaSpanProcessor(worker="thread")
    provider.add_span_processor(processor)
    attributes: dict[str, Any] = {
        "mcp.method.name": "tools/call",
        "mcp.session.id": PROTOCOL_SESSION,
        "mcp.protocol.version": version,
        "jsonrpc.request.id": "2",
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "search_gmail_messages",
    }
    if not method_named:
        del attributes["mcp.method.name"]
    try:
        tracer = provider.get_tracer("server")
        with tracer.start_as_current_span(
            "tools/call search_gmail_messages", kind=SpanKind.SERVER, attributes=attributes
        ):
            pass
        live = processor.list_sessions()
    finally:
        provider.shutdown()
    (span,) = exporter.get_finished_spans()
    assembler = SpanAssembler()
    assembler.add(convert_readable_span(span), "memory:0")
    records = [*assembler.drain(), *assembler.finish()]
    offline = {
        item.session_id for item in analyze_records(records, SessionMonitor()) if isinstance(item, SessionReport)
    }
    return live, offline, format(span.context.trace_id, "032x")


@pytest.mark.filterwarnings("ignore:a tool span names no server")  # a stdio server's spans name none
@pytest.mark.parametrize(("version", "keyed_by_protocol"), [("2025-06-18", True), ("2026-07-28", False)])
@pytest.mark.parametrize("method_named", [True, False])
def test_a_server_span_without_a_conversation_is_keyed_as_offline(
    version: str, keyed_by_protocol: bool, method_named: bool
) -> None:
    live, offline, trace_id = serve_one_call(version, method_named)
    expected = PROTOCOL_SESSION if keyed_by_protocol else trace_id
    assert live == [expected]
    assert offline == {expected}
