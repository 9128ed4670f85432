"""Middleware for a server built with the ``mcp`` SDK: every incoming ``tools/call`` is decided before the tool
runs, and a call to confirm is put to the user through MCP elicitation."""

from __future__ import annotations

import logging
import secrets
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel

from monitor.hosts._mcp_common import (
    ask_monitor,
    describe_call,
    dump_model,
    error_result,
    register_listing,
    report_result,
)
from monitor.models import Action, Decision
from monitor.session import SessionMonitor

logger = logging.getLogger("monitor.hosts.mcp")

SessionKeyFn = Callable[[ServerRequestContext[Any, Any]], str]
"""Gives the monitor's session id for one request (the host knows which conversation it belongs to)."""

CONFIRM_INPUT = "trifecta-monitor/confirm"
"""The key of the confirmation question in an ``InputRequiredResult`` (MCP 2026-07-28)."""

_NO_FIELDS: dict[str, Any] = {"type": "object", "properties": {}}


@dataclass(frozen=True)
class _Waiting:
    """A call that waits for the client's next round: the question asked, or the tool's own questions."""

    session_key: str
    tool: str
    arguments: Mapping[str, Any] | None
    call_id: str
    message: str
    asked: bool


class ServerGuard:
    """Server middleware (the SDK's ``(ctx, call_next)`` form) that decides each ``tools/call`` before the tool
    runs. Made and installed by :func:`guard_server`.

    - ``allow``: the tool runs; its result is reported to the monitor.
    - ``deny``: the tool does not run; the client gets an ``isError`` result with the reason.
    - ``confirm``: the user is asked through MCP elicitation when the client supports it: mid-call
      (``elicitation/create``) on connections before 2026-07-28, and as an ``InputRequiredResult`` the client
      answers by retrying the call on 2026-07-28 connections. Accept runs the tool; decline, cancel or a client
      that cannot be asked gives an ``isError`` result with the reason.

    ``tools/list`` results are registered with the monitor, and so is the server's own listing (``tools``) the
    first time a session is seen. The guard never fails open: a call whose decision or session key cannot be
    obtained is refused or put to the user, never run unasked. ``max_waiting`` bounds the calls kept while the
    client answers a question (the oldest is forgotten first: its answer then asks anew).
    """

    def __init__(
        self,
        monitor: SessionMonitor,
        *,
        session_key: str | SessionKeyFn,
        server_name: str,
        tools: Callable[[], Awaitable[Sequence[types.Tool]]] | None = None,
        trusted: bool = False,
        max_waiting: int = 1024,
    ) -> None:
        self.monitor = monitor
        """The monitor that decides the calls."""
        self.server_name = server_name
        """The server's name, as the monitor's rules and reports name it."""
        self._session_key = session_key
        self._tools = tools
        self._trusted = trusted
        self._max_waiting = max_waiting
        # request state (plaintext: the SDK seals it outside this middleware) -> the call that waits
        self._waiting: OrderedDict[str, _Waiting] = OrderedDict()

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """Handle one inbound message: decide a ``tools/call``, register a ``tools/list``, pass the rest on."""
        if ctx.method == "tools/list":
            return await self._listed(ctx, call_next)
        params = ctx.params
        if ctx.method != "tools/call" or ctx.request_id is None or params is None:
            return await call_next(ctx)
        name, arguments = params.get("name"), params.get("arguments")
        if not isinstance(name, str) or not (arguments is None or isinstance(arguments, Mapping)):
            return await call_next(ctx)  # the SDK rejects malformed params before any tool runs
        key = self._key_for(ctx)
        if key is None:
            return _refusal(f"trifecta-monitor refuses {self.server_name}/{name}: no session key for the request")
        await self._register_server_tools(key)
        waiting = self._resume(key, name, arguments, params.get("requestState"))
        if waiting is not None:
            if not waiting.asked:  # a tool's own round: the call was decided when it began
                return await self._run(ctx, call_next, key, waiting.call_id, name, arguments)
            answer = (params.get("inputResponses") or {}).get(CONFIRM_INPUT)
            if not (isinstance(answer, Mapping) and answer.get("action") == "accept"):
                return _refusal(f"{waiting.message}; the user declined")
            rest = {k: v for k, v in params.items() if k not in ("inputResponses", "requestState")}
            return await self._run(replace(ctx, params=rest), call_next, key, waiting.call_id, name, arguments)
        decision = ask_monitor(self.monitor, key, self.server_name, name, arguments, None)
        if decision.action is Action.ALLOW:
            return await self._run(ctx, call_next, key, decision.call_id, name, arguments)
        message = describe_call(self.monitor, key, decision, self.server_name, name)
        if decision.action is Action.DENY:
            return _refusal(message)
        return await self._ask(ctx, call_next, key, decision, message, name, arguments)

    # -- steps ------------------------------------------------------------------------------------------------

    def _key_for(self, ctx: ServerRequestContext[Any, Any], *, listing: bool = False) -> str | None:
        """The session key of a request; None when the host's function fails (logged: a call is then refused,
        a listing left unregistered)."""
        if isinstance(self._session_key, str):
            return self._session_key
        try:
            key = self._session_key(ctx)
        except Exception:
            if listing:
                logger.debug("trifecta-monitor: no session key for a tools/list; its tools are registered later")
            else:
                logger.exception("trifecta-monitor: the session key function failed")
            return None
        return key if isinstance(key, str) and key else None

    async def _listed(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        result = await call_next(ctx)
        key = self._key_for(ctx, listing=True)
        tools = result.get("tools") if isinstance(result, dict) else getattr(result, "tools", None)
        if key is not None and isinstance(tools, list):
            register_listing(self.monitor, key, self.server_name, tools, self._trusted)
        return result

    async def _register_server_tools(self, key: str) -> None:
        """The first time a session is seen, give the monitor the server's own listing."""
        if self._tools is None or self.monitor.has_session(key):
            return
        try:
            tools = list(await self._tools())
        except Exception:
            logger.exception("trifecta-monitor: the tools of %s could not be listed", self.server_name)
            return
        register_listing(self.monitor, key, self.server_name, tools, self._trusted)

    def _resume(self, key: str, tool: str, arguments: Mapping[str, Any] | None, state: Any) -> _Waiting | None:
        """The call this round continues, if the request state is one this guard gave out for the same call."""
        if not isinstance(state, str):
            return None
        waiting = self._waiting.pop(state, None)
        if waiting is None or (waiting.session_key, waiting.tool, waiting.arguments) != (key, tool, arguments):
            return None  # a state for another call (or none of ours) is decided as a new call
        return waiting

    def _remember(self, state: str, waiting: _Waiting) -> None:
        self._waiting[state] = waiting
        while len(self._waiting) > self._max_waiting:
            self._waiting.popitem(last=False)

    async def _ask(
        self,
        ctx: ServerRequestContext[Any, Any],
        call_next: CallNext,
        key: str,
        decision: Decision,
        message: str,
        tool: str,
        arguments: Mapping[str, Any] | None,
    ) -> HandlerResult:
        """Put a call to confirm to the user, the way the connection allows."""
        capabilities = ctx.session.client_capabilities
        if capabilities is None or capabilities.elicitation is None:
            return _refusal(f"{message}; the client cannot ask the user (no elicitation), so the call did not run")
        question = f"{message}. Allow this call?"
        if ctx.session.can_send_request:
            try:
                answer = await ctx.session.elicit_form(question, _NO_FIELDS, related_request_id=ctx.request_id)
            except Exception:
                logger.exception("trifecta-monitor: asking the user about %s/%s failed", self.server_name, tool)
                return _refusal(f"{message}; the user could not be asked, so the call did not run")
            if answer.action != "accept":
                return _refusal(f"{message}; the user declined")
            return await self._run(ctx, call_next, key, decision.call_id, tool, arguments)
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            state = secrets.token_urlsafe(24)
            self._remember(state, _Waiting(key, tool, arguments, decision.call_id, message, asked=True))
            request = types.ElicitRequest(
                params=types.ElicitRequestFormParams(message=question, requested_schema=_NO_FIELDS)
            )
            return types.InputRequiredResult(input_requests={CONFIRM_INPUT: request}, request_state=state)
        return _refusal(f"{message}; the user could not be asked on this connection, so the call did not run")

    async def _run(
        self,
        ctx: ServerRequestContext[Any, Any],
        call_next: CallNext,
        key: str,
        call_id: str,
        tool: str,
        arguments: Mapping[str, Any] | None,
    ) -> HandlerResult:
        """Run the tool and report its result (or its failure) to the monitor."""
        try:
            result = await call_next(ctx)
        except BaseException as exc:
            report_result(self.monitor, key, call_id, error_result(exc), True)
            raise
        plain = dump_model(result) if isinstance(result, BaseModel) else result
        if isinstance(plain, dict) and plain.get("resultType") == "input_required":
            state = plain.get("requestState")
            if isinstance(state, str):  # the tool asks the client itself: its next round continues this call
                self._remember(state, _Waiting(key, tool, arguments, call_id, "", asked=False))
            return result
        is_error = isinstance(plain, dict) and plain.get("isError") is True
        report_result(self.monitor, key, call_id, plain, is_error)
        return result


def _refusal(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)


def guard_server(
    server: MCPServer[Any],
    monitor: SessionMonitor,
    *,
    session_key: str | SessionKeyFn,
    server_name: str | None = None,
    trusted: bool = False,
) -> ServerGuard:
    """Put a :class:`ServerGuard` on an SDK ``MCPServer`` (appended to ``server.middleware``) and return it.

    ``session_key`` is the monitor's session id: a fixed string (a server that serves one conversation), or a
    function of the request context that returns it (e.g. from a header or ``_meta`` entry the host sets).
    MCP 2026-07-28 has no protocol sessions, so the request itself names no conversation: the host must.
    ``server_name`` defaults to the server's own name. The server's tools are registered with the monitor for
    each new session (untrusted unless ``trusted``)."""
    guard = ServerGuard(
        monitor,
        session_key=session_key,
        server_name=server_name or server.name,
        tools=server.list_tools,
        trusted=trusted,
    )
    server.middleware.append(guard)
    return guard
