"""Span semantics: attribute vocabularies, the neutral span, span facts, trace assembly and streaming.

Shared by the OTLP reader (``monitor.ingest``) and live tracing (``monitor.otel``):

- attribute keys, one module per vocabulary: the OpenTelemetry GenAI and MCP semantic conventions
  (``_semconv``), OpenInference (``_openinference``), Traceloop / OpenLLMetry (``_traceloop``) and
  Langfuse (``_langfuse``); :data:`SESSION_KEYS` orders the session keys of all four;
- :class:`SpanRecord`, a span reduced to what the monitor reads, and :func:`convert_readable_span` from an
  OpenTelemetry SDK span (``_record``);
- what one span says, :class:`SpanFacts` (``_facts``);
- a whole trace turned into time-ordered event items, :func:`assemble_trace` (``_assembly``);
- spans as they arrive, in any order, buffered per trace into session events, :class:`SpanAssembler`
  (``_streaming``).

An attribute's JSON text is decoded as every record is, by :func:`monitor.jsonrecords.decode_json_record`.
"""

from monitor.spans._assembly import (
    MergedCall,
    SpanLink,
    TraceAssembly,
    TraceItem,
    assemble_trace,
)
from monitor.spans._facts import (
    PROTOCOL_SESSION_KEY,
    SESSION_KEYS,
    UNKNOWN_SERVER,
    ParseCache,
    SpanFacts,
    ToolFacts,
    ToolList,
    extract_span_facts,
    extract_tool_facts,
    extract_tool_lists,
    extract_user_texts,
    is_tool_span,
    read_protocol_session_key,
    read_session_key,
)
from monitor.spans._langfuse import (
    LANGFUSE_SESSION_ID,
)
from monitor.spans._openinference import (
    INPUT_VALUE,
    LLM_INPUT_MESSAGES,
    LLM_TOOLS,
    OPENINFERENCE_SPAN_KIND,
    OPENINFERENCE_TOOL,
    OUTPUT_VALUE,
    SESSION_ID,
    TOOL_CALL_FUNCTION_ARGUMENTS,
    TOOL_CALL_ID,
    TOOL_ID,
    TOOL_NAME,
    TOOL_PARAMETERS,
)
from monitor.spans._record import (
    SpanKind,
    SpanRecord,
    StatusCode,
    convert_readable_span,
)
from monitor.spans._semconv import (
    ERROR_TYPE,
    EXECUTE_TOOL,
    GEN_AI_CONVERSATION_ID,
    GEN_AI_INPUT_MESSAGES,
    GEN_AI_OPERATION_NAME,
    GEN_AI_TOOL_CALL_ARGUMENTS,
    GEN_AI_TOOL_CALL_ID,
    GEN_AI_TOOL_CALL_RESULT,
    GEN_AI_TOOL_DEFINITIONS,
    GEN_AI_TOOL_NAME,
    JSONRPC_REQUEST_ID,
    MCP_METHOD_NAME,
    MCP_PROTOCOL_VERSION,
    MCP_REQUEST_ARGUMENT_PREFIX,
    MCP_REQUEST_ID,
    MCP_SERVER_NAME,
    MCP_SESSION_ID,
    MCP_TOOL_NAME,
    MCP_TOOL_RESULT_CONTENT,
    MCP_TOOLS_CALL,
    SERVER_ADDRESS,
)
from monitor.spans._streaming import (
    DEFAULT_MAX_BUFFERED_BYTES,
    DEFAULT_MAX_BUFFERED_SPANS,
    DEFAULT_REMEMBERED_SPANS,
    DEFAULT_SESSION_IDLE_SPANS,
    DEFAULT_TRACE_IDLE_SPANS,
    AssemblerBounds,
    SpanAssembler,
)
from monitor.spans._traceloop import (
    GEN_AI_PROMPT,
    LLM_REQUEST_FUNCTIONS,
    TRACELOOP_ENTITY_INPUT,
    TRACELOOP_ENTITY_NAME,
    TRACELOOP_ENTITY_OUTPUT,
    TRACELOOP_SESSION_ID,
    TRACELOOP_SPAN_KIND,
    TRACELOOP_TOOL,
    TRACELOOP_WORKFLOW_NAME,
)

__all__ = [
    "AssemblerBounds",
    "DEFAULT_MAX_BUFFERED_BYTES",
    "DEFAULT_MAX_BUFFERED_SPANS",
    "DEFAULT_REMEMBERED_SPANS",
    "DEFAULT_SESSION_IDLE_SPANS",
    "DEFAULT_TRACE_IDLE_SPANS",
    "ERROR_TYPE",
    "EXECUTE_TOOL",
    "GEN_AI_CONVERSATION_ID",
    "GEN_AI_INPUT_MESSAGES",
    "GEN_AI_OPERATION_NAME",
    "GEN_AI_PROMPT",
    "GEN_AI_TOOL_CALL_ARGUMENTS",
    "GEN_AI_TOOL_CALL_ID",
    "GEN_AI_TOOL_CALL_RESULT",
    "GEN_AI_TOOL_DEFINITIONS",
    "GEN_AI_TOOL_NAME",
    "INPUT_VALUE",
    "JSONRPC_REQUEST_ID",
    "LANGFUSE_SESSION_ID",
    "LLM_INPUT_MESSAGES",
    "LLM_REQUEST_FUNCTIONS",
    "LLM_TOOLS",
    "MCP_METHOD_NAME",
    "MCP_PROTOCOL_VERSION",
    "MCP_REQUEST_ARGUMENT_PREFIX",
    "MCP_REQUEST_ID",
    "MCP_SERVER_NAME",
    "MCP_SESSION_ID",
    "MCP_TOOLS_CALL",
    "MCP_TOOL_NAME",
    "MCP_TOOL_RESULT_CONTENT",
    "MergedCall",
    "OPENINFERENCE_SPAN_KIND",
    "OPENINFERENCE_TOOL",
    "OUTPUT_VALUE",
    "PROTOCOL_SESSION_KEY",
    "ParseCache",
    "SERVER_ADDRESS",
    "SESSION_ID",
    "SESSION_KEYS",
    "SpanAssembler",
    "SpanFacts",
    "SpanKind",
    "SpanLink",
    "SpanRecord",
    "StatusCode",
    "TOOL_CALL_FUNCTION_ARGUMENTS",
    "TOOL_CALL_ID",
    "TOOL_ID",
    "TOOL_NAME",
    "TOOL_PARAMETERS",
    "TRACELOOP_ENTITY_INPUT",
    "TRACELOOP_ENTITY_NAME",
    "TRACELOOP_ENTITY_OUTPUT",
    "TRACELOOP_SESSION_ID",
    "TRACELOOP_SPAN_KIND",
    "TRACELOOP_TOOL",
    "TRACELOOP_WORKFLOW_NAME",
    "ToolFacts",
    "ToolList",
    "TraceAssembly",
    "TraceItem",
    "UNKNOWN_SERVER",
    "assemble_trace",
    "convert_readable_span",
    "extract_span_facts",
    "extract_tool_facts",
    "extract_tool_lists",
    "extract_user_texts",
    "is_tool_span",
    "read_protocol_session_key",
    "read_session_key",
]
