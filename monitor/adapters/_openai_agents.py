"""OpenAI Agents SDK function tools behind the monitor: :class:`AgentsGuard` adds a tool input guardrail (decide
the call before the tool runs) and a tool output guardrail (report what it returned) to each tool."""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from agents import (
    FunctionTool,
    RunConfig,
    RunContextWrapper,
    ToolGuardrailFunctionOutput,
    ToolInputGuardrail,
    ToolInputGuardrailData,
    ToolOutputGuardrail,
    ToolOutputGuardrailData,
)

from monitor.adapters._gate import AskCallback, Gate, logger, make_tool_entry, parse_arguments, read_annotations
from monitor.session import SessionMonitor

SessionKey = str | Callable[[RunContextWrapper[Any]], str | None]
"""A fixed session key, or a function of the tool call's context (the SDK's ``ToolContext``, a
``RunContextWrapper`` whose ``context`` is the object the host passed to ``Runner.run``) that returns one."""

GUARDRAIL_NAME = "trifecta-monitor"
"""The name of the guardrails this adapter adds (as the run's guardrail results name them)."""

_PENDING_LIMIT = 10_000


class AgentsGuard:
    """Puts a :class:`~monitor.session.SessionMonitor` in front of OpenAI Agents SDK function tools.

    :meth:`guard_tools` returns copies of the tools, each with two more guardrails: a tool input guardrail that
    asks the monitor before the tool runs, and a tool output guardrail that reports the tool's output after.
    ``allow`` lets the tool run. ``deny`` rejects the call (``reject_content``): the tool does not run, and the
    model gets the decision in one line (:meth:`~monitor.Decision.describe`) as the call's output. ``confirm``
    and ``review`` go to ``ask`` (a :class:`~monitor.adapters.CallQuestion` in, True to run; it may be async);
    **without an ``ask`` callback they are rejected** like ``deny``. The guardrail's ``output_info`` is the
    :class:`~monitor.Decision` (the run result's ``tool_input_guardrail_results`` keep it).

    The session key: ``session_key`` (a string, or a function of the tool call's context) when given, else the
    run's ``RunConfig.group_id`` (the SDK's id for linking the runs of one conversation). A call with no key is
    rejected. The user's words: pass each turn's input through :meth:`observe_input` before ``Runner.run``.

    The monitor never raises into the run: if it fails, the call is treated as ``confirm`` (reason
    ``monitor-error``), so it runs only if ``ask`` says so. Exceptions of ``ask`` itself pass through."""

    def __init__(
        self, monitor: SessionMonitor, *, ask: AskCallback | None = None, session_key: SessionKey | None = None
    ) -> None:
        self._gate = Gate(monitor, ask)
        self._session_key = session_key
        # (session key, tool call id) -> the id the monitor knows the call by, from input to output guardrail
        self._pending: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def monitor(self) -> SessionMonitor:
        """The monitor that decides the calls."""
        return self._gate.monitor

    def guard_tools(
        self,
        tools: Iterable[FunctionTool],
        *,
        server: str,
        annotations: Mapping[str, Mapping[str, Any]] | None = None,
        trusted: bool = False,
    ) -> list[FunctionTool]:
        """Return copies of ``tools`` with the monitor's guardrails added (after the tools' own input guardrails),
        as tools of ``server`` (the name rule packs and reports use for them). ``annotations`` gives MCP
        annotations per tool name (``{"send_email": {"openWorldHint": True, "readOnlyHint": False}}``);
        ``trusted`` says whether the server's hints that could only lower risk (``openWorldHint: false``) count."""
        given = annotations or {}
        before = self._make_input_guardrail(server)
        after = self._make_output_guardrail()
        guarded: list[FunctionTool] = []
        entries: list[dict[str, Any]] = []
        for tool in tools:
            hints = read_annotations(given.get(tool.name))
            entries.append(make_tool_entry(tool.name, tool.description, tool.params_json_schema, hints))
            clone = copy.copy(tool)
            clone.tool_input_guardrails = [*(tool.tool_input_guardrails or []), before]
            clone.tool_output_guardrails = [*(tool.tool_output_guardrails or []), after]
            guarded.append(clone)
        self._gate.add_listing(server, entries, trusted)
        return guarded

    def observe_input(
        self, run_input: Any, *, session_key: str | None = None, run_config: RunConfig | None = None
    ) -> None:
        """Tell the monitor the user's words in ``run_input`` (what the host passes to ``Runner.run``: a string,
        or input items, whose ``role: "user"`` messages are read). The session is ``session_key`` when given,
        else the guard's fixed ``session_key``, else ``run_config.group_id``; a guard whose ``session_key`` is a
        function needs ``session_key`` here. Pass the turn's new input, not the whole history."""
        key = session_key or (self._session_key if isinstance(self._session_key, str) else None)
        if key is None and run_config is not None:
            key = run_config.group_id
        for text in _read_user_texts(run_input):
            self._gate.observe_user_message(key, text)

    def find_session_key(self, context: RunContextWrapper[Any]) -> str | None:
        """Return the session key of a tool call: the guard's ``session_key`` (called with the context when it is
        a function), else the run's ``RunConfig.group_id``; None when there is none."""
        if callable(self._session_key):
            key: object = self._session_key(context)
        elif self._session_key is not None:
            key = self._session_key
        else:
            key = getattr(getattr(context, "run_config", None), "group_id", None)
        return str(key) if key not in (None, "") else None

    def _make_input_guardrail(self, server: str) -> ToolInputGuardrail[Any]:
        async def decide_call(data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
            context = data.context
            key = self._safe_key(context)
            arguments = parse_arguments(context.tool_arguments)
            check = self._gate.check_call(key, server, context.tool_name, arguments, context.tool_call_id)
            refusal = await self._gate.asettle(check)
            if refusal is not None:
                return ToolGuardrailFunctionOutput.reject_content(refusal, output_info=check.decision)
            if key is not None and check.decision is not None:
                self._remember(key, context.tool_call_id, check.decision.call_id)
            return ToolGuardrailFunctionOutput.allow(output_info=check.decision)

        return ToolInputGuardrail(guardrail_function=decide_call, name=GUARDRAIL_NAME)

    def _make_output_guardrail(self) -> ToolOutputGuardrail[Any]:
        async def report_output(data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
            context = data.context
            key = self._safe_key(context)
            decided = self._forget(key, context.tool_call_id) if key is not None else None
            if key is not None and decided is not None:
                self._gate.report_result(key, decided, data.output, False)
            return ToolGuardrailFunctionOutput.allow()

        return ToolOutputGuardrail(guardrail_function=report_output, name=GUARDRAIL_NAME)

    def _safe_key(self, context: RunContextWrapper[Any]) -> str | None:
        try:
            return self.find_session_key(context)
        except Exception:
            logger.exception("trifecta-monitor: the session key could not be found")
            return None

    def _remember(self, key: str, tool_call_id: str, decided: str) -> None:
        with self._lock:
            self._pending[(key, tool_call_id)] = decided
            while len(self._pending) > _PENDING_LIMIT:  # calls whose output never came (a cancelled run)
                self._pending.popitem(last=False)

    def _forget(self, key: str, tool_call_id: str) -> str | None:
        with self._lock:
            return self._pending.pop((key, tool_call_id), None)


def _read_user_texts(run_input: Any) -> list[str]:
    """The text of every user message in a run's input (a string, or Responses API input items)."""
    if isinstance(run_input, str):
        return [run_input] if run_input else []
    texts: list[str] = []
    if run_input is None:
        return []
    if not isinstance(run_input, (list, tuple)):
        logger.warning("trifecta-monitor: a run input of type %s holds no user message it can read", type(run_input))
        return []
    for item in run_input:
        if not isinstance(item, Mapping) or item.get("role") != "user":
            continue
        content = item.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            parts = [part.get("text") for part in content if isinstance(part, Mapping)]
            texts.append("\n".join(part for part in parts if isinstance(part, str)))
    return [text for text in texts if text]
