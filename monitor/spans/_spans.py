"""Spans, whatever carried them, as session events: the mapping shared by the OTLP reader and live tracing.

A :class:`SpanRecord` is a span reduced to what the monitor reads (ids as lowercase hex, times in
nanoseconds, attributes and resource attributes as plain dicts, status). It is made by the OTLP JSON
decoder (:mod:`monitor.ingest._otlp`) or from an SDK ``ReadableSpan`` (:func:`convert_readable_span`).

Three attribute flavours are read, and may be mixed on one span:

- OpenTelemetry GenAI semantic conventions (``execute_tool`` spans, ``gen_ai.tool.*``,
  ``gen_ai.input.messages``, ``gen_ai.tool.definitions``, ``gen_ai.conversation.id``) and their MCP
  conventions (``mcp.method.name``, ``jsonrpc.request.id``); see open-telemetry/semantic-conventions-genai,
  ``docs/gen-ai/gen-ai-spans.md`` and ``docs/gen-ai/mcp.md`` (status: development);
- OpenInference (``openinference.span.kind``, ``tool.name``, ``input.value``/``output.value``,
  ``llm.input_messages.*``, ``llm.tools.*``, ``session.id``); see Arize-ai/openinference,
  ``spec/semantic_conventions.md`` and ``spec/tool_calling.md``;
- Traceloop / OpenLLMetry (``traceloop.span.kind``, ``traceloop.entity.*``, ``gen_ai.prompt.*``,
  ``llm.request.functions.*``, ``traceloop.association.properties.session_id``).

The attribute names are our own constants: the ``opentelemetry-semantic-conventions`` package marks the
GenAI and MCP ones as moved and deprecated.

A span alone does not say everything: its session may sit on an ancestor, and one logical call may be
several spans. :func:`assemble_trace` reads a whole trace at once, and :class:`SpanAssembler` buffers spans
per trace as they arrive, in any order, and turns each complete trace into events.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import IntEnum
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import orjson

from monitor.models._events import Event, ToolCall, ToolResult, ToolsListed, UserMessage
from monitor.models._names import split_mcp_name
from monitor.models._records import Record, RecordError, SessionEnd

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan

# -- attribute names ---------------------------------------------------------------------------------

# OpenTelemetry GenAI semantic conventions (gen-ai-spans.md, "Execute tool span" and "Inference").
GEN_AI_OPERATION_NAME = "gen_ai.operation.name"
EXECUTE_TOOL = "execute_tool"
GEN_AI_TOOL_NAME = "gen_ai.tool.name"
GEN_AI_TOOL_CALL_ID = "gen_ai.tool.call.id"
GEN_AI_TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"  # opt-in; an object, or its JSON string
GEN_AI_TOOL_CALL_RESULT = "gen_ai.tool.call.result"  # opt-in; an object, or its JSON string
GEN_AI_TOOL_DEFINITIONS = "gen_ai.tool.definitions"  # opt-in; [{type, name, description, parameters}]
GEN_AI_INPUT_MESSAGES = "gen_ai.input.messages"  # opt-in; [{role, parts: [{type: "text", content}]}]
GEN_AI_CONVERSATION_ID = "gen_ai.conversation.id"
ERROR_TYPE = "error.type"
SERVER_ADDRESS = "server.address"
# MCP semantic conventions (mcp.md): client and server spans of a call carry the same request id.
MCP_METHOD_NAME = "mcp.method.name"
MCP_TOOLS_CALL = "tools/call"
JSONRPC_REQUEST_ID = "jsonrpc.request.id"
# Widely used outside the conventions (Sentry's MCP integrations and others).
MCP_SERVER_NAME = "mcp.server.name"
MCP_TOOL_NAME = "mcp.tool.name"
MCP_REQUEST_ID = "mcp.request.id"
MCP_REQUEST_ARGUMENT_PREFIX = "mcp.request.argument."  # one attribute per argument, values JSON-encoded
MCP_TOOL_RESULT_CONTENT = "mcp.tool.result.content"
# OpenInference.
OPENINFERENCE_SPAN_KIND = "openinference.span.kind"
OPENINFERENCE_TOOL = "TOOL"
TOOL_NAME = "tool.name"
TOOL_ID = "tool.id"  # "the identifier for the result of the tool call (corresponding to tool_call.id)"
TOOL_PARAMETERS = "tool.parameters"  # arguments in many instrumentations, a parameter schema in others
TOOL_CALL_ID = "tool_call.id"
TOOL_CALL_FUNCTION_ARGUMENTS = "tool_call.function.arguments"
INPUT_VALUE = "input.value"
OUTPUT_VALUE = "output.value"
SESSION_ID = "session.id"
LLM_INPUT_MESSAGES = "llm.input_messages"  # llm.input_messages.<i>.message.role / .content / .contents.<j>
LLM_TOOLS = "llm.tools"  # llm.tools.<i>.tool.json_schema / .tool.name / .tool.description
# Traceloop / OpenLLMetry.
TRACELOOP_SPAN_KIND = "traceloop.span.kind"
TRACELOOP_TOOL = "tool"
TRACELOOP_ENTITY_NAME = "traceloop.entity.name"
TRACELOOP_ENTITY_INPUT = "traceloop.entity.input"  # {"args": [...], "kwargs": {...}} or {"tool_name", "arguments"}
TRACELOOP_ENTITY_OUTPUT = "traceloop.entity.output"
TRACELOOP_WORKFLOW_NAME = "traceloop.workflow.name"  # "<server>.mcp" on FastMCP server spans
TRACELOOP_SESSION_ID = "traceloop.association.properties.session_id"
GEN_AI_PROMPT = "gen_ai.prompt"  # legacy: gen_ai.prompt.<i>.role / .content
LLM_REQUEST_FUNCTIONS = "llm.request.functions"  # llm.request.functions.<i>.name / .description / .parameters
# Langfuse.
LANGFUSE_SESSION_ID = "langfuse.session.id"

SESSION_KEYS = (GEN_AI_CONVERSATION_ID, SESSION_ID, LANGFUSE_SESSION_ID, TRACELOOP_SESSION_ID)
"""Attributes that name a session, in precedence order."""

UNKNOWN_SERVER = "unknown"
"""The server of a tool call whose spans name none."""

T = TypeVar("T")

_CONTAINERS = (dict, list)
_FACTS_SIZE = 400  # bytes of a span's summary without content: ids, times, the object itself

_MAX_INDEX = 10_000  # bound on flattened list indexes read (llm.input_messages.<i>, llm.tools.<i>, ...)


# -- the neutral span --------------------------------------------------------------------------------


class SpanKind(IntEnum):
    """Span kind, numbered as in the OTLP protobuf."""

    UNSPECIFIED = 0
    INTERNAL = 1
    SERVER = 2
    CLIENT = 3
    PRODUCER = 4
    CONSUMER = 5


class StatusCode(IntEnum):
    """Span status code, numbered as in the OTLP protobuf."""

    UNSET = 0
    OK = 1
    ERROR = 2


@dataclass(frozen=True, slots=True)
class SpanRecord:
    """One finished span, reduced to what the monitor reads.

    Ids are lowercase hex (32 digits for the trace, 16 for spans); ``parent_span_id`` is None for a root.
    Attribute values are plain JSON-like values (str, int, float, bool, lists, dicts). The resource
    attributes dict is usually shared by every span of one resource: treat it as read-only.
    """

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str = ""
    kind: SpanKind = SpanKind.UNSPECIFIED
    start_time_ns: int | None = None
    end_time_ns: int | None = None
    attributes: dict[str, Any] = field(default_factory=dict)
    resource_attributes: dict[str, Any] = field(default_factory=dict)
    status_code: StatusCode = StatusCode.UNSET
    status_message: str = ""


def convert_readable_span(span: ReadableSpan) -> SpanRecord:
    """Make a :class:`SpanRecord` from an OpenTelemetry SDK span (e.g. in a span processor's ``on_end``)."""
    context = span.get_span_context()
    if context is None:
        raise ValueError("span has no context")
    parent = span.parent
    status = span.status
    return SpanRecord(
        trace_id=format(context.trace_id, "032x"),
        span_id=format(context.span_id, "016x"),
        parent_span_id=format(parent.span_id, "016x") if parent is not None and parent.span_id else None,
        name=span.name,
        # The SDK numbers kinds from INTERNAL = 0; the protobuf from UNSPECIFIED = 0.
        kind=SpanKind(span.kind.value + 1),
        start_time_ns=span.start_time,
        end_time_ns=span.end_time,
        attributes=_plain_attributes(span.attributes),
        resource_attributes=_plain_attributes(span.resource.attributes),
        status_code=StatusCode(status.status_code.value),
        status_message=status.description or "",
    )


def _plain_attributes(attributes: Mapping[str, Any] | None) -> dict[str, Any]:
    if not attributes:
        return {}
    return {k: list(v) if isinstance(v, tuple) else v for k, v in attributes.items()}


# -- what one span says ------------------------------------------------------------------------------


@dataclass(slots=True)
class ToolFacts:
    """What one tool span says about its call. Several spans of one call are merged by :func:`assemble_trace`."""

    tool: str
    explicit_server: str | None = None
    prefix_server: str | None = None
    address_server: str | None = None
    call_id: str | None = None
    rpc_id: str | None = None
    arguments: dict[str, Any] | None = None
    result: Any = None
    is_error: bool = False


ToolList = tuple[str, tuple[dict[str, Any], ...]]
"""``(server, tools)`` as a ``tools/list`` result would give them."""


@dataclass(slots=True)
class SpanFacts:
    """What the monitor keeps of one span while its trace is buffered: small, whatever the span's size."""

    span_id: str
    parent_id: str | None
    start_ns: int | None
    end_ns: int | None
    session_key: str | None = None
    resource_session_key: str | None = None
    tool: ToolFacts | None = None
    user_texts: tuple[str, ...] = ()
    tool_lists: tuple[ToolList, ...] = ()
    size: int = _FACTS_SIZE
    """A rough count of the bytes kept: what bounds the buffer, with the count of spans."""


class ParseCache:
    """A small LRU of what was read from large attributes, keyed by their raw text.

    Chat spans repeat the same tool definitions and, within a turn, the same input messages.
    """

    def __init__(self, size: int = 256) -> None:
        self._size = size
        self._items: OrderedDict[Any, Any] = OrderedDict()

    def get(self, key: Any, compute: Callable[[], T]) -> T:
        """The cached value for ``key``, computed on a miss."""
        try:
            value: T = self._items[key]
        except (KeyError, TypeError):
            value = compute()
            try:
                self._items[key] = value
            except TypeError:  # unhashable key: not cached
                return value
            if len(self._items) > self._size:
                self._items.popitem(last=False)
            return value
        self._items.move_to_end(key)
        return value


def is_tool_span(attributes: Mapping[str, Any]) -> bool:
    """True for a span that executes a tool, in any of the three flavours."""
    return (
        attributes.get(GEN_AI_OPERATION_NAME) == EXECUTE_TOOL
        or attributes.get(MCP_METHOD_NAME) == MCP_TOOLS_CALL
        or _upper(attributes.get(OPENINFERENCE_SPAN_KIND)) == OPENINFERENCE_TOOL
        or _lower(attributes.get(TRACELOOP_SPAN_KIND)) == TRACELOOP_TOOL
    )


def read_session_key(attributes: Mapping[str, Any]) -> str | None:
    """The session named by these attributes: the first of :data:`SESSION_KEYS` present and not empty."""
    for key in SESSION_KEYS:
        value = attributes.get(key)
        if value is not None and value != "" and not isinstance(value, _CONTAINERS):
            return str(value)
    return None


def extract_span_facts(record: SpanRecord, cache: ParseCache | None = None) -> SpanFacts:
    """Read what the monitor needs from one span: session key, tool call, user messages, tool lists."""
    attrs = record.attributes
    tool = extract_tool_facts(record) if is_tool_span(attrs) else None
    user_texts = _cached(cache, _messages_key(attrs), lambda: extract_user_texts(attrs))
    size = _FACTS_SIZE + sum(len(text) for text in user_texts)
    if tool is not None:  # arguments and results are kept: count the attributes they came from
        size += sum(_raw_size(value) for value in attrs.values())
    return SpanFacts(
        span_id=record.span_id,
        parent_id=record.parent_span_id,
        start_ns=record.start_time_ns,
        end_ns=record.end_time_ns,
        session_key=read_session_key(attrs),
        resource_session_key=read_session_key(record.resource_attributes) if record.resource_attributes else None,
        tool=tool,
        user_texts=user_texts,
        tool_lists=extract_tool_lists(attrs, cache),
        size=size,
    )


def _raw_size(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict | list):
        return len(orjson.dumps(value, default=str))
    return 8


def extract_tool_facts(record: SpanRecord) -> ToolFacts:
    """Read a tool span: tool name, server hints, call id, arguments, result and error.

    Arguments come from the first present of ``gen_ai.tool.call.arguments``, ``input.value``,
    ``tool_call.function.arguments``, ``traceloop.entity.input``, ``mcp.request.argument.*`` and
    ``tool.parameters`` (unless it looks like a parameter schema). A JSON string is decoded; a value that is
    not an object is kept as ``{"input": value}``; nothing recorded gives None. The result is the first of
    ``gen_ai.tool.call.result``, ``output.value``, ``traceloop.entity.output``, ``mcp.tool.result.content``,
    decoded when it is a JSON object or array, else kept as recorded; None when none is present.
    """
    a = record.attributes
    raw_name = _first_str(a, GEN_AI_TOOL_NAME, TOOL_NAME, TRACELOOP_ENTITY_NAME, MCP_TOOL_NAME)
    if raw_name is None:
        raw_name = _name_from_span_name(record.name)
    split = split_mcp_name(raw_name)
    prefix_server, tool = split if split else (None, raw_name)
    explicit = _first_str(a, MCP_SERVER_NAME)
    if explicit is None:
        workflow = a.get(TRACELOOP_WORKFLOW_NAME)
        if isinstance(workflow, str) and workflow.endswith(".mcp") and len(workflow) > 4:
            explicit = workflow[:-4]
    address = _first_str(a, SERVER_ADDRESS)
    arguments = _as_arguments(a.get(GEN_AI_TOOL_CALL_ARGUMENTS))
    if arguments is None:
        arguments = _as_arguments(a.get(INPUT_VALUE))
    if arguments is None:
        arguments = _as_arguments(a.get(TOOL_CALL_FUNCTION_ARGUMENTS))
    if arguments is None:
        arguments = _traceloop_arguments(a.get(TRACELOOP_ENTITY_INPUT))
    if arguments is None and (MCP_METHOD_NAME in a or MCP_TOOL_NAME in a):
        arguments = _prefixed_arguments(a, MCP_REQUEST_ARGUMENT_PREFIX)
    if arguments is None:
        parameters = _as_arguments(a.get(TOOL_PARAMETERS))
        if parameters is not None and not _looks_like_schema(parameters):
            arguments = parameters
    result = None
    for key in (GEN_AI_TOOL_CALL_RESULT, OUTPUT_VALUE, TRACELOOP_ENTITY_OUTPUT, MCP_TOOL_RESULT_CONTENT):
        value = a.get(key)
        if value is not None:
            result = _as_result(value)
            break
    return ToolFacts(
        tool=tool,
        explicit_server=explicit,
        prefix_server=prefix_server,
        address_server=address,
        call_id=_first_id(a, GEN_AI_TOOL_CALL_ID, TOOL_CALL_ID, TOOL_ID),
        rpc_id=_first_id(a, JSONRPC_REQUEST_ID, MCP_REQUEST_ID),
        arguments=arguments,
        result=result,
        is_error=record.status_code is StatusCode.ERROR or bool(a.get(ERROR_TYPE)),
    )


def extract_user_texts(attributes: Mapping[str, Any]) -> tuple[str, ...]:
    """The texts of ``user`` messages in a chat span's input (GenAI, OpenInference or Traceloop form)."""
    texts: list[str] = []
    raw = attributes.get(GEN_AI_INPUT_MESSAGES)
    if raw is not None:
        messages = _parse(raw)
        if isinstance(messages, list):
            for message in messages:
                if isinstance(message, dict) and message.get("role") == "user":
                    text = _message_text(message.get("parts", message.get("content")))
                    if text:
                        texts.append(text)
    if f"{LLM_INPUT_MESSAGES}.0.message.role" in attributes:
        for i in range(_MAX_INDEX):
            prefix = f"{LLM_INPUT_MESSAGES}.{i}.message"
            role = attributes.get(f"{prefix}.role")
            if role is None:
                break
            if role != "user":
                continue
            content = attributes.get(f"{prefix}.content")
            if isinstance(content, str):
                text = content
            else:
                parts = []
                for j in range(_MAX_INDEX):
                    item = f"{prefix}.contents.{j}.message_content"
                    if f"{item}.type" not in attributes and f"{item}.text" not in attributes:
                        break
                    part = attributes.get(f"{item}.text")
                    if isinstance(part, str) and attributes.get(f"{item}.type", "text") == "text":
                        parts.append(part)
                text = "\n".join(parts)
            if text:
                texts.append(text)
    if f"{GEN_AI_PROMPT}.0.role" in attributes:
        for i in range(_MAX_INDEX):
            role = attributes.get(f"{GEN_AI_PROMPT}.{i}.role")
            if role is None:
                break
            if role == "user":
                text = _message_text(_parse(attributes.get(f"{GEN_AI_PROMPT}.{i}.content")))
                if text:
                    texts.append(text)
    return tuple(texts)


def extract_tool_lists(attributes: Mapping[str, Any], cache: ParseCache | None = None) -> tuple[ToolList, ...]:
    """Tool definitions offered to the model, grouped by server, as ``tools/list`` entries.

    Read from ``gen_ai.tool.definitions``, OpenInference ``llm.tools.<i>.tool.*`` or Traceloop
    ``llm.request.functions.<i>.*``. A tool named ``mcp__<server>__<tool>`` is listed under ``server`` as
    ``tool``; any other under :data:`UNKNOWN_SERVER`, the server its calls get when they name none either.
    A definition's ``parameters`` (or ``input_schema``) becomes ``inputSchema``; other members, such as MCP
    ``annotations`` carried along, are kept.
    """
    lists: tuple[ToolList, ...] = ()
    raw = attributes.get(GEN_AI_TOOL_DEFINITIONS)
    if raw is not None:
        key = ("gen_ai", raw) if isinstance(raw, str) else None
        lists += _cached(cache, key, lambda: _group_definitions(_parse(raw)))
    if f"{LLM_TOOLS}.0.tool.json_schema" in attributes or f"{LLM_TOOLS}.0.tool.name" in attributes:
        entries = []
        for i in range(_MAX_INDEX):
            prefix = f"{LLM_TOOLS}.{i}.tool"
            schema = attributes.get(f"{prefix}.json_schema")
            name = attributes.get(f"{prefix}.name")
            if schema is None and name is None:
                break
            entries.append((schema, name, attributes.get(f"{prefix}.description")))
        lists += _cached(
            cache, ("openinference", tuple(entries)), lambda: _group_definitions(_openinference_tools(entries))
        )
    if f"{LLM_REQUEST_FUNCTIONS}.0.name" in attributes:
        functions: list[Any] = []
        for i in range(_MAX_INDEX):
            prefix = f"{LLM_REQUEST_FUNCTIONS}.{i}"
            name = attributes.get(f"{prefix}.name")
            if name is None:
                break
            functions.append(
                {
                    "name": name,
                    "description": attributes.get(f"{prefix}.description"),
                    "parameters": _parse(attributes.get(f"{prefix}.parameters")),
                }
            )
        lists += _group_definitions(functions)
    return lists


def _cached(cache: ParseCache | None, key: Any, compute: Callable[[], T]) -> T:
    if cache is None or key is None:
        return compute()
    return cache.get(key, compute)


def _messages_key(attributes: Mapping[str, Any]) -> Any:
    """A cache key for a span's user messages when they are only in ``gen_ai.input.messages`` (as text)."""
    raw = attributes.get(GEN_AI_INPUT_MESSAGES)
    if (
        isinstance(raw, str)
        and f"{LLM_INPUT_MESSAGES}.0.message.role" not in attributes
        and f"{GEN_AI_PROMPT}.0.role" not in attributes
    ):
        return ("messages", raw)
    return None


def _openinference_tools(entries: list[tuple[Any, Any, Any]]) -> list[Any]:
    tools: list[Any] = []
    for schema, name, description in entries:
        parsed = _parse(schema)
        definition = dict(parsed) if isinstance(parsed, dict) else {}
        if isinstance(name, str) and name:
            definition["name"] = name
        if isinstance(description, str) and "description" not in definition:
            definition["description"] = description
        tools.append(definition)
    return tools


def _group_definitions(definitions: Any) -> tuple[ToolList, ...]:
    if not isinstance(definitions, list):
        return ()
    by_server: dict[str, list[dict[str, Any]]] = {}
    for definition in definitions:
        converted = _mcp_tool(definition)
        if converted is not None:
            server, tool = converted
            by_server.setdefault(server, []).append(tool)
    return tuple((server, tuple(tools)) for server, tools in by_server.items())


def _mcp_tool(definition: Any) -> tuple[str, dict[str, Any]] | None:
    """A tool definition (GenAI, OpenAI-style ``{"function": {...}}``, Anthropic or MCP) as an MCP tool."""
    if not isinstance(definition, dict):
        return None
    inner = definition.get("function")
    if isinstance(inner, dict):
        definition = {**{k: v for k, v in definition.items() if k not in ("function", "type")}, **inner}
    name = definition.get("name")
    if not isinstance(name, str) or not name:
        return None
    split = split_mcp_name(name)
    server, bare = split if split else (UNKNOWN_SERVER, name)
    tool: dict[str, Any] = {"name": bare}
    for key, value in definition.items():
        if key == "name" or (key == "type" and value in ("function", "custom")) or value is None:
            continue
        if key in ("parameters", "input_schema") and "inputSchema" not in definition:
            tool["inputSchema"] = _parse(value)
        else:
            tool[key] = value
    return server, tool


# -- values ------------------------------------------------------------------------------------------


def _parse(value: Any) -> Any:
    """Decode a JSON string (twice when it was encoded twice); anything else, or bad JSON, as it is."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if not text or text[0] not in '{["':
        return value
    try:
        parsed = orjson.loads(text)
    except orjson.JSONDecodeError:
        return value
    if isinstance(parsed, str) and parsed.strip()[:1] in ("{", "["):
        try:
            return orjson.loads(parsed)
        except orjson.JSONDecodeError:
            return parsed
    return parsed


def _as_arguments(value: Any) -> dict[str, Any] | None:
    if value is None or value == "":
        return None
    parsed = _parse(value)
    if isinstance(parsed, dict):
        return parsed
    if parsed is None:
        return None
    return {"input": parsed}


def _as_result(value: Any) -> Any:
    parsed = _parse(value)
    return parsed if isinstance(parsed, dict | list) else value


def _traceloop_arguments(value: Any) -> dict[str, Any] | None:
    parsed = _parse(value)
    if isinstance(parsed, dict):
        keys = set(parsed)
        arguments = parsed.get("arguments")
        if isinstance(arguments, dict) and keys <= {"tool_name", "name", "arguments"}:
            return arguments  # the MCP instrumentation: {"tool_name": ..., "arguments": {...}}
        if keys and keys <= {"args", "kwargs"}:  # the @tool decorator: {"args": [...], "kwargs": {...}}
            kwargs = parsed.get("kwargs")
            out = dict(kwargs) if isinstance(kwargs, dict) else {}
            args = parsed.get("args")
            if args:
                out["args"] = args
            return out
    return _as_arguments(parsed)


def _prefixed_arguments(attributes: Mapping[str, Any], prefix: str) -> dict[str, Any] | None:
    out = {k[len(prefix) :]: _parse(v) for k, v in attributes.items() if k.startswith(prefix)}
    return out or None


def _looks_like_schema(value: dict[str, Any]) -> bool:
    """A JSON Schema (``{"type": "object", "properties": ...}``) or a map of parameter descriptors."""
    if isinstance(value.get("properties"), dict) and value.get("type") in ("object", None):
        return True
    return bool(value) and all(isinstance(v, dict) and isinstance(v.get("type"), str) for v in value.values())


def _message_text(content: Any) -> str:
    """Text of a message's parts or content: GenAI ``parts``, a plain string, or a list of content blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict) and part.get("type", "text") in ("text", "input_text"):
                text = part.get("content", part.get("text"))
                if isinstance(text, str):
                    texts.append(text)
        return "\n".join(texts)
    return ""


def _first_str(attributes: Mapping[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = attributes.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _first_id(attributes: Mapping[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = attributes.get(key)
        if isinstance(value, str) and value:
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
    return None


def _name_from_span_name(name: str) -> str:
    """``execute_tool X`` / ``tools/call X`` / ``X.tool`` (Traceloop) → ``X``; otherwise the span name."""
    for prefix in (f"{EXECUTE_TOOL} ", f"{MCP_TOOLS_CALL} "):
        if name.startswith(prefix) and len(name) > len(prefix):
            return name[len(prefix) :].strip()
    if name.endswith(".tool") and len(name) > 5:
        return name[:-5]
    return name or "unknown"


def _upper(value: Any) -> Any:
    return value.upper() if isinstance(value, str) else value


def _lower(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


# -- a whole trace -----------------------------------------------------------------------------------


class SpanLink(NamedTuple):
    """What is remembered of a span after its trace was turned into events: enough for late descendants."""

    parent_id: str | None
    session_id: str
    tool: str | None
    call_id: str | None


@dataclass(slots=True)
class MergedCall:
    """One logical tool call: the merge of every span that records it."""

    session_id: str
    call_id: str
    server: str
    tool: str
    arguments: dict[str, Any] | None
    result: Any
    is_error: bool
    start_ns: int | None
    end_ns: int | None
    span_ids: tuple[str, ...]


# Order of events at the same instant: a session's tools and user words come before what the agent does.
_RANK_TOOLS = 0
_RANK_USER = 1
_RANK_RESULT = 2
_RANK_CALL = 3
_RANK_OWN_RESULT = 4  # a result at the very instant its own call started


class TraceItem(NamedTuple):
    """One event-to-be of a trace, in the trace's time order."""

    session_id: str
    time_ns: int
    rank: int
    seq: int
    payload: MergedCall | str | ToolList


@dataclass(slots=True)
class TraceAssembly:
    """A trace turned into event-to-be items (time-ordered) and links to remember for late spans."""

    items: list[TraceItem]
    links: dict[str, SpanLink]
    calls: list[MergedCall]


def _no_link(_span_id: str) -> SpanLink | None:
    return None


def assemble_trace(
    trace_id: str,
    spans: Mapping[str, SpanFacts],
    known: Callable[[str], SpanLink | None] = _no_link,
) -> TraceAssembly:
    """Turn the spans of one trace (or the part of it not yet read) into time-ordered event items.

    ``known`` looks up spans of the same trace that were already turned into events (their links), so that
    spans arriving late still inherit a session and are recognised as duplicates.

    **Session** of a span: the first of :data:`SESSION_KEYS` on the span, else on its nearest ancestor that
    has one, else the resource attributes of the outermost ancestor reached, else the trace id.

    **One call, several spans** (an agent's ``execute_tool`` span, an MCP client span and an MCP server span
    below it): a tool span is part of the same call as its nearest tool-span ancestor when both name the
    same tool (after ``mcp__<server>__`` is taken off) or carry the same call id; tool spans of a trace
    that carry the same call id (``gen_ai.tool.call.id``, ``tool_call.id``, ``tool.id``) are one call too.
    A tool span below a *different* tool (a tool that calls tools) is a call of its own. The merged call
    takes, outermost span first, the tool name, the first call id given (else the first JSON-RPC request
    id, else the outermost span's id), the first arguments and result recorded, and is an error when any
    of its spans is. A call whose nearest tool ancestor was already emitted, and matches, is dropped.

    **Server**, first found over the call's spans: an explicit attribute (``mcp.server.name``, or a
    Traceloop ``traceloop.workflow.name`` of the form ``<server>.mcp``), the ``mcp__<server>__<tool>``
    prefix of a tool name, ``server.address``, else :data:`UNKNOWN_SERVER`.
    """
    parent_of = _parent_lookup(spans, known)
    sessions = _resolve_sessions(trace_id, spans, known)
    depths = _depths(spans)
    order = {span_id: i for i, span_id in enumerate(spans)}
    tool_ids = [span_id for span_id, facts in spans.items() if facts.tool is not None]
    union = {span_id: span_id for span_id in tool_ids}

    def find(span_id: str) -> str:
        while union[span_id] != span_id:
            union[span_id] = union[union[span_id]]
            span_id = union[span_id]
        return span_id

    emitted_elsewhere: dict[str, str | None] = {}  # span id -> the call id it duplicates, already emitted
    by_call_id: dict[str, str] = {}
    for span_id in tool_ids:
        tool = spans[span_id].tool
        assert tool is not None
        ancestor = _nearest_tool_ancestor(span_id, spans, known, parent_of)
        if isinstance(ancestor, str):
            other = spans[ancestor].tool
            assert other is not None
            if _same_call(tool, other.tool, other.call_id):
                union[find(span_id)] = find(ancestor)
        elif isinstance(ancestor, SpanLink) and _same_call(tool, ancestor.tool, ancestor.call_id):
            emitted_elsewhere[span_id] = ancestor.call_id
        if tool.call_id is not None:
            first = by_call_id.setdefault(tool.call_id, span_id)
            if first != span_id and find(first) != find(span_id):
                a, b = find(first), find(span_id)
                # Keep the outer span as the group's representative.
                if (depths[b], order[b]) < (depths[a], order[a]):
                    a, b = b, a
                union[b] = a

    groups: dict[str, list[str]] = {}
    for span_id in tool_ids:
        groups.setdefault(find(span_id), []).append(span_id)

    links: dict[str, SpanLink] = {}
    calls: list[MergedCall] = []
    items: list[TraceItem] = []
    seq = 0
    for members in groups.values():
        members.sort(key=lambda s: (depths[s], spans[s].start_ns or 0, order[s]))
        call = _merge(members, spans, sessions)
        duplicates = [m for m in members if m in emitted_elsewhere]
        if duplicates:
            for m in members:
                links[m] = SpanLink(spans[m].parent_id, sessions[m], call.tool, emitted_elsewhere[duplicates[0]])
            continue
        calls.append(call)
        for m in members:
            links[m] = SpanLink(spans[m].parent_id, sessions[m], call.tool, call.call_id)
        start = call.start_ns or 0
        end = call.end_ns if call.end_ns is not None else start
        items.append(TraceItem(call.session_id, start, _RANK_CALL, seq, call))
        items.append(TraceItem(call.session_id, end, _RANK_RESULT if end > start else _RANK_OWN_RESULT, seq + 1, call))
        seq += 2
    for span_id, facts in spans.items():
        if span_id not in links:
            links[span_id] = SpanLink(facts.parent_id, sessions[span_id], None, None)
        start = facts.start_ns or 0
        for tool_list in facts.tool_lists:
            items.append(TraceItem(sessions[span_id], start, _RANK_TOOLS, seq, tool_list))
            seq += 1
        for text in facts.user_texts:
            items.append(TraceItem(sessions[span_id], start, _RANK_USER, seq, text))
            seq += 1
    items.sort(key=lambda item: (item.time_ns, item.rank, item.seq))
    return TraceAssembly(items=items, links=links, calls=calls)


def _same_call(tool: ToolFacts, other_tool: str | None, other_call_id: str | None) -> bool:
    return tool.tool == other_tool or (tool.call_id is not None and tool.call_id == other_call_id)


def _parent_lookup(
    spans: Mapping[str, SpanFacts], known: Callable[[str], SpanLink | None]
) -> Callable[[str], str | None]:
    def parent_of(span_id: str) -> str | None:
        facts = spans.get(span_id)
        if facts is not None:
            return facts.parent_id
        link = known(span_id)
        return link.parent_id if link is not None else None

    return parent_of


def _nearest_tool_ancestor(
    span_id: str,
    spans: Mapping[str, SpanFacts],
    known: Callable[[str], SpanLink | None],
    parent_of: Callable[[str], str | None],
) -> str | SpanLink | None:
    """The nearest ancestor that is a tool span: its id when it is in ``spans``, its link when known."""
    seen = {span_id}
    current = parent_of(span_id)
    while current is not None and current not in seen:
        seen.add(current)
        facts = spans.get(current)
        if facts is not None:
            if facts.tool is not None:
                return current
        else:
            link = known(current)
            if link is None:
                return None
            if link.tool is not None:
                return link
        current = parent_of(current)
    return None


def _resolve_sessions(
    trace_id: str, spans: Mapping[str, SpanFacts], known: Callable[[str], SpanLink | None]
) -> dict[str, str]:
    resolved: dict[str, str] = {}
    for start in spans:
        if start in resolved:
            continue
        chain: list[str] = []
        session: str | None = None
        top: SpanFacts | None = None
        current: str | None = start
        visited: set[str] = set()
        while current is not None:
            if current in resolved:
                session = resolved[current]
                break
            facts = spans.get(current)
            if facts is None:
                link = known(current)
                if link is not None:
                    session = link.session_id
                break
            if current in visited:  # a cycle: malformed parent ids
                break
            visited.add(current)
            chain.append(current)
            top = facts
            if facts.session_key is not None:
                session = facts.session_key
                break
            current = facts.parent_id
        if session is None:
            session = (top.resource_session_key if top is not None else None) or trace_id
        for span_id in chain:
            resolved[span_id] = session
    return resolved


def _depths(spans: Mapping[str, SpanFacts]) -> dict[str, int]:
    depths: dict[str, int] = {}
    for start in spans:
        chain: list[str] = []
        current: str | None = start
        base = 0
        while current is not None and current in spans:
            if current in depths:
                base = depths[current] + 1
                break
            if current in chain:
                break
            chain.append(current)
            current = spans[current].parent_id
        for offset, span_id in enumerate(reversed(chain)):
            depths[span_id] = base + offset
    return depths


def _merge(members: list[str], spans: Mapping[str, SpanFacts], sessions: Mapping[str, str]) -> MergedCall:
    tools = [t for t in (spans[m].tool for m in members) if t is not None]
    server = (
        next((t.explicit_server for t in tools if t.explicit_server), None)
        or next((t.prefix_server for t in tools if t.prefix_server), None)
        or next((t.address_server for t in tools if t.address_server), None)
        or UNKNOWN_SERVER
    )
    call_id = (
        next((t.call_id for t in tools if t.call_id), None)
        or next((t.rpc_id for t in tools if t.rpc_id), None)
        or members[0]
    )
    starts = [s for s in (spans[m].start_ns for m in members) if s is not None]
    ends = [e for e in (spans[m].end_ns for m in members) if e is not None]
    return MergedCall(
        session_id=sessions[members[0]],
        call_id=call_id,
        server=server,
        tool=tools[0].tool,
        arguments=next((t.arguments for t in tools if t.arguments is not None), None),
        result=next((t.result for t in tools if t.result is not None), None),
        is_error=any(t.is_error for t in tools),
        start_ns=min(starts) if starts else None,
        end_ns=max(ends) if ends else None,
        span_ids=tuple(members),
    )


# -- streaming ---------------------------------------------------------------------------------------


@dataclass(slots=True)
class _OpenTrace:
    first_source: str
    first_clock: int
    last_clock: int
    spans: dict[str, SpanFacts] = field(default_factory=dict)
    own_sessions: set[str] = field(default_factory=set)
    complete: bool = False
    size: int = 0


@dataclass(slots=True)
class _OpenSession:
    first_clock: int
    last_active: int
    user_texts: set[str] = field(default_factory=set)
    tool_lists: set[tuple[str, int]] = field(default_factory=set)


DEFAULT_TRACE_IDLE_SPANS = 20_000
DEFAULT_SESSION_IDLE_SPANS = 20_000
DEFAULT_MAX_BUFFERED_SPANS = 100_000
DEFAULT_MAX_BUFFERED_BYTES = 32 * 2**20
DEFAULT_REMEMBERED_SPANS = 100_000
_CLOSED_REMEMBERED = 10_000  # ended sessions remembered, to report one that gets events again


class SpanAssembler:
    """Buffer spans per trace as they arrive, in any order, and turn each finished trace into events.

    Time is counted in spans added (the *clock*), so the bounds hold whatever the timestamps say:

    - A trace is turned into events at the next :meth:`drain` after its root span (a span without a parent)
      was added; or once no span of it arrived for ``trace_idle_spans`` spans (a trace whose root is not in
      the input: a slice of a distributed trace); or, least recently active first, when more than
      ``max_buffered_spans`` spans, or span summaries of more than about ``max_buffered_bytes`` bytes (the
      text of arguments, results and user messages counted), are buffered. Only a :class:`SpanFacts` per
      span is buffered (ids, times, session key, and for tool and chat spans what they say), never the span.
    - A span that arrives after its trace was turned into events is assembled with the trace's links, kept
      for the last ``remembered_spans`` spans: it inherits its session and is dropped when it duplicates a
      call already emitted.
    - A session ends (:class:`SessionEnd`) once no buffered trace carries its key and no event went to it
      for ``session_idle_spans`` spans, and at :meth:`finish`. A session that gets events after it ended is
      reported and analysed as a new session of the same id.

    Within a session, a user message and a tool list are emitted once each, however many chat spans repeat
    them. Memory is bounded by the three limits (plus the ids of the last ended sessions), not by the input.
    """

    def __init__(
        self,
        *,
        trace_idle_spans: int = DEFAULT_TRACE_IDLE_SPANS,
        session_idle_spans: int = DEFAULT_SESSION_IDLE_SPANS,
        max_buffered_spans: int = DEFAULT_MAX_BUFFERED_SPANS,
        max_buffered_bytes: int = DEFAULT_MAX_BUFFERED_BYTES,
        remembered_spans: int = DEFAULT_REMEMBERED_SPANS,
    ) -> None:
        self.trace_idle_spans = trace_idle_spans
        self.session_idle_spans = session_idle_spans
        self.max_buffered_spans = max_buffered_spans
        self.max_buffered_bytes = max_buffered_bytes
        self.remembered_spans = remembered_spans
        self._clock = 0
        self._buffered = 0
        self._buffered_bytes = 0
        self._traces: OrderedDict[str, _OpenTrace] = OrderedDict()  # by last activity
        self._complete: deque[str] = deque()
        self._remembered: OrderedDict[str, dict[str, SpanLink]] = OrderedDict()
        self._remembered_count = 0
        self._pending_sessions: dict[str, int] = {}  # session key -> buffered traces carrying it
        self._sessions: OrderedDict[str, _OpenSession] = OrderedDict()  # by last activity
        self._closed: OrderedDict[str, None] = OrderedDict()
        self._cache = ParseCache()

    @property
    def buffered_spans(self) -> int:
        """Spans buffered now."""
        return self._buffered

    @property
    def buffered_bytes(self) -> int:
        """The rough size of what is buffered now (see :attr:`SpanFacts.size`)."""
        return self._buffered_bytes

    def add(self, record: SpanRecord, source: str) -> None:
        """Buffer one span; ``source`` (``file:line``) names where it came from in later errors."""
        self._clock += 1
        trace_id = record.trace_id
        trace = self._traces.get(trace_id)
        if trace is None:
            trace = self._traces[trace_id] = _OpenTrace(source, self._clock, self._clock)
        else:
            self._traces.move_to_end(trace_id)
            trace.last_clock = self._clock
        if record.span_id in trace.spans:
            return  # the same span exported twice
        remembered = self._remembered.get(trace_id)
        if remembered is not None and record.span_id in remembered:
            return
        facts = extract_span_facts(record, self._cache)
        trace.spans[record.span_id] = facts
        trace.size += facts.size
        self._buffered += 1
        self._buffered_bytes += facts.size
        if facts.session_key is not None and facts.session_key not in trace.own_sessions:
            trace.own_sessions.add(facts.session_key)
            self._pending_sessions[facts.session_key] = self._pending_sessions.get(facts.session_key, 0) + 1
        if facts.parent_id is None and not trace.complete:
            trace.complete = True
            self._complete.append(trace_id)

    def drain(self) -> Iterator[Record]:
        """Events of the traces that are ready, and the ends of idle sessions. Call after each batch of spans."""
        while self._complete:
            trace_id = self._complete.popleft()
            trace = self._traces.pop(trace_id, None)
            if trace is not None:
                yield from self._flush(trace_id, trace)
        while self._traces:
            trace_id, trace = next(iter(self._traces.items()))
            if (
                self._clock - trace.last_clock <= self.trace_idle_spans
                and self._buffered <= self.max_buffered_spans
                and self._buffered_bytes <= self.max_buffered_bytes
            ):
                break
            del self._traces[trace_id]
            yield from self._flush(trace_id, trace)
        cutoff = self._clock - self.session_idle_spans
        idle = []
        for session_id, session in self._sessions.items():
            if session.last_active > cutoff:
                break
            if not self._pending_sessions.get(session_id):
                idle.append(session_id)
        for session_id in idle:
            yield from self._end_session(session_id)

    def finish(self) -> Iterator[Record]:
        """The end of the input: every buffered trace becomes events and every session ends."""
        self._complete.clear()
        for trace_id, trace in sorted(self._traces.items(), key=lambda item: item[1].first_clock):
            yield from self._flush(trace_id, trace)
        self._traces.clear()
        for session_id in sorted(self._sessions, key=lambda s: self._sessions[s].first_clock):
            yield SessionEnd(session_id=session_id)
        self._sessions.clear()
        self._remembered.clear()
        self._remembered_count = 0

    def _end_session(self, session_id: str) -> Iterator[Record]:
        del self._sessions[session_id]
        self._closed[session_id] = None
        if len(self._closed) > _CLOSED_REMEMBERED:
            self._closed.popitem(last=False)
        yield SessionEnd(session_id=session_id)

    def _flush(self, trace_id: str, trace: _OpenTrace) -> Iterator[Record]:
        self._buffered -= len(trace.spans)
        self._buffered_bytes -= trace.size
        for key in trace.own_sessions:
            left = self._pending_sessions.get(key, 0) - 1
            if left > 0:
                self._pending_sessions[key] = left
            else:
                self._pending_sessions.pop(key, None)
        remembered = self._remembered.pop(trace_id, None)
        assembly = assemble_trace(trace_id, trace.spans, remembered.get if remembered else _no_link)
        if remembered is None:
            remembered = {}
        else:
            self._remembered_count -= len(remembered)
        remembered.update(assembly.links)
        self._remembered[trace_id] = remembered
        self._remembered_count += len(remembered)
        while self._remembered_count > self.remembered_spans and len(self._remembered) > 1:
            _, dropped = self._remembered.popitem(last=False)
            self._remembered_count -= len(dropped)
        yield from self._emit(assembly.items, trace.first_source)

    def _emit(self, items: list[TraceItem], source: str) -> Iterator[Record]:
        by_session: dict[str, list[TraceItem]] = {}
        for item in items:
            by_session.setdefault(item.session_id, []).append(item)
        for session_id, session_items in by_session.items():
            session = self._sessions.get(session_id)
            if session is None:
                if session_id in self._closed:
                    del self._closed[session_id]
                    yield RecordError(
                        source=source,
                        message=(
                            f"session {session_id!r} continues after it ended (no event for more than "
                            f"{self.session_idle_spans} spans); its later events are analysed as a separate session"
                        ),
                    )
                session = self._sessions[session_id] = _OpenSession(self._clock, self._clock)
            for item in session_items:
                event = _build_event(item, session)
                if event is not None:
                    yield event
            session.last_active = self._clock
            self._sessions.move_to_end(session_id)


def _build_event(item: TraceItem, session: _OpenSession) -> Event | None:
    payload = item.payload
    time = _time(item.time_ns)
    if isinstance(payload, MergedCall):
        if item.rank == _RANK_CALL:
            return ToolCall(
                session_id=item.session_id,
                time=time,
                call_id=payload.call_id,
                server=payload.server,
                tool=payload.tool,
                arguments=payload.arguments,
            )
        return ToolResult(
            session_id=item.session_id,
            time=time,
            call_id=payload.call_id,
            result=payload.result,
            is_error=payload.is_error,
        )
    if isinstance(payload, str):
        if payload in session.user_texts:
            return None
        session.user_texts.add(payload)
        return UserMessage(session_id=item.session_id, time=time, text=payload)
    server, tools = payload
    key = (server, hash(orjson.dumps(tools, option=orjson.OPT_SORT_KEYS, default=str)))
    if key in session.tool_lists:
        return None
    session.tool_lists.add(key)
    return ToolsListed(session_id=item.session_id, time=time, server=server, tools=list(tools))


def _time(ns: int) -> datetime | None:
    if ns <= 0:
        return None
    return datetime.fromtimestamp(ns / 1e9, tz=UTC)
