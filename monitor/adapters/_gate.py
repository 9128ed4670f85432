"""What every framework adapter shares: asking the monitor before a tool runs without ever failing open, asking
the host's callback about a call to confirm, and reporting results without ever raising into the host.

Nothing here imports a framework: the adapters convert their framework's tools, calls and results to the plain
values this module takes."""

from __future__ import annotations

import inspect
import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from monitor.decide import decide_on_monitor_error
from monitor.models import Action, Decision
from monitor.session import SessionMonitor

logger = logging.getLogger("monitor.adapters")

ANNOTATION_KEYS = {
    "title": "title",
    "readOnlyHint": "readOnlyHint",
    "destructiveHint": "destructiveHint",
    "idempotentHint": "idempotentHint",
    "openWorldHint": "openWorldHint",
    "read_only_hint": "readOnlyHint",
    "destructive_hint": "destructiveHint",
    "idempotent_hint": "idempotentHint",
    "open_world_hint": "openWorldHint",
}
"""The MCP tool annotations (``ToolAnnotations``, a closed set), by the names the JSON and the ``mcp`` SDK's
Python objects give them."""

_REMEMBERED_SESSIONS = 4096
_JSON_SCALARS = (str, int, float, bool, type(None))


class CallQuestion(BaseModel):
    """A call the monitor wants a person to confirm (``confirm`` or ``review``), as an adapter puts it to the
    host's ``ask`` callback. The callback returns True to run the call, False to refuse it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    session_key: str
    """The session the call belongs to (the host's conversation or thread id)."""
    server: str
    """The server (or tool group) the host named for the tool."""
    tool: str
    """The tool's name."""
    arguments: dict[str, Any]
    """The arguments the model gave the call."""
    decision: Decision
    """The monitor's decision, with its reasons and evidence."""
    message: str
    """The decision in one line a person understands (:meth:`~monitor.Decision.describe`): show it when asking."""


AskCallback = Callable[[CallQuestion], bool | Awaitable[bool]]
"""The host's way to ask the user about a call: True runs it, False refuses it (it may be a coroutine function
where the framework runs tools asynchronously)."""


class Check(BaseModel):
    """What the monitor said about one call before it runs: the decision (None when no session key was found),
    the refusal to give the model if the call may not run, or the question to put to the host's callback."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    session_key: str | None
    decision: Decision | None
    refusal: str | None = None
    question: CallQuestion | None = None


class Gate:
    """The monitor's gate in front of a framework's tools: registers the tools the host declared in each session,
    decides each call, asks the host's callback about calls to confirm, and reports results.

    Every failure of the monitor is logged and never raised: a decision that cannot be obtained is ``confirm``
    (reason ``monitor-error``), and a call to confirm with no callback to ask is refused. Exceptions of the
    host's own callback pass through unchanged (a framework may use one to pause the run)."""

    def __init__(self, monitor: SessionMonitor, ask: AskCallback | None) -> None:
        self.monitor = monitor
        self.ask = ask
        self._listings: list[tuple[str, list[dict[str, Any]], bool]] = []
        self._registered: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()

    def add_listing(self, server: str, tools: Sequence[Mapping[str, Any]], trusted: bool) -> None:
        """Declare tools of one server (as MCP ``tools/list`` entries); each session gets them registered."""
        with self._lock:
            self._listings.append((server, [dict(tool) for tool in tools], trusted))
            self._registered.clear()  # every session learns the new tools at its next call

    def register_listings(self, session_key: str) -> None:
        """Register the declared tools in a session the first time the gate meets it (and again when the monitor
        no longer holds it). A failure is logged: the tools are then classified by name alone."""
        with self._lock:
            known = session_key in self._registered
            if known:
                self._registered.move_to_end(session_key)
            listings = list(self._listings)
        try:
            if known and self.monitor.has_session(session_key):
                return
            for server, tools, trusted in listings:
                self.monitor.register_tools(session_key, server, tools, trusted)
        except Exception:
            logger.exception("trifecta-monitor: the tools could not be registered in session %r", session_key)
            return
        with self._lock:
            self._registered[session_key] = None
            while len(self._registered) > _REMEMBERED_SESSIONS:
                self._registered.popitem(last=False)

    def observe_user_message(self, session_key: str | None, text: str) -> None:
        """Tell the monitor what the user typed. A failure (or no session key) is logged, never raised."""
        if not session_key:
            logger.error("trifecta-monitor: a user message was not recorded: no session key")
            return
        self.register_listings(session_key)
        try:
            self.monitor.observe_user_message(session_key, text)
        except Exception:
            logger.exception("trifecta-monitor: a user message of session %r was not recorded", session_key)

    def check_call(
        self, session_key: str | None, server: str, tool: str, arguments: dict[str, Any], call_id: str | None
    ) -> Check:
        """Decide a call before it runs: return the decision, and the refusal or the question it calls for."""
        if not session_key:
            logger.error("trifecta-monitor: no session key for a call of %s/%s; refused", server, tool)
            refusal = (
                f"trifecta-monitor could not check this {server}/{tool} call: no session key (the host gives "
                "one); it was not run"
            )
            return Check(session_key=None, decision=None, refusal=refusal)
        self.register_listings(session_key)
        try:
            decision = self.monitor.before_call(session_key, server, tool, arguments, call_id)
        except Exception:
            logger.exception("trifecta-monitor: no decision for %s/%s; asking to confirm", server, tool)
            decision = decide_on_monitor_error(call_id)
        if decision.action is Action.ALLOW:
            return Check(session_key=session_key, decision=decision)
        message = self.describe(session_key, decision, server, tool)
        if decision.action is Action.DENY:
            return Check(session_key=session_key, decision=decision, refusal=message)
        question = CallQuestion(
            session_key=session_key, server=server, tool=tool, arguments=arguments, decision=decision, message=message
        )
        return Check(session_key=session_key, decision=decision, question=question)

    def settle(self, check: Check) -> str | None:
        """Return None when the checked call may run, else the refusal for the model. A callback that returns an
        awaitable cannot be awaited here (a tool run synchronously): the call is refused, and that is logged."""
        if check.question is None:
            return check.refusal
        if self.ask is None:
            return _refuse_unasked(check.question)
        answer = self.ask(check.question)
        if inspect.isawaitable(answer):
            _close(answer)
            logger.error("trifecta-monitor: the ask callback is a coroutine, but this tool runs synchronously")
            return f"{check.question.message}; the user could not be asked, so it was not run"
        return None if answer else f"{check.question.message}; the user declined"

    async def asettle(self, check: Check) -> str | None:
        """Return None when the checked call may run, else the refusal for the model (the callback's answer is
        awaited when it is awaitable)."""
        if check.question is None:
            return check.refusal
        if self.ask is None:
            return _refuse_unasked(check.question)
        answer = self.ask(check.question)
        if inspect.isawaitable(answer):
            answer = await answer
        return None if answer else f"{check.question.message}; the user declined"

    def report_result(self, session_key: str, call_id: str, result: Any, is_error: bool) -> None:
        """Give the monitor a call's result (converted to JSON values). A failure is logged, never raised: the
        call has run, and its result belongs to the host."""
        try:
            self.monitor.after_call(session_key, call_id, jsonify_result(result), is_error)
        except Exception:
            logger.exception("trifecta-monitor: the result of call %s could not be recorded", call_id)

    def describe(self, session_key: str, decision: Decision, server: str, tool: str) -> str:
        """Return the decision in one line a person understands, naming the tools earlier data came from."""
        tools_by_call: dict[str, str] = {}
        try:
            if self.monitor.has_session(session_key):
                tools_by_call = {call.call_id: call.tool for call in self.monitor.session(session_key).calls}
        except Exception:
            logger.exception("trifecta-monitor: the session could not be read to describe a decision")
        return decision.describe(f"{server}/{tool}", tools_by_call)


def read_annotations(*sources: Mapping[str, Any] | None) -> dict[str, Any]:
    """Return the MCP annotations found in ``sources`` (later sources win), by their MCP names; keys outside the
    closed set of annotations and values of the wrong type are left out."""
    found: dict[str, Any] = {}
    for source in sources:
        for key, value in (source or {}).items():
            name = ANNOTATION_KEYS.get(key)
            expected = str if name == "title" else bool
            if name is not None and isinstance(value, expected):
                found[name] = value
    return found


def make_tool_entry(name: str, description: str, schema: Any, annotations: Mapping[str, Any]) -> dict[str, Any]:
    """Return a tool as a ``tools/list`` entry (its annotations only when there are some)."""
    entry: dict[str, Any] = {
        "name": name,
        "description": description or "",
        "inputSchema": schema if isinstance(schema, dict) else {"type": "object"},
    }
    if annotations:
        entry["annotations"] = dict(annotations)
    return entry


def jsonify_result(result: Any) -> Any:
    """Return a tool's result as JSON values: pydantic models dumped as they are sent on the wire, any other
    value that is not JSON as its text (what a framework shows the model of it)."""
    if isinstance(result, _JSON_SCALARS):
        return result
    try:
        return json.loads(json.dumps(result, default=_dump_value))
    except (TypeError, ValueError):  # a circular structure, a key that is not text
        return str(result)


def _dump_value(value: object) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(by_alias=True, mode="json", exclude_none=True)
    return str(value)


def parse_arguments(raw: str | None) -> dict[str, Any]:
    """Return a call's JSON arguments as a dict; arguments that are not a JSON object are kept as ``input``."""
    if not raw:
        return {}
    try:
        parsed = json.loads(raw)
    except (ValueError, RecursionError):  # the model wrote it: nesting deep enough to exhaust the stack is text too
        return {"input": raw}
    return parsed if isinstance(parsed, dict) else {"input": parsed}


def _refuse_unasked(question: CallQuestion) -> str:
    return f"{question.message}; there is no one to ask, so it was not run"


def _close(awaitable: object) -> None:
    close = getattr(awaitable, "close", None)
    if callable(close):
        close()
