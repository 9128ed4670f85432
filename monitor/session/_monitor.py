"""The session engine: hosts tell it what happens, it answers each call with a :class:`Decision`."""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from monitor.classify._engine import CallClassification, Classifier, classify_result_hints
from monitor.classify._layers import OverrideSource, ToolContext
from monitor.classify._loader import load_builtin_rules
from monitor.decide import CallFacts, Policy, decide, decide_on_monitor_error, level_of_legs
from monitor.evidence._fingerprints import FragmentMatch
from monitor.evidence._index import (
    ContentIndex,
    DestinationKind,
    LabelledDestination,
    extract_destinations,
)
from monitor.models._decisions import Action, AlertKind, Decision, Level
from monitor.models._events import AssistantMessage, Event, ToolCall, ToolResult, ToolsListed, UserMessage
from monitor.models._legs import ALL_LEGS, Leg, Posture, sort_legs
from monitor.models._reports import SessionReport
from monitor.models._tools import Finding, parse_tool
from monitor.session._state import CallRecord, SessionState

logger = logging.getLogger("monitor")

_CONVERSATION = ""


class SessionMonitor:
    """Watches sessions for the lethal trifecta and decides each tool call before it runs.

    Every method is safe to call from an agent host: it never raises. If the monitor itself fails,
    :meth:`before_call` answers ``confirm`` with the reason ``monitor-error`` and the failure is logged.
    """

    def __init__(
        self,
        *,
        posture: Posture | str = Posture.BALANCED,
        policy: Policy | None = None,
        rules: OverrideSource | None = None,
        builtin_rules: bool = True,
        evidence_budget: int = 50_000,
    ) -> None:
        self.posture = Posture(posture)
        self.policy = policy or Policy()
        if rules is None and builtin_rules:
            rules = load_builtin_rules()
        self.rules = rules
        self.classifier = Classifier(self.posture, rules)
        self.evidence_budget = evidence_budget
        self.internal_errors = 0
        self._sessions: dict[str, SessionState] = {}
        self._lock = threading.RLock()

    # -- public API ---------------------------------------------------------------------------------

    def register_tools(self, session_id: str, server: str, tools: Any, trusted: bool = False) -> list[Finding]:
        """Record a server's ``tools/list`` result. Returns the annotation findings (also raised as alerts)."""
        try:
            with self._lock:
                return self._register_tools(self._state(session_id), server, tools, trusted)
        except Exception:
            self._fail("register_tools")
            return []

    def observe_user_message(self, session_id: str, text: str) -> None:
        """Record text the user typed: it sanctions destinations, and is private data in the context."""
        try:
            with self._lock:
                state = self._state(session_id)
                self._commit_older(state)
                state.index.add_user_text(str(text))
                if self.policy.conversation_is_private:
                    self._enter_legs(state, {Leg.PRIVATE_DATA}, _CONVERSATION)
        except Exception:
            self._fail("observe_user_message")

    def observe_assistant_message(self, session_id: str, text: str) -> None:
        """Record that the model wrote text: every call requested before it has run by now."""
        try:
            with self._lock:
                self._commit_older(self._state(session_id))
        except Exception:
            self._fail("observe_assistant_message")

    def report_gap(self, session_id: str, message: str) -> None:
        """Record that part of the session was never seen (a ``monitoring-gap`` alert): its level may be low."""
        try:
            with self._lock:
                self._state(session_id).raise_alert(AlertKind.MONITORING_GAP, None, message)
        except Exception:
            self._fail("report_gap")

    def before_call(
        self,
        session_id: str,
        server: str,
        tool: str,
        arguments: Mapping[str, Any] | None,
        call_id: str | None = None,
    ) -> Decision:
        """Decide a requested call: ``allow``, ``confirm`` or ``deny``, with reasons and evidence."""
        try:
            with self._lock:
                return self._before_call(self._state(session_id), server, tool, arguments, call_id)
        except Exception:
            self._fail("before_call")
            return decide_on_monitor_error(call_id)

    def after_call(self, session_id: str, call_id: str, result: Any, is_error: bool = False) -> None:
        """Record the result of a call; its private data and untrusted content now enter the context."""
        try:
            with self._lock:
                self._after_call(self._state(session_id), call_id, result, is_error)
        except Exception:
            self._fail("after_call")

    def session(self, session_id: str) -> SessionReport:
        """A snapshot of the session: legs, level, alerts, calls and ``.graph``."""
        with self._lock:
            return self._state(session_id).to_report()

    def end_session(self, session_id: str) -> SessionReport:
        """Forget a session and return its final snapshot."""
        with self._lock:
            state = self._sessions.pop(session_id, None) or self._new_state(session_id)
            self._alert_on_truncation(state)
            return state.to_report()

    def live_state(self, session_id: str) -> SessionState | None:
        """The session's state itself, not a copy (:meth:`session` copies every call): for integrations
        that read it on a hot path, such as the span processor. Read it only; hold no reference."""
        return self._sessions.get(session_id)

    def sessions(self) -> list[str]:
        """Ids of the sessions currently held."""
        with self._lock:
            return list(self._sessions)

    def observe(self, event: Event) -> Decision | None:
        """Feed one event; returns the decision for a ``tool_call`` and None otherwise."""
        if isinstance(event, ToolsListed):
            self.register_tools(event.session_id, event.server, event.tools, event.trusted)
        elif isinstance(event, UserMessage):
            self.observe_user_message(event.session_id, event.text)
        elif isinstance(event, ToolCall):
            return self.before_call(event.session_id, event.server, event.tool, event.arguments, event.call_id)
        elif isinstance(event, ToolResult):
            self.after_call(event.session_id, event.call_id, event.result, event.is_error)
        elif isinstance(event, AssistantMessage):
            self.observe_assistant_message(event.session_id, event.text)
        return None

    # -- engine -------------------------------------------------------------------------------------

    def _fail(self, where: str) -> None:
        self.internal_errors += 1
        logger.exception("trifecta-monitor internal error in %s", where)

    def _new_state(self, session_id: str) -> SessionState:
        return SessionState(
            session_id=session_id,
            index=ContentIndex(max_fingerprints=self.evidence_budget, max_values=self.evidence_budget),
        )

    def _state(self, session_id: str) -> SessionState:
        state = self._sessions.get(session_id)
        if state is None:
            state = self._sessions[session_id] = self._new_state(session_id)
        return state

    def _register_tools(self, state: SessionState, server: str, tools: Any, trusted: bool) -> list[Finding]:
        findings: list[Finding] = []
        items = tools if isinstance(tools, list) else [tools]
        trust = self.classifier.trust_for(server, bool(trusted))
        for i, raw in enumerate(items):
            definition, tool_findings = parse_tool(raw, f"/tools/{i}")
            findings.extend(tool_findings)
            name = definition.name if definition else f"#{i}"
            for finding in tool_findings:
                state.raise_alert(
                    AlertKind.INVALID_ANNOTATION, None, f"{server}/{name}: {finding.message} ({finding.pointer})"
                )
            if definition is None:
                continue
            state.tools[(server, definition.name)] = (definition, trust)
            classified = self.classifier.classify(ToolContext(server, definition.name, definition, trust))
            self._alert_on_void_pin(state, server, definition.name, classified, None)
            self._add_available(state, classified.classification.legs, None)
        return findings

    @staticmethod
    def _alert_on_void_pin(
        state: SessionState, server: str, tool: str, classified: CallClassification, call_id: str | None
    ) -> None:
        voided = classified.voided
        if voided is None or (server, tool) in state.voided_pins:
            return
        state.voided_pins.add((server, tool))
        state.raise_alert(
            AlertKind.DEFINITION_CHANGED,
            call_id,
            f"{server}/{tool}: the definition changed since rule {voided.rule_id} was reviewed "
            f"(pinned {voided.pinned}, seen {voided.seen}); the rule is void for this session",
        )

    def _add_available(self, state: SessionState, legs: frozenset[Leg], call_id: str | None) -> None:
        state.available |= legs
        if not state.exposed and state.available >= ALL_LEGS:
            state.exposed = True
            state.raise_alert(AlertKind.EXPOSED, call_id, "the tools available in this session cover all three legs")

    def _enter_legs(self, state: SessionState, legs: frozenset[Leg] | set[Leg], call_id: str) -> None:
        was_armed = level_of_legs(frozenset(state.legs)) is Level.ARMED
        for leg in sort_legs(legs):
            state.legs.setdefault(leg, call_id)
        level = level_of_legs(frozenset(state.legs))
        state.raise_level(level, call_id or None)
        if level is Level.ARMED and not was_armed:
            state.raise_alert(
                AlertKind.ARMED,
                call_id or None,
                "untrusted content and private data have both entered the context",
                path=state.path_to(call_id) if call_id else state.path_to(""),
            )

    def _commit(self, state: SessionState, record: CallRecord) -> None:
        """A call's private data and untrusted content enter the context once it has run."""
        if record in state.uncommitted:
            state.uncommitted.remove(record)
            legs = record.classification.legs - {Leg.EXTERNAL_COMMUNICATION}
            if legs:
                self._enter_legs(state, legs, record.call_id)

    def _commit_older(self, state: SessionState, index: int | None = None) -> None:
        """Calls requested before ``index`` (all calls when None) have run, whether or not their results
        were recorded. Calls requested together (in parallel) are not assumed to see each other's output."""
        for pending in [r for r in state.uncommitted if index is None or r.index < index]:
            self._commit(state, pending)

    def _before_call(
        self,
        state: SessionState,
        server: str,
        tool: str,
        arguments: Mapping[str, Any] | None,
        call_id: str | None,
    ) -> Decision:
        index = len(state.calls)
        args = dict(arguments) if isinstance(arguments, Mapping) else None
        known = state.tools.get((server, tool))
        trusted = known[1] if known else self.classifier.trust_for(server, False)
        context = ToolContext(server, tool, known[0] if known else None, trusted, args, state.index)
        classified = self.classifier.classify(context)
        legs_call = classified.classification.legs
        legs_before = frozenset(state.legs)
        unique_id = self._unique_call_id(state, call_id, index)
        labelled: list[LabelledDestination] = []
        fragments: list[FragmentMatch] = []
        shared_place = False
        # Evidence is only needed, and only gathered, for an external call made while armed.
        if Leg.EXTERNAL_COMMUNICATION in legs_call and level_of_legs(legs_before) is Level.ARMED and args:
            destinations = extract_destinations(args, classified.destinations)
            labelled = [state.index.label(d, self.policy.allowlist) for d in destinations]
            shared_place = state.index.is_shared_place(destinations)
            # A recipient's address is not content; a URL is (its path and query can carry data).
            url_paths = {d.path for d in destinations if d.kind is DestinationKind.DOMAIN}
            recipients = {d.path for d in destinations if d.keyed} - url_paths
            fragments = state.index.find_private(args, recipients)
        steered = {f.from_call for f in fragments if f.from_call in state.steered}
        facts = CallFacts(
            annotations=known[0].annotations if known else None,
            steered_sources=frozenset(steered),
            shared_place=shared_place,
            call_id=unique_id,
            legs_before=legs_before,
            legs_call=legs_call,
            rule_ids=classified.rule_ids,
            arguments_available=args is not None,
            destinations=labelled,
            fragments=fragments,
        )
        decision = decide(self.policy, facts)
        if args:
            if Leg.UNTRUSTED_CONTENT in legs_before:
                source = state.index.find_steering(args)
                if source is not None:
                    state.steered[unique_id] = source
            state.index.add_call_arguments(args, external=Leg.EXTERNAL_COMMUNICATION in legs_call)
        record = CallRecord(
            unique_id, call_id, index, server, tool, args, classified.classification, classified.rule_ids, decision
        )
        state.calls.append(record)
        state.unanswered.setdefault(call_id or unique_id, []).append(record)
        state.uncommitted.append(record)
        self._add_available(state, legs_call, unique_id)
        self._alert_on_void_pin(state, server, tool, classified, unique_id)
        if Leg.EXTERNAL_COMMUNICATION in legs_call:
            state.legs.setdefault(Leg.EXTERNAL_COMMUNICATION, unique_id)
            state.raise_level(level_of_legs(frozenset(state.legs)), unique_id)
        self._alert_on_decision(state, decision)
        return decision

    @staticmethod
    def _unique_call_id(state: SessionState, call_id: str | None, index: int) -> str:
        unique = call_id if call_id and call_id not in state.used_ids else f"{call_id or 'call'}#{index}"
        state.used_ids.add(unique)
        return unique

    def _alert_on_decision(self, state: SessionState, decision: Decision) -> None:
        if decision.level.rank < Level.TRIFECTA.rank:
            return
        state.raise_level(decision.level, decision.call_id)
        path = state.path_to(decision.call_id, decision.evidence)
        summary = ", ".join(r.value for r in decision.reasons)
        if decision.level is Level.EXFILTRATION:
            state.raise_alert(
                AlertKind.EXFILTRATION,
                decision.call_id,
                f"private data may leave the session ({summary}); action {decision.action.value}",
                path=path,
                evidence=decision.evidence,
            )
        elif decision.action is not Action.ALLOW or not state.trifecta_alerted:
            state.raise_alert(
                AlertKind.TRIFECTA,
                decision.call_id,
                f"external communication requested while armed ({summary}); action {decision.action.value}",
                path=path,
                evidence=decision.evidence,
            )
        state.trifecta_alerted = True

    def _after_call(self, state: SessionState, call_id: str, result: Any, is_error: bool) -> None:
        waiting = state.unanswered.get(call_id)
        if not waiting:
            logger.debug("result for unknown call %r in session %r ignored", call_id, state.session_id)
            return
        record = waiting.pop(0)
        if not waiting:
            del state.unanswered[call_id]
        record.answered = True
        hints = classify_result_hints(result)
        if hints:
            record.classification = record.classification.with_added(hints)
            self._add_available(state, record.classification.legs, record.call_id)
        legs = record.classification.legs
        if Leg.UNTRUSTED_CONTENT in legs and record.arguments:
            state.index.add_untrusted_source(record.arguments)
        if result is not None:
            state.index.add_result(
                record.call_id, result, private=Leg.PRIVATE_DATA in legs, untrusted=Leg.UNTRUSTED_CONTENT in legs
            )
        self._commit(state, record)
        self._commit_older(state, record.index)
        self._alert_on_truncation(state)

    @staticmethod
    def _alert_on_truncation(state: SessionState) -> None:
        if not state.truncation_alerted and state.index.truncated:
            state.truncation_alerted = True
            state.raise_alert(
                AlertKind.EVIDENCE_TRUNCATED,
                None,
                "the session's evidence index reached its memory bound; the oldest content was dropped, so "
                "private content seen early may no longer be recognised",
            )
