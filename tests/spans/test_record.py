"""The neutral span: OpenTelemetry SDK spans converted, then assembled like any other."""

from __future__ import annotations

from monitor.models import RecordError, SessionEnd, ToolCall, ToolResult
from monitor.spans import SpanAssembler, SpanKind, StatusCode, convert_readable_span


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
    assembler = SpanAssembler()
    for record in records:
        assembler.add(record, "test:1")
    out = [r for r in [*assembler.drain(), *assembler.finish()] if not isinstance(r, RecordError | SessionEnd)]
    call, result = out
    assert isinstance(call, ToolCall) and (call.session_id, call.server, call.tool) == ("live", "mail", "send")
    assert call.arguments == {"to": "x@example.com"}
    assert isinstance(result, ToolResult) and result.is_error
