"""The guard around an ``mcp`` SDK ``ClientSession``: listings registered, every tool call decided first."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any, Literal, overload

import mcp_types as types
from mcp import ClientSession
from mcp.shared.dispatcher import ProgressFnT
from mcp_types import RequestParamsMeta

from monitor.errors import CallDenied, ConfirmationRequired
from monitor.hosts._mcp_common import ask_monitor, describe_call, error_result, register_listing, report_result
from monitor.models import Action, Decision, ServerIdentity, read_server_info
from monitor.session import SessionMonitor

ConfirmCallback = Callable[[Decision], Awaitable[bool]]
"""Asks the user about a call the monitor wants confirmed: True runs it, False declines it."""


class GuardedClientSession:
    """An ``mcp.ClientSession`` whose tool calls are decided by a :class:`~monitor.session.SessionMonitor`.

    - :meth:`list_tools` calls the server and registers the listed tools with the monitor (each listing: a
      reviewed rule whose pinned definition no longer matches raises ``definition-changed``).
    - :meth:`call_tool` asks the monitor first. ``allow``: the call goes to the server. ``confirm``: the host's
      ``confirm`` callback is awaited with the :class:`~monitor.Decision`; True sends the call, False raises
      :class:`~monitor.errors.CallDenied`; without a callback :class:`~monitor.errors.ConfirmationRequired` is
      raised. ``deny``: :class:`~monitor.errors.CallDenied`. A call that is not sent never reaches the server.
      The result (or the exception the call raised, as an error result) is then reported to the monitor, and
      the exception re-raised.
    - Everything else (resources, prompts, completion, ping) goes to the session unchanged.

    ``session_key`` names the monitor's session: the host gives it. MCP 2026-07-28 removed protocol sessions
    (no ``initialize`` handshake, no ``Mcp-Session-Id``), so nothing on the wire says which requests belong to
    one conversation; use the host's own conversation or agent-run id, the same for every server the
    conversation uses. ``server`` is the server's name as rules name it. ``trusted`` says whether the server's
    hints that could only lower risk (``openWorldHint: false``) are taken.

    The guard never fails open: if the monitor's decision cannot be obtained, the call needs confirmation
    (reason ``monitor-error``). Exceptions of the host's callback and of the session pass through unchanged.
    """

    def __init__(
        self,
        session: ClientSession,
        monitor: SessionMonitor,
        *,
        session_key: str,
        server: str,
        confirm: ConfirmCallback | None = None,
        trusted: bool = False,
    ) -> None:
        if not isinstance(session_key, str) or not session_key:
            raise ValueError("session_key must be a non-empty string: the host's id for the conversation")
        self._session = session
        self._monitor = monitor
        self._session_key = session_key
        self._server = server
        self._confirm = confirm
        self._trusted = trusted
        # A call the server answered with InputRequiredResult is resumed (same tool, same arguments, the state
        # it returned) without being decided again: request_state -> (call id, tool, arguments).
        self._resumable: dict[str, tuple[str, str, dict[str, Any] | None]] = {}

    # -- what the guard adds ---------------------------------------------------------------------------------

    @property
    def session(self) -> ClientSession:
        """The wrapped ``ClientSession`` (calls made on it directly are not guarded)."""
        return self._session

    @property
    def monitor(self) -> SessionMonitor:
        """The monitor that decides this session's calls."""
        return self._monitor

    @property
    def session_key(self) -> str:
        """The monitor's session id for this conversation, as the host gave it."""
        return self._session_key

    @property
    def server(self) -> str:
        """The server's name, as the monitor's rules and reports name it."""
        return self._server

    async def list_tools(self, *, params: types.PaginatedRequestParams | None = None) -> types.ListToolsResult:
        """Send ``tools/list`` and register the listed tools with the monitor, with the ``serverInfo`` the server
        announced (``initialize``, or the 2026-07-28 stamp of ``discover``) as its identity; return the listing
        unchanged."""
        result = await self._session.list_tools(params=params)
        identity = _read_server_identity(self._session)
        register_listing(self._monitor, self._session_key, self._server, result.tools, self._trusted, identity)
        return result

    @overload
    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        read_timeout_seconds: float | None = None,
        progress_callback: ProgressFnT | None = None,
        *,
        input_responses: types.InputResponses | None = None,
        request_state: str | None = None,
        meta: RequestParamsMeta | None = None,
        allow_input_required: Literal[False] = False,
        allow_claimed: Literal[False] = False,
        call_id: str | None = None,
    ) -> types.CallToolResult: ...

    @overload
    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        read_timeout_seconds: float | None = None,
        progress_callback: ProgressFnT | None = None,
        *,
        input_responses: types.InputResponses | None = None,
        request_state: str | None = None,
        meta: RequestParamsMeta | None = None,
        allow_input_required: bool,
        allow_claimed: bool = False,
        call_id: str | None = None,
    ) -> types.CallToolResult | types.InputRequiredResult | types.Result: ...

    @overload
    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        read_timeout_seconds: float | None = None,
        progress_callback: ProgressFnT | None = None,
        *,
        input_responses: types.InputResponses | None = None,
        request_state: str | None = None,
        meta: RequestParamsMeta | None = None,
        allow_input_required: bool = False,
        allow_claimed: bool,
        call_id: str | None = None,
    ) -> types.CallToolResult | types.InputRequiredResult | types.Result: ...

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        read_timeout_seconds: float | None = None,
        progress_callback: ProgressFnT | None = None,
        *,
        input_responses: types.InputResponses | None = None,
        request_state: str | None = None,
        meta: RequestParamsMeta | None = None,
        allow_input_required: bool = False,
        allow_claimed: bool = False,
        call_id: str | None = None,
    ) -> types.CallToolResult | types.InputRequiredResult | types.Result:
        """Decide the call, then (if it may run) send ``tools/call`` and report the result to the monitor.

        The parameters are ``ClientSession.call_tool``'s, plus ``call_id``: the id the monitor knows the call by
        (one is made up when None). Raises :class:`~monitor.errors.ConfirmationRequired` or
        :class:`~monitor.errors.CallDenied` when the call may not run; the server then never sees it.

        Resuming a call the server answered with an ``InputRequiredResult`` (the same tool and arguments, and
        the ``request_state`` it returned) continues the call already decided: it is not decided again."""
        resumed = self._resumable.pop(request_state, None) if request_state is not None else None
        if resumed is not None and resumed[1:] == (name, arguments):
            decided_id = resumed[0]
        else:
            decision = ask_monitor(
                self._monitor, self._session_key, self._server, name, arguments, call_id or _new_call_id()
            )
            await self._settle(decision, name)
            decided_id = decision.call_id
        try:
            result = await self._session.call_tool(
                name,
                arguments,
                read_timeout_seconds,
                progress_callback,
                input_responses=input_responses,
                request_state=request_state,
                meta=meta,
                allow_input_required=allow_input_required,
                allow_claimed=allow_claimed,
            )
        except BaseException as exc:
            report_result(self._monitor, self._session_key, decided_id, error_result(exc), True)
            raise
        if isinstance(result, types.InputRequiredResult):
            if result.request_state is not None:
                self._resumable[result.request_state] = (decided_id, name, arguments)
            return result  # the call goes on: its result comes with the round that completes it
        is_error = bool(getattr(result, "is_error", False))
        report_result(self._monitor, self._session_key, decided_id, result, is_error)
        return result

    async def _settle(self, decision: Decision, tool: str) -> None:
        """Return when the call may run; raise when it may not."""
        if decision.action is Action.ALLOW:
            return
        message = describe_call(self._monitor, self._session_key, decision, self._server, tool)
        if decision.action is Action.DENY:
            raise CallDenied(decision, message)
        if self._confirm is None:
            raise ConfirmationRequired(decision, message)
        if not await self._confirm(decision):
            raise CallDenied(decision, f"{message}; the user declined")

    # -- passed through unchanged ----------------------------------------------------------------------------

    @property
    def protocol_version(self) -> str | None:
        """The negotiated protocol version (the session's)."""
        return self._session.protocol_version

    @property
    def server_info(self) -> types.Implementation | None:
        """The server's name and version, if it gave them (the session's)."""
        return self._session.server_info

    @property
    def server_capabilities(self) -> types.ServerCapabilities | None:
        """The server's capabilities (the session's)."""
        return self._session.server_capabilities

    @property
    def instructions(self) -> str | None:
        """The server's instructions text (the session's)."""
        return self._session.instructions

    async def initialize(self) -> types.InitializeResult:
        """Run the legacy ``initialize`` handshake (servers before 2026-07-28)."""
        return await self._session.initialize()

    async def discover(self) -> types.DiscoverResult:
        """Probe ``server/discover`` and adopt the result (2026-07-28 servers)."""
        return await self._session.discover()

    async def send_ping(self, *, meta: RequestParamsMeta | None = None) -> types.EmptyResult:
        """Send a ping."""
        return await self._session.send_ping(meta=meta)

    async def list_resources(self, *, params: types.PaginatedRequestParams | None = None) -> types.ListResourcesResult:
        """Send ``resources/list``."""
        return await self._session.list_resources(params=params)

    async def list_resource_templates(
        self, *, params: types.PaginatedRequestParams | None = None
    ) -> types.ListResourceTemplatesResult:
        """Send ``resources/templates/list``."""
        return await self._session.list_resource_templates(params=params)

    async def read_resource(
        self,
        uri: str,
        *,
        input_responses: types.InputResponses | None = None,
        request_state: str | None = None,
        meta: RequestParamsMeta | None = None,
    ) -> types.ReadResourceResult:
        """Send ``resources/read``."""
        return await self._session.read_resource(
            uri, input_responses=input_responses, request_state=request_state, meta=meta
        )

    async def list_prompts(self, *, params: types.PaginatedRequestParams | None = None) -> types.ListPromptsResult:
        """Send ``prompts/list``."""
        return await self._session.list_prompts(params=params)

    async def get_prompt(
        self,
        name: str,
        arguments: dict[str, str] | None = None,
        *,
        input_responses: types.InputResponses | None = None,
        request_state: str | None = None,
        meta: RequestParamsMeta | None = None,
    ) -> types.GetPromptResult:
        """Send ``prompts/get``."""
        return await self._session.get_prompt(
            name, arguments, input_responses=input_responses, request_state=request_state, meta=meta
        )

    async def complete(
        self,
        ref: types.ResourceTemplateReference | types.PromptReference,
        argument: dict[str, str],
        context_arguments: dict[str, str] | None = None,
    ) -> types.CompleteResult:
        """Send ``completion/complete``."""
        return await self._session.complete(ref, argument, context_arguments)


def _read_server_identity(session: ClientSession) -> ServerIdentity | None:
    """Return the identity a session's server announced (its ``serverInfo`` name and version), read as hostile
    input; None before ``initialize``/``discover`` or when the server named itself in no usable way."""
    info = getattr(session, "server_info", None)
    if info is None:
        return None
    return read_server_info({"name": getattr(info, "name", None), "version": getattr(info, "version", None)})


def _new_call_id() -> str:
    return f"mcp-{uuid.uuid4().hex[:12]}"
