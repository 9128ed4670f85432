"""What one span says: its session key, the tool call it records, user messages and offered tool lists.

Three attribute vocabularies are read, and may be mixed on one span: the OpenTelemetry GenAI and MCP
semantic conventions (:mod:`monitor.spans._semconv`), OpenInference (:mod:`monitor.spans._openinference`)
and Traceloop / OpenLLMetry (:mod:`monitor.spans._traceloop`); Langfuse's session key too
(:mod:`monitor.spans._langfuse`).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import orjson

from monitor.jsonrecords import LARGE_RECORD, decode_json_record, flatten_json_text
from monitor.models import is_sessionless_protocol, split_mcp_name
from monitor.spans import _langfuse as langfuse
from monitor.spans import _openinference as openinference
from monitor.spans import _semconv as semconv
from monitor.spans import _traceloop as traceloop
from monitor.spans._record import SpanRecord, StatusCode

SESSION_KEYS = (
    semconv.GEN_AI_CONVERSATION_ID,
    openinference.SESSION_ID,
    langfuse.LANGFUSE_SESSION_ID,
    traceloop.TRACELOOP_SESSION_ID,
)
"""Attributes that name a session (the host's conversation), in precedence order."""

PROTOCOL_SESSION_KEY = semconv.MCP_SESSION_ID
"""The attribute of an MCP protocol session: the session key only when no span of the trace names a
conversation (:data:`SESSION_KEYS`), and never for a peer of a protocol version without protocol sessions
(``mcp.protocol.version`` 2026-07-28 or later)."""

UNKNOWN_SERVER = "unknown"
"""The server of a tool call whose spans name none."""

T = TypeVar("T")

_CONTAINERS = (dict, list)
_FACTS_SIZE = 400  # bytes of a span's summary without content: ids, times, the object itself

_MAX_INDEX = 10_000  # bound on flattened list indexes read (llm.input_messages.<i>, llm.tools.<i>, ...)


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
    protocol_session_key: str | None = None
    """``mcp.session.id`` (:data:`PROTOCOL_SESSION_KEY`), read only as the trace's last resort."""
    tool: ToolFacts | None = None
    user_texts: tuple[str, ...] = ()
    tool_lists: tuple[ToolList, ...] = ()
    size: int = _FACTS_SIZE
    """A rough count of the bytes kept: what bounds the buffer, with the count of spans."""
    source: str | None = None
    """Where the span was read (``file:line`` or ``file#<pointer>``): the ``source`` of its events."""


class ParseCache:
    """A small LRU of what was read from large attributes, keyed by their raw text.

    Chat spans repeat the same tool definitions and, within a turn, the same input messages.
    """

    def __init__(self, size: int = 256) -> None:
        self._size = size
        self._items: OrderedDict[Any, Any] = OrderedDict()

    def get(self, key: Any, compute: Callable[[], T]) -> T:
        """Return the cached value for ``key``, computed by ``compute`` on a miss (an unhashable key is not kept)."""
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
    """Return True for a span that executes a tool, in any of the three vocabularies."""
    return (
        attributes.get(semconv.GEN_AI_OPERATION_NAME) == semconv.EXECUTE_TOOL
        or attributes.get(semconv.MCP_METHOD_NAME) == semconv.MCP_TOOLS_CALL
        or _upper(attributes.get(openinference.OPENINFERENCE_SPAN_KIND)) == openinference.OPENINFERENCE_TOOL
        or _lower(attributes.get(traceloop.TRACELOOP_SPAN_KIND)) == traceloop.TRACELOOP_TOOL
    )


def read_session_key(attributes: Mapping[str, Any]) -> str | None:
    """Return the session these attributes name: the first of :data:`SESSION_KEYS` present and not empty, else None."""
    for key in SESSION_KEYS:
        value = attributes.get(key)
        if value is not None and value != "" and not isinstance(value, _CONTAINERS):
            return str(value)
    return None


def read_protocol_session_key(attributes: Mapping[str, Any]) -> str | None:
    """Return the MCP protocol session (``mcp.session.id``) these attributes name; None when absent, empty, or
    when ``mcp.protocol.version`` names a version without protocol sessions (2026-07-28 and later)."""
    value = attributes.get(PROTOCOL_SESSION_KEY)
    if value is None or value == "" or isinstance(value, _CONTAINERS):
        return None
    if is_sessionless_protocol(attributes.get(semconv.MCP_PROTOCOL_VERSION)):
        return None
    return str(value)


def extract_span_facts(record: SpanRecord, cache: ParseCache | None = None) -> SpanFacts:
    """Return the :class:`SpanFacts` of one span: its session key, tool call, user messages and tool lists."""
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
        protocol_session_key=read_protocol_session_key(attrs),
        tool=tool,
        user_texts=user_texts,
        tool_lists=extract_tool_lists(attrs, cache),
        size=size,
    )


def _raw_size(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict | list):
        try:
            return len(orjson.dumps(value, default=str))
        except TypeError:  # an integer beyond 64 bits, or nesting beyond orjson's limit: its text instead
            return len(flatten_json_text(value)) + 8
    return 8


def extract_tool_facts(record: SpanRecord) -> ToolFacts:
    """Return the :class:`ToolFacts` of a tool span: tool name, server hints, call id, arguments, result, error.

    Arguments come from the first present of ``gen_ai.tool.call.arguments``, ``input.value``,
    ``tool_call.function.arguments``, ``traceloop.entity.input``, ``mcp.request.argument.*`` and
    ``tool.parameters`` (unless it looks like a parameter schema). A JSON string is decoded; a value that is
    not an object is kept as ``{"input": value}``; nothing recorded gives None. The result is the first of
    ``gen_ai.tool.call.result``, ``output.value``, ``traceloop.entity.output``, ``mcp.tool.result.content``,
    decoded when it is a JSON object or array, else kept as recorded; None when none is present.
    """
    a = record.attributes
    raw_name = _first_str(
        a, semconv.GEN_AI_TOOL_NAME, openinference.TOOL_NAME, traceloop.TRACELOOP_ENTITY_NAME, semconv.MCP_TOOL_NAME
    )
    if raw_name is None:
        raw_name = _name_from_span_name(record.name)
    split = split_mcp_name(raw_name)
    prefix_server, tool = split if split else (None, raw_name)
    explicit = _first_str(a, semconv.MCP_SERVER_NAME)
    if explicit is None:
        workflow = a.get(traceloop.TRACELOOP_WORKFLOW_NAME)
        if isinstance(workflow, str) and workflow.endswith(".mcp") and len(workflow) > 4:
            explicit = workflow[:-4]
    address = _first_str(a, semconv.SERVER_ADDRESS)
    arguments = _as_arguments(a.get(semconv.GEN_AI_TOOL_CALL_ARGUMENTS))
    if arguments is None:
        arguments = _as_arguments(a.get(openinference.INPUT_VALUE))
    if arguments is None:
        arguments = _as_arguments(a.get(openinference.TOOL_CALL_FUNCTION_ARGUMENTS))
    if arguments is None:
        arguments = _traceloop_arguments(a.get(traceloop.TRACELOOP_ENTITY_INPUT))
    if arguments is None and (semconv.MCP_METHOD_NAME in a or semconv.MCP_TOOL_NAME in a):
        arguments = _prefixed_arguments(a, semconv.MCP_REQUEST_ARGUMENT_PREFIX)
    if arguments is None:
        parameters = _as_arguments(a.get(openinference.TOOL_PARAMETERS))
        if parameters is not None and not _looks_like_schema(parameters):
            arguments = parameters
    result = None
    for key in (
        semconv.GEN_AI_TOOL_CALL_RESULT,
        openinference.OUTPUT_VALUE,
        traceloop.TRACELOOP_ENTITY_OUTPUT,
        semconv.MCP_TOOL_RESULT_CONTENT,
    ):
        value = a.get(key)
        if value is not None:
            result = _as_result(value)
            break
    return ToolFacts(
        tool=tool,
        explicit_server=explicit,
        prefix_server=prefix_server,
        address_server=address,
        call_id=_first_id(a, semconv.GEN_AI_TOOL_CALL_ID, openinference.TOOL_CALL_ID, openinference.TOOL_ID),
        rpc_id=_first_id(a, semconv.JSONRPC_REQUEST_ID, semconv.MCP_REQUEST_ID),
        arguments=arguments,
        result=result,
        is_error=record.status_code is StatusCode.ERROR or bool(a.get(semconv.ERROR_TYPE)),
    )


def extract_user_texts(attributes: Mapping[str, Any]) -> tuple[str, ...]:
    """Return the texts of the ``user`` messages in a chat span's input (GenAI, OpenInference or Traceloop form)."""
    texts: list[str] = []
    raw = attributes.get(semconv.GEN_AI_INPUT_MESSAGES)
    if raw is not None:
        messages = _parse(raw)
        if isinstance(messages, list):
            for message in messages:
                if isinstance(message, dict) and message.get("role") == "user":
                    text = _message_text(message.get("parts", message.get("content")))
                    if text:
                        texts.append(text)
    if f"{openinference.LLM_INPUT_MESSAGES}.0.message.role" in attributes:
        for i in range(_MAX_INDEX):
            prefix = f"{openinference.LLM_INPUT_MESSAGES}.{i}.message"
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
    if f"{traceloop.GEN_AI_PROMPT}.0.role" in attributes:
        for i in range(_MAX_INDEX):
            role = attributes.get(f"{traceloop.GEN_AI_PROMPT}.{i}.role")
            if role is None:
                break
            if role == "user":
                text = _message_text(_parse(attributes.get(f"{traceloop.GEN_AI_PROMPT}.{i}.content")))
                if text:
                    texts.append(text)
    return tuple(texts)


def extract_tool_lists(attributes: Mapping[str, Any], cache: ParseCache | None = None) -> tuple[ToolList, ...]:
    """Return the tool definitions offered to the model, grouped by server, as ``tools/list`` entries.

    Read from ``gen_ai.tool.definitions``, OpenInference ``llm.tools.<i>.tool.*`` or Traceloop
    ``llm.request.functions.<i>.*``. A tool named ``mcp__<server>__<tool>`` is listed under ``server`` as
    ``tool``; any other under :data:`UNKNOWN_SERVER`, the server its calls get when they name none either.
    A definition's ``parameters`` (or ``input_schema``) becomes ``inputSchema``; other members, such as MCP
    ``annotations`` carried along, are kept.
    """
    lists: tuple[ToolList, ...] = ()
    raw = attributes.get(semconv.GEN_AI_TOOL_DEFINITIONS)
    if raw is not None:
        key = ("gen_ai", raw) if isinstance(raw, str) else None
        lists += _cached(cache, key, lambda: _group_definitions(_parse(raw)))
    if (
        f"{openinference.LLM_TOOLS}.0.tool.json_schema" in attributes
        or f"{openinference.LLM_TOOLS}.0.tool.name" in attributes
    ):
        entries = []
        for i in range(_MAX_INDEX):
            prefix = f"{openinference.LLM_TOOLS}.{i}.tool"
            schema = attributes.get(f"{prefix}.json_schema")
            name = attributes.get(f"{prefix}.name")
            if schema is None and name is None:
                break
            entries.append((schema, name, attributes.get(f"{prefix}.description")))
        lists += _cached(
            cache, ("openinference", tuple(entries)), lambda: _group_definitions(_openinference_tools(entries))
        )
    if f"{traceloop.LLM_REQUEST_FUNCTIONS}.0.name" in attributes:
        functions: list[Any] = []
        for i in range(_MAX_INDEX):
            prefix = f"{traceloop.LLM_REQUEST_FUNCTIONS}.{i}"
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
    raw = attributes.get(semconv.GEN_AI_INPUT_MESSAGES)
    if (
        isinstance(raw, str)
        and f"{openinference.LLM_INPUT_MESSAGES}.0.message.role" not in attributes
        and f"{traceloop.GEN_AI_PROMPT}.0.role" not in attributes
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
    """Decode a JSON string (twice when it was encoded twice); anything else, or bad JSON, as it is.

    Decoded as every record is (:func:`~monitor.jsonrecords.decode_json_record`): every value of a repeated key is
    kept, and nesting beyond the bound is read as text."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if not text or text[0] not in '{["':
        return value
    try:
        parsed = decode_json_record(text)[0]
    except orjson.JSONDecodeError:
        return value
    if isinstance(parsed, str) and parsed.strip()[:1] in ("{", "["):
        try:
            return decode_json_record(parsed)[0]
        except orjson.JSONDecodeError:
            return parsed
    return parsed


def _as_arguments(value: Any) -> dict[str, Any] | None:
    if value is None or value == "":
        return None
    parsed = _parse_large(value) if isinstance(value, str) and len(value) >= LARGE_RECORD else _parse(value)
    if isinstance(parsed, dict):
        return parsed
    if parsed is None:
        return None
    return {"input": parsed}


def _parse_large(value: str) -> Any:
    """Arguments as long as a large record: their structure (destinations stay under their keys) with long strings
    kept by head and tail, as the engine examines them, so the text is not held twice more; longer than the
    engine's bound, they still count as cut there. Anything this cannot read is parsed as every value is."""
    try:
        return decode_json_record(value.encode("utf-8"), abridge=True)[0]
    except (UnicodeEncodeError, orjson.JSONDecodeError):
        return _parse(value)


def _as_result(value: Any) -> Any:
    # A result this long is handed over as its text: the engine examines a result's head and tail only, and
    # decoding it whole here would hold it three times (the text, the parser's copy, the value).
    if isinstance(value, str) and len(value) >= LARGE_RECORD:
        return value
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
    for prefix in (f"{semconv.EXECUTE_TOOL} ", f"{semconv.MCP_TOOLS_CALL} "):
        if name.startswith(prefix) and len(name) > len(prefix):
            return name[len(prefix) :].strip()
    if name.endswith(".tool") and len(name) > 5:
        return name[:-5]
    return name or "unknown"


def _upper(value: Any) -> Any:
    return value.upper() if isinstance(value, str) else value


def _lower(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value
