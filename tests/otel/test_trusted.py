"""``trusted_servers`` (``TRIFECTA_TRUSTED_SERVERS``): the annotations of tools listed by a trusted server may
lower risk; the same annotations from any other server may not (MCP ToolAnnotations, schema 2025-06-18:
``openWorldHint: false`` says the tool does not reach outside its own domain).

The tool definitions come from a chat span's ``gen_ai.tool.definitions`` (GenAI semantic conventions,
development status, 2026-10), a tool's server from its ``mcp__<server>__<tool>`` name.
"""

from __future__ import annotations

import json

import pytest
from opentelemetry.sdk.trace import TracerProvider

from monitor.models import Leg
from monitor.otel import TrifectaSpanProcessor, read_processor_options

DEFINITION = {
    "type": "function",
    "name": "mcp__notes__post_note",
    "description": "Post a note.",
    "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
    "annotations": {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False},
}


def read_call_legs(**options: object) -> tuple[Leg, ...]:
    """Trace one session calling ``post_note`` after listing it; the legs the monitor gave the call."""
    provider = TracerProvider(shutdown_on_exit=False)
    processor = TrifectaSpanProcessor(worker="thread", **options)  # type: ignore[arg-type]
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("test")
    session = {"gen_ai.conversation.id": "conv_trust"}
    try:
        with tracer.start_as_current_span(
            "invoke_agent", attributes={"gen_ai.operation.name": "invoke_agent", **session}
        ):
            chat = {"gen_ai.operation.name": "chat", "gen_ai.tool.definitions": json.dumps([DEFINITION]), **session}
            with tracer.start_as_current_span("chat", attributes=chat):
                pass
            call = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "mcp__notes__post_note",
                "gen_ai.tool.call.id": "call_1",
                "gen_ai.tool.call.arguments": json.dumps({"text": "hello"}),
            }
            with tracer.start_as_current_span("execute_tool mcp__notes__post_note", attributes=call):
                pass
        report = processor.session("conv_trust")
        assert report is not None and len(report.calls) == 1
        return report.calls[0].legs
    finally:
        provider.shutdown()


def test_only_a_trusted_servers_annotations_lower_risk() -> None:
    untrusted = read_call_legs()
    trusted = read_call_legs(**read_processor_options({"TRIFECTA_TRUSTED_SERVERS": "notes"}))
    assert Leg.EXTERNAL_COMMUNICATION in untrusted
    assert Leg.EXTERNAL_COMMUNICATION not in trusted
    assert read_call_legs(trusted_servers=["other"]) == untrusted


def test_one_string_for_trusted_servers_is_refused_not_read_as_its_letters() -> None:
    with pytest.raises(ValueError, match="not one string"):
        TrifectaSpanProcessor(worker="thread", trusted_servers="github")
    processor = TrifectaSpanProcessor(worker="thread", trusted_servers=["github"])
    assert processor.config.trusted_servers == frozenset({"github"})
    processor.shutdown()
