"""MCP JSON-RPC logs: the messages a host and an MCP server exchanged, one JSON line each.

Each line is a JSON-RPC 2.0 message, a batch of them, or a *wrapper* object that adds the direction, time,
session and server the wire does not say (the line format and its field spellings:
:mod:`monitor.ingest._jsonrpc`).

Session key, first found: the host's conversation id (wrapper ``conversation_id``, ``conversationId``,
``gen_ai.conversation.id``), the host's session name (``session``, ``session_id``, ``sessionId``), a
protocol session id (``mcp_session_id``, ``mcpSessionId``, ``Mcp-Session-Id``), else the file's path below
the input folder without its extension (as for AgentDojo runs). MCP 2026-07-28 has no protocol session, so
its logs are keyed by the host's conversation id, or by the file. Server name: the wrapper's server field,
else ``serverInfo.name`` of the ``initialize`` result (or, for 2026-07-28 servers, which have no
``initialize``, the ``io.modelcontextprotocol/serverInfo`` stamp in a result's ``_meta``), else the file
name without its extension. One session may hold several servers when the wrapper names them; a line
without a server field belongs to the session's only server when it has one.

Protocol versions (:data:`monitor.models.PROTOCOL_VERSIONS`): logs of every known version are read the
same way; 2026-07-28 traffic names its version in each request's ``params._meta`` instead of an
``initialize``, and ``trifecta lint`` checks the rules each version changed.

**Extension, not part of MCP.** MCP traffic carries no user messages, and the engine needs the user's words
to tell a destination the user chose from one an attacker suggested. A line
``{"kind": "user_message", "session": ..., "timestamp": ..., "text": "..."}`` gives one: it becomes a
:class:`~monitor.models._events.UserMessage`. A host that logs MCP traffic can write it alongside.

How messages become events:

- ``tools/call`` request → :class:`ToolCall` whose call id is the JSON-RPC id (``"7"`` for ``7``); if a
  call with the same id is still open in the session (another server), the id is prefixed with the server
  name. The response → :class:`ToolResult`: the ``CallToolResult`` as ``result`` (``is_error`` from its
  ``isError``), or the JSON-RPC ``error`` object with ``is_error=True``. Requests and responses pair by id,
  per direction (client and server number their requests independently); an id may be reused once
  answered. A request whose id is reused while it is still open is taken as never answered (below).
- A ``tools/call`` answered with ``resultType: "input_required"`` (MCP 2026-07-28: the server needs the
  user's input before it runs the tool) has no result yet: the client sends the call again with
  ``inputResponses`` and the ``requestState`` the server gave, and that retry (same tool and arguments) is the
  same call, whose response is its result. A call never sent again ends, when the session ends, with
  ``ToolResult(result=None, is_error=True)``: the server did not run it.
- ``tools/list`` results → :class:`ToolsListed` with the raw tools (the engine parses annotations
  leniently) and the server's ``identity``: the ``serverInfo`` (name, version) its connection announced, if any
  (:func:`~monitor.models.read_announced_identity`; a later ``initialize`` replaces it). Pages
  (``nextCursor``) are merged into one event; a listing cut short (a new first-page request, a ``tools/call``
  or the end of the session before the last page) is emitted as far as it got, since the host saw those
  tools. A later listing that differs from the last one emitted, as after
  ``notifications/tools/list_changed``, is emitted again; an identical one is not.
- ``notifications/cancelled`` naming an open ``tools/call`` ends the call: ``ToolResult(result=None,
  is_error=True)``. A response that arrives after the cancellation is ignored, as the protocol says.
- A response with no open request, a malformed message and an unusable line are reported as
  :class:`RecordError` (``file:line``) and skipped. A request still unanswered when its session ends (end of
  file) is reported at its line, and a ``tools/call`` among them still gets ``ToolResult(result=None)``: the
  request was sent, so the server may have run it and its output may have reached the model; counting it as
  run keeps its legs in the session instead of silently dropping them.
- ``sampling/createMessage`` (the server asks the host's model) carries ``messages`` with role ``user``,
  but that text is written by the server, not typed by the user: it is never a :class:`UserMessage` (that
  would let a server sanction its own destinations). Sampling, elicitation, roots, resources and prompts
  traffic does not become events. An empty file, a repeated key and too deep nesting are errors too.
"""

from __future__ import annotations

import hashlib
import re
from collections import OrderedDict
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import IO, Any

import orjson
from pydantic import TypeAdapter, ValidationError

from monitor.ingest._files import iter_lines, stream_file
from monitor.ingest._jsonrpc import (
    DIRECTION_KEYS,
    LOG_SUFFIXES,
    MESSAGE_KEYS,
    SERVER_KEYS,
    SESSION_KEYS,
    TIME_KEYS,
    IdKey,
    Peer,
    describe_error,
    first_name,
    format_id,
    is_log_line,
    is_message,
    parse_direction,
    read_id_key,
    strip_log_suffix,
)
from monitor.ingest._mcp_state import (
    Connection,
    Envelope,
    Request,
    Session,
    asks_for_input,
    await_key,
    find_request_origin,
    pop_awaiting,
)
from monitor.jsonrecords import decode_json_record
from monitor.models import (
    RecordError,
    RecordStream,
    SessionEnd,
    ToolCall,
    ToolResult,
    ToolsListed,
    UserMessage,
    read_announced_identity,
)

DEFAULT_MAX_OPEN_SESSIONS = 1000
USER_MESSAGE_KIND = "user_message"

_SNIFF_LINES = 50
_CANCELLED_REMEMBERED = 256
_AWAITING_REMEMBERED = 256
_CLOSED_REMEMBERED_FACTOR = 10
_TIME_ADAPTER: TypeAdapter[datetime] = TypeAdapter(datetime)
_BARE_PREFIX = re.compile(rb'\s*\[?\s*\{\s*"jsonrpc"\s*:\s*"2\.0"')
_WRAPPED_PREFIX = re.compile(rb'"(?:message|msg|payload)"\s*:\s*\[?\s*\{\s*"jsonrpc"\s*:\s*"2\.0"')


def sniff(head: bytes) -> bool:
    """True when the first bytes of a file look like an MCP JSON-RPC log (bare, wrapped or batched)."""
    lines = [line for line in head.split(b"\n") if line.strip()]
    for line in lines[:_SNIFF_LINES]:
        try:
            doc = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue  # a line cut by the 64 KiB limit, or garbage: look further
        if is_log_line(doc):
            return True
        if isinstance(doc, dict) and doc.get("kind") == USER_MESSAGE_KIND:
            continue  # our extension line: neutral, and shaped like a native event
        return False
    # The first line may be longer than the head (a large tools/list result): judge its start.
    first = lines[0] if lines else b""
    return bool(_BARE_PREFIX.match(first) or _WRAPPED_PREFIX.search(first[:2048]))


def read_mcp(path: Path, root: Path | None = None, max_open_sessions: int = DEFAULT_MAX_OPEN_SESSIONS) -> RecordStream:
    """Stream the events of an MCP JSON-RPC log file (or of every log file in a folder tree).

    Sessions without a session field are keyed by the file's path below ``root`` (the input path given by
    the user; for a single file, its folder), without the extension. Sessions end at the end of the file,
    or earlier when more than ``max_open_sessions`` are interleaved (the least recently active one first).
    """
    if path.is_dir():
        for file in sorted(p for p in path.rglob("*") if p.is_file() and p.name.endswith(LOG_SUFFIXES)):
            yield from read_mcp(file, root or path, max_open_sessions)
        return
    base = root or path.parent
    try:
        relative = PurePosixPath(*path.relative_to(base).parts)
    except ValueError:
        relative = PurePosixPath(path.name)
    session = strip_log_suffix(str(relative))
    server = strip_log_suffix(path.name)
    yield from stream_file(path, read_mcp_stream, session, server, max_open_sessions)


def read_mcp_stream(
    fh: IO[bytes],
    name: str,
    session: str,
    server: str,
    max_open_sessions: int = DEFAULT_MAX_OPEN_SESSIONS,
) -> RecordStream:
    """Stream the events of an MCP log read from ``fh``.

    ``name`` names the input in errors; ``session`` and ``server`` are the session key and server name
    used when the log does not give them.
    """
    reader = _LogReader(name, session, server, max_open_sessions)
    blank = True
    for lineno, line in iter_lines(fh):
        blank = False
        yield from reader.read_line(lineno, line)
    if blank:
        yield RecordError(source=name, message="empty file: no MCP messages in it")
    yield from reader.finish()


class _LogReader:
    """Turns the lines of one log into records, keeping per-session state."""

    def __init__(self, name: str, session: str, server: str, max_open_sessions: int) -> None:
        self.name = name
        self.default_session = session
        self.default_server = server
        self.max_open_sessions = max_open_sessions
        self.sessions: OrderedDict[str, Session] = OrderedDict()
        self.closed: OrderedDict[str, None] = OrderedDict()

    # -- lines ---------------------------------------------------------------------------------------------

    def read_line(self, lineno: int, line: bytes | bytearray) -> RecordStream:
        """Read one non-blank line."""
        source = f"{self.name}:{lineno}"
        try:
            doc, found = decode_json_record(line)
        except orjson.JSONDecodeError as exc:
            yield RecordError(source=source, message=f"not JSON: {exc}")
            return
        yield from (RecordError(source=source, message=f"{p.where or 'line'}: {p.message}") for p in found)
        if isinstance(doc, list):
            yield from self._read_payload(lineno, Envelope(self.default_session, None, None, None, source), doc)
            return
        if not isinstance(doc, dict):
            yield RecordError(source=source, message="not a JSON-RPC message, a batch or a wrapper object")
            return
        problems: list[str] = []
        envelope = _read_envelope(doc, problems, source, self.default_session)
        for problem in problems:
            yield RecordError(source=source, message=problem)
        if envelope is None:
            return
        if is_message(doc):  # a bare message; wrapper fields written inline are read too
            yield from self._read_payload(lineno, envelope, doc)
            return
        if doc.get("kind") == USER_MESSAGE_KIND:
            yield from self._read_user_message(lineno, envelope, doc)
            return
        key = next((k for k in MESSAGE_KEYS if k in doc), None)
        if key is None:
            kind = doc.get("kind")
            what = f"unknown kind {kind!r}" if kind is not None else "no JSON-RPC message"
            yield RecordError(source=source, message=f"{what}: expected one of the fields {', '.join(MESSAGE_KEYS)}")
            return
        payload = doc[key]
        if isinstance(payload, str):
            try:
                payload, found = decode_json_record(payload)
            except orjson.JSONDecodeError as exc:
                yield RecordError(source=source, message=f"{key!r} is a string but not JSON: {exc}")
                return
            yield from (RecordError(source=source, message=f"/{key} (text){p.where}: {p.message}") for p in found)
        yield from self._read_payload(lineno, envelope, payload)

    def _read_user_message(self, lineno: int, envelope: Envelope, doc: dict[str, Any]) -> RecordStream:
        text = doc.get("text")
        if not isinstance(text, str):
            yield RecordError(source=f"{self.name}:{lineno}", message="user_message line without a 'text' string")
            return
        yield from self._open_session(envelope.session, lineno)
        yield UserMessage(session_id=envelope.session, time=envelope.time, text=text, source=envelope.source)

    def _read_payload(self, lineno: int, envelope: Envelope, payload: Any) -> RecordStream:
        source = f"{self.name}:{lineno}"
        if isinstance(payload, list):
            if not payload:
                yield RecordError(source=source, message="empty batch")
                return
            for i, message in enumerate(payload):
                yield from self._read_message(lineno, envelope, message, f"batch item {i}: ")
        else:
            yield from self._read_message(lineno, envelope, payload, "")

    # -- messages ------------------------------------------------------------------------------------------

    def _read_message(self, lineno: int, envelope: Envelope, message: Any, where: str) -> RecordStream:
        source = f"{self.name}:{lineno}"
        if not isinstance(message, dict) or not is_message(message):
            yield RecordError(source=source, message=f"{where}not a JSON-RPC message")
            return
        has_id = message.get("id") is not None
        id_key = read_id_key(message.get("id"))
        if has_id and id_key is None:
            yield RecordError(source=source, message=f"{where}id {message['id']!r} is neither a string nor a number")
            return
        yield from self._open_session(envelope.session, lineno)
        connection = self._connection(envelope)
        if "method" in message:
            method = message["method"]
            if not isinstance(method, str) or not method:
                yield RecordError(source=source, message=f"{where}'method' is not a non-empty string")
            elif "id" in message and not has_id:
                yield RecordError(source=source, message=f"{where}{method} request with a null id; skipped")
            elif id_key is not None:
                yield from self._read_request(lineno, envelope, connection, message, method, id_key, where)
            else:
                yield from _read_notification(envelope, connection, message, method)
        elif "result" in message or "error" in message:
            if "result" in message and "error" in message:
                yield RecordError(source=source, message=f"{where}response with both 'result' and 'error'; skipped")
            elif id_key is None:
                detail = describe_error(message.get("error")) if "error" in message else "a result"
                yield RecordError(source=source, message=f"{where}response without an id ({detail}); skipped")
            else:
                yield from self._read_response(lineno, envelope, connection, message, id_key, where)

    def _read_request(
        self,
        lineno: int,
        envelope: Envelope,
        connection: Connection,
        message: dict[str, Any],
        method: str,
        id_key: IdKey,
        where: str,
    ) -> RecordStream:
        source = f"{self.name}:{lineno}"
        origin = find_request_origin(method, envelope.sender)
        key = (origin, id_key)
        connection.cancelled.pop(key, None)
        previous = connection.requests.pop(key, None)
        if previous is not None:
            yield from self._abandon(
                envelope.session, previous, f"its id was reused at line {lineno} before a response arrived"
            )
        params = message.get("params")
        request = Request(method=method, line=lineno, id_text=format_id(id_key))
        if method == "tools/list":
            request.cursor = isinstance(params, dict) and params.get("cursor") is not None
            if not request.cursor:
                yield from self._flush_pages(envelope.session, connection)
        elif method == "tools/call":
            name = params.get("name") if isinstance(params, dict) else None
            if not isinstance(name, str) or not name:
                yield RecordError(source=source, message=f"{where}tools/call without a tool name; skipped")
            else:
                arguments = params.get("arguments") if isinstance(params, dict) else None
                if arguments is not None and not isinstance(arguments, dict):
                    yield RecordError(
                        source=source, message=f"{where}tools/call arguments are not an object; read as unknown"
                    )
                    arguments = None
                elif arguments is None:
                    arguments = {}  # MCP: a call without arguments has none
                yield from self._flush_pages(envelope.session, connection)
                request.tool = name
                request.arguments = arguments
                earlier = pop_awaiting(connection, params, request)
                if earlier is not None:
                    request.call_id = earlier.call_id  # the retry of a call that asked for input: the same call
                    connection.requests[key] = request
                    return
                request.call_id = self._call_id(envelope.session, request.id_text, self._server_of(connection))
                yield ToolCall(
                    session_id=envelope.session,
                    time=envelope.time,
                    call_id=request.call_id,
                    server=self._server_of(connection),
                    tool=name,
                    arguments=arguments,
                    source=envelope.source,
                )
        connection.requests[key] = request

    def _read_response(
        self,
        lineno: int,
        envelope: Envelope,
        connection: Connection,
        message: dict[str, Any],
        id_key: IdKey,
        where: str,
    ) -> RecordStream:
        source = f"{self.name}:{lineno}"
        # A response answers a request of the other side; without a direction, try the client's first.
        order = (envelope.sender.other, envelope.sender) if envelope.sender else (Peer.CLIENT, Peer.SERVER)
        found = next(((p, id_key) for p in order if (p, id_key) in connection.requests), None)
        if found is None:
            if any((p, id_key) in connection.cancelled for p in order):
                return  # the protocol allows a response to cross its cancellation: ignore it
            yield RecordError(
                source=source,
                message=f"{where}response to id {format_id(id_key)}, which no open request of this session "
                f"(server {self._server_of(connection)!r}) sent; ignored",
            )
            return
        request = connection.requests.pop(found)
        result = message.get("result")
        self._learn_server_name(connection, request.method, result)
        if request.call_id is not None and asks_for_input(result):
            yield from self._await_input(envelope, connection, request, result)
        elif request.call_id is not None:
            yield _read_tool_result(envelope, request.call_id, message)
        elif request.method == "tools/list":
            if "error" in message:
                yield from self._flush_pages(envelope.session, connection)
            elif not isinstance(result, dict) or not isinstance(result.get("tools"), list):
                yield RecordError(source=source, message=f"{where}tools/list result without a 'tools' array")
            else:
                yield from self._add_page(envelope, connection, result, request.cursor)

    def _await_input(
        self, envelope: Envelope, connection: Connection, request: Request, result: dict[str, Any]
    ) -> RecordStream:
        """Keep a call answered with ``input_required`` open until its retry (bounded: the oldest ends)."""
        key = await_key(result.get("requestState"), request)
        previous = connection.awaiting.pop(key, None)
        if previous is not None:
            yield from _end_unrun(envelope.session, previous, envelope.source)
        connection.awaiting[key] = request
        if len(connection.awaiting) > _AWAITING_REMEMBERED:
            _, oldest = connection.awaiting.popitem(last=False)
            yield from _end_unrun(envelope.session, oldest, envelope.source)

    # -- tool listings ---------------------------------------------------------------------------------------

    def _add_page(
        self, envelope: Envelope, connection: Connection, result: dict[str, Any], continued: bool
    ) -> RecordStream:
        if not continued:
            yield from self._flush_pages(envelope.session, connection)
        connection.pages = [*(connection.pages or []), *result["tools"]]
        connection.pages_time = envelope.time
        connection.pages_source = envelope.source
        next_cursor = result.get("nextCursor")
        if not (isinstance(next_cursor, str) and next_cursor):
            yield from self._flush_pages(envelope.session, connection)

    def _flush_pages(self, session: str, connection: Connection) -> RecordStream:
        """Emit the listing gathered so far, unless it is the one emitted last."""
        tools, connection.pages = connection.pages, None
        if tools is None:
            return
        digest = hashlib.sha256(orjson.dumps(tools, option=orjson.OPT_SORT_KEYS)).digest()
        if digest == connection.listed:
            return
        connection.listed = digest
        yield ToolsListed(
            session_id=session,
            time=connection.pages_time,
            server=self._server_of(connection),
            tools=tools,
            source=connection.pages_source,
            identity=connection.identity,
        )

    # -- sessions --------------------------------------------------------------------------------------------

    def _open_session(self, sid: str, lineno: int) -> RecordStream:
        session = self.sessions.get(sid)
        if session is None:
            if sid in self.closed:
                del self.closed[sid]
                yield RecordError(
                    source=f"{self.name}:{lineno}",
                    message=(
                        f"session {sid!r} continues after it was closed (more than {self.max_open_sessions} "
                        "sessions interleaved); its later events are analysed as a separate session"
                    ),
                )
            self.sessions[sid] = Session(lineno)
            if len(self.sessions) > self.max_open_sessions:
                oldest = next(iter(self.sessions))
                yield from self._end_session(oldest)
                self.closed[oldest] = None
                if len(self.closed) > _CLOSED_REMEMBERED_FACTOR * self.max_open_sessions:
                    self.closed.popitem(last=False)
        self.sessions.move_to_end(sid)

    def _connection(self, envelope: Envelope) -> Connection:
        connections = self.sessions[envelope.session].connections
        if envelope.server is None and len(connections) == 1:
            return next(iter(connections.values()))
        connection = connections.get(envelope.server)
        if connection is None:
            connection = connections[envelope.server] = Connection(envelope.server)
        return connection

    def _server_of(self, connection: Connection) -> str:
        return connection.explicit_server or connection.announced_server or self.default_server

    @staticmethod
    def _learn_server_name(connection: Connection, method: str, result: Any) -> None:
        initialize = method == "initialize"
        announced = read_announced_identity(result, initialize=initialize)
        if connection.announced_server is None and announced is not None:
            connection.announced_server = announced.name
        if initialize or connection.identity is None:
            connection.identity = announced or connection.identity

    def _call_id(self, sid: str, id_text: str, server: str) -> str:
        """The JSON-RPC id, unless a call of the session still open (on another server) has it."""
        open_ids = {
            r.call_id
            for c in self.sessions[sid].connections.values()
            for r in (*c.requests.values(), *c.awaiting.values())
            if r.call_id is not None
        }
        candidate = id_text
        if candidate in open_ids:
            candidate = f"{server}:{id_text}"
        n = 2
        while candidate in open_ids:
            candidate = f"{server}:{id_text}#{n}"
            n += 1
        return candidate

    def _abandon(self, sid: str, request: Request, why: str) -> RecordStream:
        what = f"tools/call {request.tool!r}" if request.tool else request.method
        counted = "; counted as run, with no recorded result" if request.call_id else ""
        yield RecordError(
            source=f"{self.name}:{request.line}",
            message=f"{what} (id {request.id_text}) got no response: {why}{counted}",
        )
        if request.call_id is not None:
            yield ToolResult(session_id=sid, call_id=request.call_id, result=None, source=f"{self.name}:{request.line}")

    def _end_session(self, sid: str) -> RecordStream:
        session = self.sessions.pop(sid)
        for connection in session.connections.values():
            yield from self._flush_pages(sid, connection)
        requests = (r for c in session.connections.values() for r in c.requests.values())
        for request in sorted(requests, key=lambda r: r.line):
            yield from self._abandon(sid, request, "the log ended first")
        for connection in session.connections.values():
            for request in connection.awaiting.values():
                yield from _end_unrun(sid, request, f"{self.name}:{request.line}")
        yield SessionEnd(session_id=sid, source=self.name)

    def finish(self) -> RecordStream:
        """End every open session, in order of first appearance."""
        for sid in sorted(self.sessions, key=lambda s: self.sessions[s].first_line):
            yield from self._end_session(sid)


def _read_envelope(doc: dict[str, Any], problems: list[str], source: str, default_session: str) -> Envelope | None:
    """The wrapper fields of a line (session, server, direction, time); None, with the problem, when unreadable."""
    try:
        session = first_name(doc, SESSION_KEYS)
        server = first_name(doc, SERVER_KEYS)
    except ValueError as exc:
        problems.append(f"{exc}; line skipped")
        return None
    sender = None
    direction_key = next((k for k in DIRECTION_KEYS if k in doc), None)
    if direction_key is not None and doc[direction_key] is not None:
        sender = parse_direction(doc[direction_key])
        if sender is None:
            problems.append(f"unknown direction {doc[direction_key]!r}; read as if it were not given")
    time = None
    time_key = next((k for k in TIME_KEYS if k in doc), None)
    if time_key is not None and doc[time_key] is not None:
        try:
            time = _TIME_ADAPTER.validate_python(doc[time_key])
        except ValidationError:
            problems.append(f"unreadable {time_key} {doc[time_key]!r}; read without a time")
    return Envelope(session or default_session, server or None, sender, time, source)


def _read_tool_result(envelope: Envelope, call_id: str, message: dict[str, Any]) -> ToolResult:
    """The result of a call from its response: an error response, or a result (``isError`` says if it failed)."""
    if "error" in message:
        return ToolResult(
            session_id=envelope.session,
            time=envelope.time,
            call_id=call_id,
            result=message["error"],
            is_error=True,
            source=envelope.source,
        )
    result = message.get("result")
    is_error = isinstance(result, dict) and result.get("isError") is True
    return ToolResult(
        session_id=envelope.session,
        time=envelope.time,
        call_id=call_id,
        result=result,
        is_error=is_error,
        source=envelope.source,
    )


def _read_notification(
    envelope: Envelope, connection: Connection, message: dict[str, Any], method: str
) -> RecordStream:
    """A cancellation ends the request it names: a call it cancels ends unrun."""
    if method != "notifications/cancelled":
        return  # list_changed needs nothing: the next listing is compared with the last one anyway
    params = message.get("params")
    id_key = read_id_key(params.get("requestId")) if isinstance(params, dict) else None
    if id_key is None:
        return
    # The side that cancels is the side that sent the request.
    order = (envelope.sender, envelope.sender.other) if envelope.sender else (Peer.CLIENT, Peer.SERVER)
    found = next(((p, id_key) for p in order if (p, id_key) in connection.requests), None)
    if found is None:
        return  # already answered (the race the protocol allows) or unknown: receivers ignore it
    request = connection.requests.pop(found)
    connection.cancelled[found] = None
    if len(connection.cancelled) > _CANCELLED_REMEMBERED:
        connection.cancelled.popitem(last=False)
    if request.call_id is not None:
        yield ToolResult(
            session_id=envelope.session,
            time=envelope.time,
            call_id=request.call_id,
            result=None,
            is_error=True,
            source=envelope.source,
        )


def _end_unrun(sid: str, request: Request, source: str | None) -> RecordStream:
    """End a call that asked for input and was not sent again: the server did not run it."""
    assert request.call_id is not None
    yield ToolResult(session_id=sid, call_id=request.call_id, result=None, is_error=True, source=source)
