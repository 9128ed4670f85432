"""LangChain tools behind the monitor: :class:`LangChainGuard` wraps ``BaseTool`` objects in :class:`GuardedTool`,
which asks the monitor before the wrapped tool runs and reports its result after."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any, cast

from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage, convert_to_messages
from langchain_core.runnables import RunnableConfig, ensure_config
from langchain_core.tools import BaseTool
from pydantic import BaseModel, PrivateAttr

from monitor.adapters._gate import AskCallback, Check, Gate, logger, make_tool_entry, read_annotations
from monitor.session import SessionMonitor

SessionKey = str | Callable[[RunnableConfig], str | None]
"""A fixed session key, or a function of the run's ``RunnableConfig`` that returns one."""


class LangChainGuard:
    """Puts a :class:`~monitor.session.SessionMonitor` in front of LangChain tools.

    :meth:`wrap_tools` returns each tool wrapped in a :class:`GuardedTool` (same name, description and argument
    schema, so a model and LangGraph's ``ToolNode`` use it as the tool itself). Each call is decided before the
    tool runs: ``allow`` runs it and hands its result to the monitor; ``deny`` does not run it, and the model
    gets a refusal naming the decision (:meth:`~monitor.Decision.describe`) as the tool's output (a
    ``ToolMessage`` with ``status="error"``); ``confirm`` and ``review`` go to ``ask`` (a
    :class:`~monitor.adapters.CallQuestion` in, True to run), and **without an ``ask`` callback they are
    refused** like ``deny``.

    The session key: ``session_key`` (a string, or a function of the ``RunnableConfig``) when given, else the
    LangGraph ``thread_id`` of the run's ``config["configurable"]``. A call with no key is refused (it cannot be
    placed in a conversation). The user's words: pass each turn's input through :meth:`observe_input` (or
    :meth:`observe_user_message`) before running the graph, with the same config.

    The monitor never raises into the run: if it fails, the call is treated as ``confirm`` (reason
    ``monitor-error``), so it runs only if ``ask`` says so. Exceptions of ``ask`` itself pass through
    unchanged (LangGraph's ``interrupt()`` works by raising)."""

    def __init__(
        self, monitor: SessionMonitor, *, ask: AskCallback | None = None, session_key: SessionKey | None = None
    ) -> None:
        self._gate = Gate(monitor, ask)
        self._session_key = session_key

    @property
    def monitor(self) -> SessionMonitor:
        """The monitor that decides the calls."""
        return self._gate.monitor

    def wrap_tools(
        self,
        tools: Iterable[BaseTool],
        *,
        server: str,
        annotations: Mapping[str, Mapping[str, Any]] | None = None,
        trusted: bool = False,
    ) -> list[GuardedTool]:
        """Return the tools wrapped, as tools of ``server`` (the name rule packs and reports use for them).

        ``annotations`` gives MCP annotations per tool name (``{"send_email": {"openWorldHint": True,
        "readOnlyHint": False}}``); a tool from ``langchain-mcp-adapters``, which keeps its MCP annotations in
        ``tool.metadata``, has them read from there, and the ones given here win. ``trusted`` says whether the
        server's hints that could only lower risk (``openWorldHint: false``) count."""
        given = annotations or {}
        wrapped: list[GuardedTool] = []
        entries: list[dict[str, Any]] = []
        for tool in tools:
            hints = read_annotations(tool.metadata, given.get(tool.name))
            entries.append(make_tool_entry(tool.name, tool.description, _read_schema(tool), hints))
            wrapped.append(GuardedTool.wrap(tool, server=server, guard=self))
        self._gate.add_listing(server, entries, trusted)
        return wrapped

    def find_session_key(self, config: RunnableConfig | None = None) -> str | None:
        """Return the session key of a run: the guard's ``session_key`` (called with the config when it is a
        function), else ``config["configurable"]["thread_id"]``; None when there is none. Without ``config``,
        the config of the run this is called in (LangChain's context) is read."""
        resolved = ensure_config(config)
        key: object
        if callable(self._session_key):
            key = self._session_key(resolved)
        elif self._session_key is not None:
            key = self._session_key
        else:
            key = (resolved.get("configurable") or {}).get("thread_id")
        return str(key) if key not in (None, "") else None

    def observe_user_message(self, text: str, config: RunnableConfig | None = None) -> None:
        """Tell the monitor what the user typed in the run ``config`` names (see :meth:`find_session_key`)."""
        self._gate.observe_user_message(self._safe_key(config), text)

    def observe_input(self, graph_input: Any, config: RunnableConfig | None = None) -> Any:
        """Tell the monitor the user's words in a graph's input, and return the input unchanged, so that
        ``graph.invoke(guard.observe_input(inputs, config), config)`` does both. The input is a dict with
        ``messages``, a list of messages (``HumanMessage``, ``("user", text)``, ``{"role": "user", …}``) or a
        string; every human message in it is recorded. Pass the turn's new messages, not the whole history."""
        key = self._safe_key(config)
        for text in _read_human_texts(graph_input):
            self._gate.observe_user_message(key, text)
        return graph_input

    # -- used by GuardedTool ---------------------------------------------------------------------------------

    def _check_call(self, server: str, tool: str, arguments: dict[str, Any], call_id: str, config: Any) -> Check:
        """Decide a call of a wrapped tool (see :class:`GuardedTool`)."""
        return self._gate.check_call(self._safe_key(config), server, tool, arguments, call_id)

    def _settle(self, check: Check) -> str | None:
        """Return None when a checked call may run, else the refusal for the model (``ask`` called as is)."""
        return self._gate.settle(check)

    async def _asettle(self, check: Check) -> str | None:
        """Return None when a checked call may run, else the refusal for the model (``ask`` awaited if async)."""
        return await self._gate.asettle(check)

    def _report_result(self, check: Check, output: Any) -> None:
        """Give the monitor what the wrapped tool returned (a ``ToolMessage``, its content, or a ``Command``)."""
        if check.session_key is not None and check.decision is not None:
            content, failed = _read_content(output)
            self._gate.report_result(check.session_key, check.decision.call_id, content, failed)

    def _report_error(self, check: Check, exc: BaseException) -> None:
        """Tell the monitor that the wrapped tool raised instead of returning."""
        if check.session_key is not None and check.decision is not None:
            self._gate.report_result(check.session_key, check.decision.call_id, f"{type(exc).__name__}: {exc}", True)

    def _safe_key(self, config: Any) -> str | None:
        try:
            return self.find_session_key(cast(RunnableConfig, config) if isinstance(config, dict) else None)
        except Exception:
            logger.exception("trifecta-monitor: the session key could not be found")
            return None


class GuardedTool(BaseTool):
    """A LangChain tool whose calls a :class:`LangChainGuard` decides first; made by
    :meth:`LangChainGuard.wrap_tools`. It has the wrapped tool's name, description and argument schema; the
    wrapped tool (``inner``) runs, with its own callbacks and error handling, only when the call may run."""

    inner: BaseTool
    """The wrapped tool."""
    server: str
    """The server (or tool group) the host named for it."""
    _guard: LangChainGuard = PrivateAttr()

    @classmethod
    def wrap(cls, tool: BaseTool, *, server: str, guard: LangChainGuard) -> GuardedTool:
        """Return ``tool`` wrapped, its calls decided by ``guard``."""
        wrapped = cls(
            name=tool.name,
            description=tool.description,
            args_schema=tool.args_schema,
            return_direct=tool.return_direct,
            response_format=tool.response_format,
            tags=tool.tags,
            metadata=tool.metadata,
            extras=tool.extras,
            inner=tool,
            server=server,
        )
        wrapped._guard = guard
        return wrapped

    def run(self, tool_input: str | dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        """Decide the call, run the wrapped tool if it may run, and report its result; otherwise return the
        refusal (a ``ToolMessage`` with ``status="error"`` when the call has an id, else the text)."""
        check = self._check(tool_input, kwargs)
        refusal = self._guard._settle(check)
        if refusal is not None:
            return self._refuse(refusal, kwargs.get("tool_call_id"))
        try:
            output = self.inner.run(tool_input, *args, **kwargs)
        except BaseException as exc:
            self._guard._report_error(check, exc)
            raise
        self._guard._report_result(check, output)
        return output

    async def arun(self, tool_input: str | dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        """The asynchronous :meth:`run` (``ask`` is awaited when it is a coroutine function)."""
        check = self._check(tool_input, kwargs)
        refusal = await self._guard._asettle(check)
        if refusal is not None:
            return self._refuse(refusal, kwargs.get("tool_call_id"))
        try:
            output = await self.inner.arun(tool_input, *args, **kwargs)
        except BaseException as exc:
            self._guard._report_error(check, exc)
            raise
        self._guard._report_result(check, output)
        return output

    def _run(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("GuardedTool runs through run()/arun(), which decide the call first")

    def _check(self, tool_input: str | dict[str, Any], kwargs: dict[str, Any]) -> Check:
        call_id = kwargs.get("tool_call_id") or f"lc-{uuid.uuid4().hex[:12]}"
        arguments = _select_model_arguments(self.inner, tool_input)
        return self._guard._check_call(self.server, self.name, arguments, str(call_id), kwargs.get("config"))

    def _refuse(self, refusal: str, tool_call_id: Any) -> Any:
        if tool_call_id is None:
            return refusal
        return ToolMessage(content=refusal, tool_call_id=str(tool_call_id), name=self.name, status="error")


def _read_schema(tool: BaseTool) -> Any:
    """The JSON schema of the arguments the model gives the tool (injected arguments left out)."""
    return _render_schema(lambda: tool.tool_call_schema)


def _render_schema(read: Callable[[], Any]) -> Any:
    try:
        schema = read()
        if isinstance(schema, dict):
            return schema
        if isinstance(schema, type) and issubclass(schema, BaseModel):
            return schema.model_json_schema()
    except Exception:  # a schema pydantic cannot render: the tool is registered without one
        return None
    return None


def _select_model_arguments(tool: BaseTool, tool_input: str | dict[str, Any]) -> dict[str, Any]:
    """The arguments the model chose: the injected ones (graph state, store, runtime: in the tool's full input
    schema, not in the schema the model is shown) left out."""
    if isinstance(tool_input, str):
        return {"input": tool_input}
    try:
        injected = _list_fields(tool.get_input_schema()) - _list_fields(tool.tool_call_schema)
    except Exception:  # a schema that cannot be read: every argument is examined
        injected = set()
    return {key: value for key, value in tool_input.items() if key not in injected}


def _list_fields(schema: Any) -> set[str]:
    if isinstance(schema, dict):
        return set(schema.get("properties") or {})
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return set(schema.model_fields)
    return set()


def _read_content(output: Any) -> tuple[Any, bool]:
    """What the model sees of a tool's output, and whether it is an error."""
    if isinstance(output, ToolMessage):
        return output.content, output.status == "error"
    update = getattr(output, "update", None)  # a LangGraph Command: its ToolMessages are what the model sees
    if isinstance(update, dict):
        messages = [m for m in update.get("messages") or [] if isinstance(m, ToolMessage)]
        if messages:
            return [m.content for m in messages], any(m.status == "error" for m in messages)
    return output, False


def _read_human_texts(graph_input: Any) -> list[str]:
    """The text of every human message in a graph's input."""
    raw = graph_input.get("messages", []) if isinstance(graph_input, dict) else graph_input
    if isinstance(raw, (str, BaseMessage, tuple)):
        raw = [raw]
    try:
        messages = convert_to_messages(raw)
    except Exception:  # an input LangChain cannot read is the graph's to refuse, never the monitor's to raise
        logger.warning("trifecta-monitor: the graph's input could not be read for the user's words", exc_info=True)
        return []
    return [m.text for m in messages if isinstance(m, HumanMessage) and m.text]
