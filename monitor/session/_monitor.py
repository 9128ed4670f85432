"""The session engine: hosts tell it what happens, and it answers each tool call with a :class:`Decision`.

A session moves one way. What a host reports enters it in this order:

- ``register_tools``: a server's ``tools/list`` result. Each tool is classified (reviewed override, annotations,
  heuristics, the posture's default); the legs the tools *could* give are the session's exposure, and an
  ``exposed`` alert says when they cover all three. A reviewed rule whose pinned definition differs from the one
  listed is void for the session (``definition-changed``).
- ``observe_user_message``: the user's words. They sanction the destinations they name, and (by default) put
  private data in the context: the conversation itself is private.
- ``before_call``: a requested call. Its legs come from the classifier; when it can send out
  (``external_communication``) while untrusted content and private data are both in the context (armed), its
  destinations are labelled by who chose them and its arguments searched for private content, and the policy
  (:func:`monitor.decide.decide`) decides. URLs in its content that rendering fetches (images) are destinations
  of their own, and a URL on a site the user named is the attacker's when untrusted text built it and it carries
  private content. The call's own external leg enters the context at once. A reviewed rule whose pin could not
  be checked (the tool was never listed) raises ``pin-unchecked`` once per tool.
- ``after_call``: the call's result. Result labels add legs (a trusted server's may also lower them, see
  docs/labels.md); the result is indexed (what it lists, its free text, its private content). The call's
  private data and untrusted content enter the context now, and so do those of every call requested before it
  (they ran, whether or not their results were recorded). Calls requested together are not assumed to see each
  other's results.

Levels only rise (clean, partial, armed, trifecta, exfiltration); nothing lowers them, not even an approval.
Every alert keeps the call path and evidence behind it. Decisions are a pure function of the session state and
the call: replaying a trace offline gives exactly what a live host got.

The monitor never raises into its host: a failure inside it becomes a :class:`~monitor.models.MonitorFailed`
(logged, counted in :attr:`SessionMonitor.internal_errors`, pushed to a sink that hears failures, returned by
:meth:`SessionMonitor.take_failures`), and :meth:`SessionMonitor.before_call` then answers ``confirm`` with the
reason ``monitor-error``.

Work is bounded per record: each result is read within :class:`~monitor.evidence.ReadBounds`, and what a bound
left unexamined counts against later calls (``evidence-truncated``, see :mod:`monitor.decide`). Each session
has its own lock, so a session busy with a costly result never holds up another; a short registry lock only
guards the table of sessions. A sink is pushed what happened once the session's lock is released.
"""

from __future__ import annotations

import logging
import sys
import threading
import warnings
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from monitor.classify import Classifier
from monitor.decide import Policy, Scope, decide_on_monitor_error
from monitor.errors import describe_exception
from monitor.evidence import ArgumentTextsOnce, ContentIndex, ReadBounds
from monitor.models import (
    AlertKind,
    AlertRaised,
    AssistantMessage,
    CallDecided,
    Decision,
    Event,
    Finding,
    FragmentMatch,
    Leg,
    LevelChanged,
    MonitorFailed,
    Posture,
    ServerIdentity,
    SessionReport,
    ToolCall,
    ToolResult,
    ToolsListed,
    UserMessage,
)
from monitor.session._boundary import (
    convert_arguments,
    convert_result,
    convert_tools,
    report_unknown_session,
    warn_and_find,
    warn_dropped_tools,
    warn_reused_call_id,
)
from monitor.session._calls import commit_older, decide_call, record_result
from monitor.session._config import MonitorConfig, RuleChoice
from monitor.session._embedded import check_reply
from monitor.session._facts import alert_on_flow, alert_on_truncation, find_kept_private
from monitor.session._servers import register_listing
from monitor.session._state import Notice, SessionState
from monitor.session._table import SessionTable
from monitor.types import AlertSink, FailureSink

logger = logging.getLogger("monitor")

_CONVERSATION = ""
_KEPT_FAILURES = 1000
_T = TypeVar("_T")


def _nothing() -> None:
    return None


class SessionMonitor:
    """Watches sessions for the lethal trifecta and decides each tool call before it runs.

    Every method is safe to call from an agent host: it never raises. If the monitor itself fails,
    :meth:`before_call` answers ``confirm`` with the reason ``monitor-error`` and the failure is logged.

    ``config`` (a :class:`MonitorConfig`) says how it classifies and decides; the keyword arguments
    ``posture``, ``policy``, ``rules``, ``evidence_budget`` and ``read_bounds`` are the same fields given one by
    one (they change ``config``'s, when both are given). ``rules`` takes an override source, ``"builtin"`` (the
    default) or ``"none"``; ``read_bounds`` (a :class:`~monitor.evidence.ReadBounds`) limits the work of reading
    one result, and what a bound leaves out counts against later sends (``evidence-truncated``). ``sink`` (an
    :class:`~monitor.types.AlertSink`) is pushed every decision, alert and change of level as it happens, once
    the operation that caused it is over: hosts and exporters need not poll :meth:`session`.
    ``builtin_rules=False`` is the deprecated spelling of ``rules="none"``.
    """

    def __init__(
        self,
        config: MonitorConfig | None = None,
        *,
        sink: AlertSink | None = None,
        posture: Posture | str | None = None,
        policy: Policy | None = None,
        rules: RuleChoice | None = None,
        evidence_budget: int | None = None,
        read_bounds: ReadBounds | None = None,
        builtin_rules: bool | None = None,
    ) -> None:
        given = {
            name: value
            for name, value in (
                ("posture", posture),
                ("policy", policy),
                ("rules", rules),
                ("evidence_budget", evidence_budget),
                ("read_bounds", read_bounds),
            )
            if value is not None
        }
        if builtin_rules is not None:
            warnings.warn(
                "SessionMonitor(builtin_rules=...) is deprecated: pass rules='none' for no reviewed overrides",
                DeprecationWarning,
                stacklevel=2,
            )
            if not builtin_rules and rules is None:
                given["rules"] = "none"
        base = config or MonitorConfig()
        self.config = base.replace(**given) if given else base
        """What this monitor was made with (the keyword arguments, when given, change ``config``'s fields)."""
        self.posture = self.config.posture
        self.policy = self.config.policy
        self.rules = self.config.load_rules()
        self.classifier = Classifier(self.posture, self.rules)
        self.evidence_budget = self.config.evidence_budget
        self.read_bounds = self.config.read_bounds
        """The limits on reading one result; what they leave out counts against later sends."""
        self._sink = sink
        self.internal_errors = 0
        """Failures of the monitor itself (each logged, none raised)."""
        self.sink_errors = 0
        """Failures of the sink (each logged, none raised)."""
        self._failures: deque[MonitorFailed] = deque(maxlen=_KEPT_FAILURES)
        self._sessions: SessionTable[SessionState] = SessionTable(self._new_state)
        # Guards the counters and the sink only: never held while a session works.
        self._registry = threading.Lock()

    # -- public API ---------------------------------------------------------------------------------

    def register_tools(
        self, session_id: str, server: str, tools: Any, trusted: bool = False, identity: ServerIdentity | None = None
    ) -> list[Finding]:
        """Record a server's ``tools/list`` result: a list of tool dicts or ``mcp`` SDK ``Tool`` objects, a
        ``ListToolsResult``, or one tool. Returns the findings, which are also raised as ``invalid-annotation``
        alerts; a tool dropped for want of a name is also warned (:class:`~monitor.errors.MonitorWarning`).
        Any other type of ``tools`` is a :class:`TypeError`. ``identity``: the server's ``serverInfo`` and package,
        when the host knows them (a rule pack reviewed for another server of the same name then does not apply)."""
        raw = convert_tools(tools)
        findings: list[Finding] = self._run(
            "register_tools",
            session_id,
            lambda s: register_listing(s, self.classifier, server, raw, trusted, identity),
            list,
        )
        return warn_dropped_tools(server, findings)

    def observe_user_message(self, session_id: str, text: str) -> None:
        """Record text the user typed: it sanctions destinations, and is private data in the context."""
        self._run("observe_user_message", session_id, lambda s: self._observe_user_message(s, text), _nothing)

    def observe_assistant_message(self, session_id: str, text: str) -> None:
        """Record that the model wrote text: every call requested before it has run by now. A reply that shows an
        image whose URL carries private data to a host the user did not name raises an ``exfiltration`` alert
        (displaying it sends the data, and no tool call is there to decide on)."""

        def observe(state: SessionState) -> None:
            commit_older(state)
            check_reply(state, text, self.policy.allowlist)

        self._run("observe_assistant_message", session_id, observe, _nothing)

    def find_private_content(self, session_id: str, arguments: Mapping[str, Any]) -> tuple[FragmentMatch, ...]:
        """The session's private content that ``arguments`` hold (verbatim, encoded, as secrets; not paraphrase):
        what a file written with them keeps. Empty for a session the monitor does not hold, or on failure."""
        if not self.has_session(session_id):
            return ()
        kept = convert_arguments(arguments) or {}
        return self._run("find_private_content", session_id, lambda s: find_kept_private(s, kept), tuple)

    def report_cross_session_flow(self, session_id: str, call_id: str | None, message: str) -> None:
        """Record that a call sends what another session of the same project left with private data (a file it
        wrote): an ``exfiltration`` alert of severity high on the call (this session's evidence cannot see it)."""
        self._run("report_cross_session_flow", session_id, lambda s: alert_on_flow(s, call_id, message), _nothing)

    def report_gap(self, session_id: str, message: str) -> None:
        """Record that part of the session was never seen (a ``monitoring-gap`` alert): its level may be low."""
        self._run("report_gap", session_id, lambda s: s.raise_alert(AlertKind.MONITORING_GAP, None, message), _nothing)

    def approve(
        self, session_id: str, server: str, tool: str, arguments: Mapping[str, Any] | None, reusable: bool = False
    ) -> None:
        """Record the user's approval of a write (``reviewed-only`` policy): the next call of ``tool`` on ``server``
        with exactly these arguments is allowed by the approval rule, once (every time with ``reusable``)."""
        args = convert_arguments(arguments)
        self._run("approve", session_id, lambda s: s.approvals.add(server, tool, args, reusable), _nothing)

    def set_scope(self, session_id: str, scope: Scope | None) -> None:
        """Give the session the scope the user allowed (``reviewed-only`` policy; None: the policy's own)."""
        self._run("set_scope", session_id, lambda s: setattr(s, "scope", scope), _nothing)

    def before_call(
        self,
        session_id: str,
        server: str,
        tool: str,
        arguments: Mapping[str, Any] | None,
        call_id: str | None = None,
    ) -> Decision:
        """Decide a requested call: return a :class:`~monitor.Decision` (``allow``, ``confirm`` or ``deny``,
        with reasons and evidence). ``call_id`` is the id the host gave the call. Without one the monitor names
        the call (finding ``call-id-assigned``); an id already used in the session is renamed (warned, finding
        ``call-id-reused``): either way the decision's ``call_id`` is the one to pass to :meth:`after_call`.
        ``arguments`` is a dict (or a pydantic model, dumped); any other type is a :class:`TypeError`."""
        args = convert_arguments(arguments)
        decision = self._run(
            "before_call",
            session_id,
            lambda s: self._before_call(s, server, tool, args, call_id),
            lambda: decide_on_monitor_error(call_id),
            call_id,
        )
        return warn_reused_call_id(decision)

    def after_call(self, session_id: str, call_id: str, result: Any, is_error: bool = False) -> list[Finding]:
        """Record the result of a call; its private data and untrusted content now enter the context.

        ``result`` is what the tool returned: JSON values, or the ``mcp`` SDK's ``CallToolResult`` or content
        blocks; any other type is a :class:`TypeError`. Returns the
        findings: ``unknown-call-id`` (also warned) when no call of the session waits for this id, and the
        result is then ignored."""
        plain, failed = convert_result(result)
        errored = is_error or failed
        known = self._run(
            "after_call",
            session_id,
            lambda s: record_result(
                s,
                self.classifier,
                self.read_bounds,
                lambda where: self._fail(where, session_id, call_id, s),
                call_id,
                plain,
                errored,
            ),
            lambda: True,
            call_id,
        )
        message = f"session {session_id!r}: result for unknown call {call_id!r} ignored"
        return [] if known else [warn_and_find("unknown-call-id", message)]

    def session(self, session_id: str) -> SessionReport:
        """Return a snapshot of the session: legs, level, alerts, calls and ``.graph``. The report is a frozen
        copy: later calls do not change it. A session the monitor does not hold is reported empty, with the
        finding ``unknown-session`` (also warned)."""
        slot = self._sessions.find(session_id)
        if slot is None:
            return report_unknown_session(self._new_state(session_id).to_report())
        with slot.lock:
            return slot.value.to_report()

    @property
    def sink(self) -> AlertSink | None:
        """The sink pushed every decision, alert and change of level (None: nothing is pushed)."""
        return self._sink

    @sink.setter
    def sink(self, sink: AlertSink | None) -> None:
        with self._registry:
            self._sink = sink
            slots = self._sessions.slots()
        for slot in slots:  # sessions already held are heard from too, from now on
            with slot.lock:
                if sink is None:
                    slot.value.notices = None
                elif slot.value.notices is None:
                    slot.value.notices = []

    def has_session(self, session_id: str) -> bool:
        """Return whether the monitor holds the session now."""
        return session_id in self._sessions

    def end_session(self, session_id: str) -> SessionReport:
        """Forget a session and return its final snapshot (with an ``evidence-truncated`` alert if its evidence
        reached the memory bound and was not yet reported). Memory follows the sessions still held. A session the
        monitor does not hold is reported empty, with the finding ``unknown-session`` (also warned)."""
        slot = self._sessions.take(session_id)
        if slot is None:
            return report_unknown_session(self._new_state(session_id).to_report())
        with slot.lock:
            state = slot.value
            alert_on_truncation(state)
            notices = state.take_notices()
        self._push(notices)
        return state.to_report()

    def take_failures(self) -> list[MonitorFailed]:
        """Return the monitor's own failures since the last take, oldest first, and forget them (at most the last
        1,000 are kept; :attr:`internal_errors` counts them all). Each is also logged, and pushed to a sink that
        has ``on_failure`` (a :class:`~monitor.types.FailureSink`)."""
        with self._registry:
            taken = list(self._failures)
            self._failures.clear()
        return taken

    def sessions(self) -> list[str]:
        """Return the ids of the sessions held now."""
        return self._sessions.ids()

    def observe(self, event: Event) -> Decision | None:
        """Feed one event; return the decision for a ``tool_call`` and None otherwise. Events are input data:
        a value of a type the boundary refuses is a ``monitoring-gap`` alert here, never an exception."""
        try:
            if isinstance(event, ToolsListed):
                self.register_tools(event.session_id, event.server, event.tools, event.trusted, event.identity)
            elif isinstance(event, UserMessage):
                self.observe_user_message(event.session_id, event.text)
            elif isinstance(event, ToolCall):
                decision = self.before_call(event.session_id, event.server, event.tool, event.arguments, event.call_id)
                stamp = (decision.call_id, event.time, getattr(event, "source", None))
                self._run("observe", event.session_id, lambda s: s.stamp_call(*stamp), _nothing)
                return decision
            elif isinstance(event, ToolResult):
                self.after_call(event.session_id, event.call_id, event.result, event.is_error)
            elif isinstance(event, AssistantMessage):
                self.observe_assistant_message(event.session_id, event.text)
        except TypeError as exc:
            self.report_gap(event.session_id, f"an event could not be read: {exc}")
            return decide_on_monitor_error(event.call_id) if isinstance(event, ToolCall) else None
        return None

    # -- the boundary: never raise, push what happened -------------------------------------------------

    def _run(
        self,
        where: str,
        session_id: str,
        work: Callable[[SessionState], _T],
        fallback: Callable[[], _T],
        call_id: str | None = None,
    ) -> _T:
        """Run ``work`` on the session under the session's own lock; on failure record it (about ``call_id``, if
        given) and return ``fallback()``. Then push what the work raised to the sink."""
        try:
            with self._sessions.hold(session_id) as slot, ArgumentTextsOnce():
                result = work(slot.value)
                notices = slot.value.take_notices()
        except Exception:
            self._fail(where, session_id, call_id)
            return fallback()
        if notices:
            self._push(notices)
        return result

    def _push(self, notices: list[Notice]) -> None:
        sink = self._sink
        if sink is None:
            return
        for notice in notices:
            try:
                if isinstance(notice, CallDecided):
                    sink.on_decision(notice)
                elif isinstance(notice, AlertRaised):
                    sink.on_alert(notice)
                elif isinstance(notice, LevelChanged):
                    sink.on_level(notice)
                elif isinstance(sink, FailureSink):
                    sink.on_failure(notice)
            except Exception:
                with self._registry:
                    self.sink_errors += 1
                logger.exception("trifecta-monitor: the alert sink failed on %s", type(notice).__name__)

    # -- engine -------------------------------------------------------------------------------------

    def _observe_user_message(self, state: SessionState, text: str) -> None:
        commit_older(state)
        state.index.add_user_text(str(text))
        if self.policy.conversation_is_private:
            state.backed.add(Leg.PRIVATE_DATA)
            state.enter_legs({Leg.PRIVATE_DATA}, _CONVERSATION)

    def _fail(self, where: str, session_id: str, call_id: str | None, state: SessionState | None = None) -> None:
        """Record the failure being handled, as a :class:`MonitorFailed`: counted, logged, kept for
        :meth:`take_failures` and pushed to the sink (after the session's lock, when ``state``'s is held)."""
        failure = MonitorFailed(
            session_id=session_id, operation=where, error=describe_exception(sys.exc_info()[1]), call_id=call_id
        )
        with self._registry:
            self.internal_errors += 1
            self._failures.append(failure)
        logger.exception("trifecta-monitor internal error in %s", where)
        if state is not None and state.notices is not None:
            state.notices.append(failure)
        elif state is None:
            self._push([failure])

    def _new_state(self, session_id: str) -> SessionState:
        return SessionState(
            session_id=session_id,
            index=ContentIndex(max_fingerprints=self.evidence_budget, max_values=self.evidence_budget),
            notices=None if self._sink is None else [],
        )

    def _before_call(
        self,
        state: SessionState,
        server: str,
        tool: str,
        arguments: Mapping[str, Any] | None,
        call_id: str | None,
    ) -> Decision:
        return decide_call(state, self.policy, self.classifier, server, tool, arguments, call_id)
