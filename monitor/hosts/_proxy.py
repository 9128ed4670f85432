"""The stdio MCP proxy behind ``trifecta proxy``: between any MCP client and a stdio server, it decides each call.

The proxy speaks MCP on its own standard input and output (to the client) and starts the server as a child
process (``COMMAND ARGS…``) with the ``mcp`` SDK's stdio transports. Every message goes through unchanged, in
both directions (requests, responses, notifications, errors, methods it does not know, and the server's own
requests to the client: sampling, elicitation, roots), except:

- a ``tools/list`` result is registered with the monitor (classification, pins) before it goes on;
- a ``tools/call`` request is decided before it goes on: ``allow`` forwards it; ``deny`` answers the client
  with a ``CallToolResult`` (``isError: true``) that gives the reason, and the server never sees the call;
  ``confirm`` asks the user through MCP elicitation when the client declares it (see
  :mod:`monitor.hosts._proxy_confirm`) and forwards only on acceptance, else answers ``isError`` with the
  reason;
- the result of a forwarded ``tools/call`` is recorded with the monitor (``after_call``) before it goes back;
- a ``tools/call`` without an id (or with ``"id": null``) is a notification no answer can carry a decision to:
  it is refused (reported on standard error), never sent on.

**One proxy process is one session.** MCP 2026-07-28 has no protocol session (no ``initialize``, no
``Mcp-Session-Id``), and a stdio server lives as long as its client's connection, so the session key is the
proxy's: ``session_key`` (``--session-key``), or one generated when the proxy starts. The server's name (what
rule packs match) is ``server_name`` (``--server-name``), else the name the server announces (``serverInfo``
of ``initialize``, or the ``io.modelcontextprotocol/serverInfo`` stamp of a 2026-07-28 result) before its tools
are first listed or called, else the command's file name. The server's identity goes with its listings
(:class:`~monitor.models.ServerIdentity`: the announced ``serverInfo`` name and version, and the package the
command runs, :func:`~monitor.hosts._server_package.derive_server_package`), so a rule pack reviewed for another
server of the same name does not apply to it.

The proxy never crashes on what it is sent: a line the SDK cannot parse is reported on standard error and
dropped (the SDK's message types are single JSON-RPC messages: batches cannot be forwarded). Its own
diagnostics go to standard error; the server's standard error passes through to it. When the server exits,
the proxy exits with the server's exit code; when the client closes standard input, the server is stopped
(its standard input closed, then terminated) and the proxy exits 0.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sys
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, cast

import anyio
import anyio.abc
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCError, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse

from monitor.hosts._proxy_audit import AuditLog
from monitor.hosts._proxy_confirm import (
    CONFIRM_FIELD,
    CONFIRM_KEY,
    build_error_result,
    build_form,
    build_input_required,
    declares_elicitation,
    is_stateless_request,
    read_answer,
    request_declares_elicitation,
    speaks,
)
from monitor.hosts._proxy_io import ProcessWatch, StdinLines, exit_status
from monitor.hosts._server_package import derive_server_package
from monitor.models import Action, Decision, ServerIdentity, read_announced_identity, read_server_info
from monitor.session import SessionMonitor

Message = JSONRPCRequest | JSONRPCNotification | JSONRPCResponse | JSONRPCError
IdKey = tuple[bool, Any]
"""A JSON-RPC id made type-exact: ``1`` and ``"1"`` are different ids."""

DEFAULT_CONFIRM_TIMEOUT = 600.0
"""Seconds the proxy waits for the user's answer to a confirmation before it refuses the call."""

_REMEMBERED_STATES = 256
_SHUTDOWN_GRACE = 0.2


@dataclass
class _Call:
    """A ``tools/call`` the proxy decided: what the monitor knows it by, and what was asked."""

    call_id: str
    tool: str
    arguments: dict[str, Any] | None
    params: dict[str, Any]
    decision: Decision


@dataclass
class _Tracked:
    """A client request whose response the proxy reads on its way back."""

    method: str
    call: _Call | None = None


def generate_session_key() -> str:
    """Return a new session key: ``proxy-<UTC time>-<random>``, unique per proxy process."""
    return f"proxy-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}-{secrets.token_hex(4)}"


def _id_key(value: Any) -> IdKey:
    return (isinstance(value, str), value)


class StdioProxy:
    """A stdio MCP proxy for one server command, deciding each tool call with ``monitor``.

    ``session_key``: the session every call belongs to (default: one generated for this proxy).
    ``server_name``: the server's name for the monitor and rule packs (default: announced, else the command's
    file name). ``audit_log``: a JSONL file that receives the session's events (see
    :mod:`monitor.hosts._proxy_audit`). ``env``: the server's environment (default: the proxy's own).
    ``confirm_timeout``: seconds to wait for the user's answer to a confirmation. ``stdin_fd``: the file
    descriptor the client writes to (default: 0, standard input). ``report``: where diagnostics go (default: a
    line on standard error).
    """

    def __init__(
        self,
        monitor: SessionMonitor,
        command: str,
        args: Sequence[str] = (),
        *,
        session_key: str | None = None,
        server_name: str | None = None,
        audit_log: Path | None = None,
        env: Mapping[str, str] | None = None,
        confirm_timeout: float = DEFAULT_CONFIRM_TIMEOUT,
        stdin_fd: int = 0,
        report: Callable[[str], None] | None = None,
    ) -> None:
        self.monitor = monitor
        self.command = command
        self.args = list(args)
        self.session_key = session_key or generate_session_key()
        self.confirm_timeout = confirm_timeout
        self.env = dict(os.environ if env is None else env)
        self._report = report or _report_on_stderr
        self._stdin_fd = stdin_fd
        self.audit = AuditLog(audit_log, self._say) if audit_log is not None else None
        self._chosen_name = server_name
        self._announced: str | None = None
        self._server: str | None = server_name
        self._package = derive_server_package(command, self.args)
        self._identity: ServerIdentity | None = read_server_info(None, self._package)
        self._nonce = secrets.token_hex(6)
        self._asks = 0
        self._used_ids: set[str] = set()
        self._tools_by_call: dict[str, str] = {}
        self._tracked: dict[IdKey, _Tracked] = {}
        self._cancelled: set[IdKey] = set()
        self._answers: dict[str, tuple[anyio.Event, list[Message]]] = {}
        self._held: OrderedDict[str, _Call] = OrderedDict()
        self._server_states: OrderedDict[str, _Call] = OrderedDict()
        self._client_caps: Any = None
        self._client_version: str | None = None
        self._to_client: Any = None
        self._to_server: Any = None
        self._task_group: anyio.abc.TaskGroup | None = None
        self.malformed = 0
        """Lines from either side that the SDK could not parse (each reported, none forwarded)."""

    @property
    def server_name(self) -> str:
        """The server's name for the monitor; fixed the first time a listing or a call needs it."""
        if self._server is None:
            self._server = self._chosen_name or self._announced or Path(self.command).name or self.command
        return self._server

    @property
    def identity(self) -> ServerIdentity | None:
        """What the proxy knows of the server besides its name: the package its command runs, and the
        ``serverInfo`` it announced (once it has); None when it knows neither."""
        return self._identity

    # -- running -------------------------------------------------------------------------------------------

    async def run(self) -> int:
        """Serve until either side ends; return the exit status (the server's code when it ended first)."""
        watch = ProcessWatch()
        lines = StdinLines(self._stdin_fd)
        params = StdioServerParameters(command=self.command, args=self.args, env=self.env)
        client_closed = False
        failed_start: int | None = None
        try:
            # The scope ends the client transport's own tasks (reading standard input) once the proxy is done.
            with anyio.CancelScope() as everything:
                async with stdio_server(stdin=cast(Any, lines)) as (client_read, client_write):
                    lines.start()
                    self._to_client = client_write
                    try:
                        with watch.watching():
                            async with stdio_client(params, errlog=sys.stderr) as (server_read, server_write):
                                self._to_server = server_write
                                async with anyio.create_task_group() as pumps:
                                    self._task_group = pumps
                                    pumps.start_soon(self._pump_server, server_read, pumps)
                                    client_closed = await self._pump_client(client_read)
                                    pumps.cancel_scope.cancel()
                    except OSError as exc:
                        if watch.process is not None:
                            raise
                        self._say(f"cannot start {self.command}: {exc.strerror or exc}")
                        failed_start = 127 if isinstance(exc, FileNotFoundError) else 126
                    await client_write.aclose()
                    await anyio.sleep(_SHUTDOWN_GRACE)  # the client transport writes out what it was given
                    everything.cancel()
        finally:
            self._finish()
        if failed_start is not None:
            return failed_start
        return 0 if client_closed else exit_status(watch.returncode)

    def _finish(self) -> None:
        if self.monitor.has_session(self.session_key):
            report = self.monitor.end_session(self.session_key)
            alerts = len(report.alerts)
            self._say(f"session {self.session_key} ended at level {report.level.value}, {alerts} alert(s)")
        if self.audit is not None:
            self.audit.close()

    async def _pump_client(self, client_read: Any) -> bool:
        """Forward the client's messages; True when the client closed its end (False: the server ended)."""
        async for item in client_read:
            if isinstance(item, Exception):
                self._malformed("client", item)
                continue
            try:
                await self._from_client(item.message)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                return False
        return True

    async def _pump_server(self, server_read: Any, pumps: anyio.abc.TaskGroup) -> None:
        async for item in server_read:
            if isinstance(item, Exception):
                self._malformed("server", item)
                continue
            try:
                await self._from_server(item.message)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                break
        # The server closed its output (it exited): stop reading the client.
        pumps.cancel_scope.cancel()

    # -- the client's messages -----------------------------------------------------------------------------

    async def _from_client(self, message: Message) -> None:
        if isinstance(message, JSONRPCRequest):
            if message.method == "tools/call":
                await self._on_call(message)
                return
            if message.method == "initialize":
                self._client_caps, self._client_version = _read_client_hello(message.params)
            if message.method in ("initialize", "server/discover", "tools/list"):
                self._tracked[_id_key(message.id)] = _Tracked(message.method)
        elif isinstance(message, JSONRPCResponse | JSONRPCError) and isinstance(message.id, str):
            waiting = self._answers.get(message.id)
            if waiting is not None:
                waiting[1].append(message)
                waiting[0].set()
                return
        elif isinstance(message, JSONRPCNotification) and message.method == "tools/call":
            # No id (or ``"id": null``, which the SDK reads the same way): no answer could carry a decision, so
            # the call never reaches the server undecided.
            self._say(
                "refused a tools/call without an id (a notification): it cannot be answered, so it is not sent on"
            )
            return
        elif isinstance(message, JSONRPCNotification) and message.method == "notifications/cancelled":
            request_id = (message.params or {}).get("requestId")
            if request_id is not None:
                self._cancelled.add(_id_key(request_id))
                self._tracked.pop(_id_key(request_id), None)
        await self._send_server(message)

    async def _on_call(self, message: JSONRPCRequest) -> None:
        params = dict(message.params or {})
        name = params.get("name")
        if not isinstance(name, str):
            await self._send_server(message)  # the server answers the malformed call itself
            return
        raw_args = params.get("arguments")
        arguments = raw_args if isinstance(raw_args, dict) else None
        state = params.get("requestState")
        if isinstance(state, str):
            held = self._held.pop(state, None)
            if held is not None and (held.tool, held.arguments) == (name, arguments):
                await self._resume(message, held, params)
                return
            earlier = self._server_states.get(state)
            if earlier is not None and (earlier.tool, earlier.arguments) == (name, arguments):
                await self._forward_call(message, earlier)  # a retry the server asked for: decided already
                return
        call_id = self._new_call_id(message.id)
        server = self.server_name
        decision = self.monitor.before_call(self.session_key, server, name, arguments, call_id)
        call = _Call(decision.call_id, name, arguments, params, decision)
        self._tools_by_call[decision.call_id] = name
        for finding in decision.findings:
            self._say(f"call {decision.call_id}: {finding.message}")
        if decision.action is Action.ALLOW:
            self._audit_call(call, "forwarded")
            await self._forward_call(message, call)
            return
        reason = decision.describe(name, self._tools_by_call)
        self._say(reason)
        if decision.action is Action.DENY:
            self._audit_call(call, "blocked")
            await self._refuse(message, reason)
        elif is_stateless_request(params) and request_declares_elicitation(params):
            self._audit_call(call, "asked")
            await self._ask_stateless(message, call, reason)
        elif (
            not is_stateless_request(params)
            and declares_elicitation(self._client_caps)
            and speaks(self._client_version, "elicitation")
        ):
            self._audit_call(call, "asked")
            assert self._task_group is not None
            self._task_group.start_soon(self._ask_handshake, message, call, reason)
        else:
            self._audit_call(call, "unconfirmed")
            await self._refuse(message, f"{reason}. The client cannot ask you (no elicitation): not run.")

    def _new_call_id(self, request_id: Any) -> str:
        text = str(request_id)
        if text in self._used_ids:
            text = f"{text}~{len(self._used_ids)}"
        self._used_ids.add(text)
        return text

    def _audit_call(self, call: _Call, outcome: str) -> None:
        if self.audit is not None:
            self.audit.write_call(self.session_key, self.server_name, call.tool, call.arguments, call.decision, outcome)

    async def _forward_call(self, message: JSONRPCRequest, call: _Call) -> None:
        self._tracked[_id_key(message.id)] = _Tracked("tools/call", call)
        await self._send_server(message)

    async def _refuse(self, message: JSONRPCRequest, text: str) -> None:
        result = build_error_result(text, stateless=is_stateless_request(message.params))
        await self._send_client(JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result))

    # -- confirmation --------------------------------------------------------------------------------------

    async def _ask_stateless(self, message: JSONRPCRequest, call: _Call, reason: str) -> None:
        state = f"trifecta-proxy:{secrets.token_urlsafe(18)}"
        _remember(self._held, state, call)
        result = build_input_required(_question(reason, self.server_name), state)
        await self._send_client(JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result))

    async def _resume(self, message: JSONRPCRequest, call: _Call, params: dict[str, Any]) -> None:
        """A 2026-07-28 client sent the call again with the user's answer to the proxy's question."""
        responses = params.get("inputResponses")
        answer = responses.get(CONFIRM_KEY) if isinstance(responses, dict) else None
        accepted, how = read_answer(answer)
        self._say(f"call {call.call_id} ({call.tool}): {how}")
        if not accepted:
            reason = call.decision.describe(call.tool, self._tools_by_call)
            await self._refuse(message, f"{reason}. Not run: {how}.")
            return
        forwarded = dict(call.params)
        if "_meta" in params:
            forwarded["_meta"] = params["_meta"]
        retry = JSONRPCRequest(jsonrpc="2.0", id=message.id, method=message.method, params=forwarded)
        await self._forward_call(retry, call)

    async def _ask_handshake(self, message: JSONRPCRequest, call: _Call, reason: str) -> None:
        """Ask a handshake-era client with an ``elicitation/create`` request of the proxy's own."""
        self._asks += 1
        ask_id = f"trifecta-proxy-{self._nonce}-{self._asks}"
        event = anyio.Event()
        slot: list[Message] = []
        self._answers[ask_id] = (event, slot)
        form = build_form(
            _question(reason, self.server_name), with_mode=speaks(self._client_version, "elicitation_modes")
        )
        try:
            await self._send_client(JSONRPCRequest(jsonrpc="2.0", id=ask_id, method="elicitation/create", params=form))
            with anyio.move_on_after(self.confirm_timeout):
                await event.wait()
        finally:
            self._answers.pop(ask_id, None)
        accepted, how = _read_handshake_answer(slot, self.confirm_timeout)
        self._say(f"call {call.call_id} ({call.tool}): {how}")
        if _id_key(message.id) in self._cancelled:
            return
        if accepted:
            await self._forward_call(message, call)
        else:
            await self._refuse(message, f"{reason}. Not run: {how}.")

    # -- the server's messages -----------------------------------------------------------------------------

    async def _from_server(self, message: Message) -> None:
        if isinstance(message, JSONRPCResponse | JSONRPCError) and message.id is not None:
            tracked = self._tracked.pop(_id_key(message.id), None)
            if tracked is not None:
                self._on_response(tracked, message)
        await self._send_client(message)

    def _on_response(self, tracked: _Tracked, message: JSONRPCResponse | JSONRPCError) -> None:
        result = message.result if isinstance(message, JSONRPCResponse) else None
        initialize = tracked.method == "initialize"
        announced = read_announced_identity(result, initialize=initialize, package=self._package)
        if self._announced is None and announced is not None:
            self._announced = announced.name
        if initialize or self._identity is None or self._identity.name is None:
            self._identity = announced or self._identity
        if tracked.method == "tools/list" and isinstance(result, dict):
            tools = result.get("tools")
            if isinstance(tools, list):
                self.monitor.register_tools(self.session_key, self.server_name, tools, identity=self._identity)
                if self.audit is not None:
                    self.audit.write_tools(self.session_key, self.server_name, tools, self._identity)
        elif tracked.method == "tools/call" and tracked.call is not None:
            self._on_call_result(tracked.call, message)

    def _on_call_result(self, call: _Call, message: JSONRPCResponse | JSONRPCError) -> None:
        if isinstance(message, JSONRPCError):
            result: Any = message.error.model_dump(by_alias=True, mode="json", exclude_none=True)
            is_error = True
        else:
            result = message.result
            if result.get("resultType") == "input_required":
                # The server asks the client for input; the call runs when the client sends it again.
                state = result.get("requestState")
                if isinstance(state, str):
                    _remember(self._server_states, state, call)
                return
            is_error = result.get("isError") is True
        findings = self.monitor.after_call(self.session_key, call.call_id, result, is_error)
        for finding in findings:
            self._say(f"call {call.call_id}: {finding.message}")
        if self.audit is not None:
            self.audit.write_result(self.session_key, call.call_id, result, is_error)

    # -- output --------------------------------------------------------------------------------------------

    async def _send_client(self, message: Message) -> None:
        await self._to_client.send(SessionMessage(message))

    async def _send_server(self, message: Message) -> None:
        await self._to_server.send(SessionMessage(message))

    def _malformed(self, side: str, error: Exception) -> None:
        self.malformed += 1
        summary = str(error).splitlines()[0] if str(error) else type(error).__name__
        self._say(f"dropped a message from the {side} that is not a JSON-RPC message the SDK reads: {summary}")

    def _say(self, text: str) -> None:
        with contextlib.suppress(Exception):
            self._report(text)


def _read_client_hello(params: dict[str, Any] | None) -> tuple[Any, str | None]:
    """The capabilities and protocol version an ``initialize`` request declares."""
    version = (params or {}).get("protocolVersion")
    return (params or {}).get("capabilities"), version if isinstance(version, str) else None


def _question(reason: str, server: str) -> str:
    return (
        f"{reason}. MCP server: {server}. Run the call anyway? Tick '{CONFIRM_FIELD}' and accept to "
        "run it; decline to stop it."
    )


def _read_handshake_answer(slot: list[Message], timeout: float) -> tuple[bool, str]:
    """Whether the user accepted, and how the answer (or its absence) reads, from an ``elicitation/create`` reply."""
    if not slot:
        return False, f"no answer to the confirmation within {timeout:g} s"
    if isinstance(slot[0], JSONRPCError):
        return False, f"the client could not ask the user ({slot[0].error.message})"
    return read_answer(cast(JSONRPCResponse, slot[0]).result)


def _remember(states: OrderedDict[str, _Call], state: str, call: _Call) -> None:
    """Keep ``call`` under ``state``, forgetting the oldest beyond the bound."""
    states[state] = call
    while len(states) > _REMEMBERED_STATES:
        states.popitem(last=False)


def _report_on_stderr(text: str) -> None:
    stream: IO[str] = sys.stderr
    stream.write(f"trifecta proxy: {text}\n")
    stream.flush()


def run_stdio_proxy(
    monitor: SessionMonitor,
    command: str,
    args: Sequence[str] = (),
    *,
    session_key: str | None = None,
    server_name: str | None = None,
    audit_log: Path | None = None,
) -> int:
    """Run the proxy for ``command args…`` on this process's standard input and output until either side
    ends; return the exit status (the server's exit code when the server ended first, 0 when the client
    closed its end, 127/126 when the command cannot be started)."""
    proxy = StdioProxy(monitor, command, args, session_key=session_key, server_name=server_name, audit_log=audit_log)
    return anyio.run(proxy.run)
