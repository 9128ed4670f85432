"""Attribute keys of Traceloop / OpenLLMetry (traceloop/openllmetry,
``packages/opentelemetry-semantic-conventions-ai``: ``SpanAttributes`` and ``TraceloopSpanKindValues``).
List-valued attributes are flattened: ``<key>.<index>.<member>``."""

from __future__ import annotations

TRACELOOP_SPAN_KIND = "traceloop.span.kind"  # TRACELOOP_SPAN_KIND: workflow, task, agent, tool
TRACELOOP_TOOL = "tool"  # the traceloop.span.kind of a tool span (TraceloopSpanKindValues.TOOL)
TRACELOOP_ENTITY_NAME = "traceloop.entity.name"  # TRACELOOP_ENTITY_NAME: the tool's name on a tool span
# TRACELOOP_ENTITY_INPUT: {"args": [...], "kwargs": {...}} (@tool) or {"tool_name", "arguments"} (MCP)
TRACELOOP_ENTITY_INPUT = "traceloop.entity.input"
TRACELOOP_ENTITY_OUTPUT = "traceloop.entity.output"  # TRACELOOP_ENTITY_OUTPUT: the result, JSON text
TRACELOOP_WORKFLOW_NAME = "traceloop.workflow.name"  # TRACELOOP_WORKFLOW_NAME: "<server>.mcp" on FastMCP servers
# TRACELOOP_ASSOCIATION_PROPERTIES + ".session_id": the session, as Traceloop's SDK associates it
TRACELOOP_SESSION_ID = "traceloop.association.properties.session_id"
GEN_AI_PROMPT = "gen_ai.prompt"  # LLM_PROMPTS (legacy): .<i>.role / .content
LLM_REQUEST_FUNCTIONS = "llm.request.functions"  # LLM_REQUEST_FUNCTIONS: .<i>.name / .description / .parameters
