"""Mutable per-session state behind :class:`monitor.SessionMonitor`, and the rules of how it moves."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from monitor.decide import Scope
from monitor.evidence import ContentIndex
from monitor.models import (
    ALERT_SEVERITY,
    ALL_LEGS,
    Alert,
    AlertKind,
    AlertRaised,
    CallDecided,
    CallReport,
    Classification,
    Decision,
    Evidence,
    EvidenceKind,
    FlowRecord,
    Leg,
    Level,
    LevelChanged,
    MonitorFailed,
    Origin,
    PathStep,
    ServerIdentity,
    SessionReport,
    Severity,
    ToolDefinition,
    bound_arguments,
    find_path_steps,
    sort_legs,
)
from monitor.session._approvals import ApprovalStore

Notice = CallDecided | AlertRaised | LevelChanged | MonitorFailed
"""What a session pushes to the monitor's sink."""

_ARMED = frozenset({Leg.PRIVATE_DATA, Leg.UNTRUSTED_CONTENT})


def level_of_legs(legs: Iterable[Leg]) -> Level:
    """Return the level the legs in a context give on their own: armed with private data and untrusted content
    both in, partial with either, clean with none (trifecta and exfiltration are levels of calls)."""
    present = frozenset(legs)
    if present >= _ARMED:
        return Level.ARMED
    return Level.PARTIAL if present else Level.CLEAN


@dataclass
class CallRecord:
    """One call as it goes through the session: requested, decided, and perhaps answered."""

    call_id: str
    raw_id: str | None
    index: int
    server: str
    tool: str
    arguments: dict[str, Any] | None
    classification: Classification
    rule_ids: tuple[str, ...]
    decision: Decision
    answered: bool = False
    failed: bool = False
    """The call's result was an error (``is_error``)."""
    # Set from the event when the call was observed as one (``SessionMonitor.observe``): then the report
    # carries its time, its source and its (bounded) arguments.
    observed: bool = False
    time: datetime | None = None
    source: str | None = None
    argument_texts: tuple[str, ...] | None = None
    """The texts of ``arguments``, as the evidence walked them when the call was decided (read again when its
    result is recorded)."""

    def to_report(self) -> CallReport:
        """Return the record frozen into a :class:`CallReport`."""
        return CallReport(
            call_id=self.call_id,
            index=self.index,
            server=self.server,
            tool=self.tool,
            legs=tuple(sort_legs(self.classification.legs)),
            provenance=self.classification.provenance,
            decision=self.decision,
            source=self.source,
            time=self.time,
            arguments=bound_arguments(self.arguments) if self.observed else None,
        )


@dataclass
class SessionState:
    """Legs in the context (monotone), the calls, the alerts and the indexed content of one session.

    ``notices`` is None unless the monitor has a sink: then it collects what to push once the operation is over.
    """

    session_id: str
    index: ContentIndex
    notices: list[Notice] | None = None
    tools: dict[tuple[str, str], tuple[ToolDefinition, bool]] = field(default_factory=dict)
    # Server name -> what the host told of the server besides its name (serverInfo, package), when it did.
    identities: dict[str, ServerIdentity] = field(default_factory=dict)
    # Servers a rule file covers by name whose identity is not the one it reviewed, already alerted on.
    clashes: set[str] = field(default_factory=set)
    available: set[Leg] = field(default_factory=set)
    # Leg -> id of the call that first brought it ("" for the conversation itself).
    legs: dict[Leg, str] = field(default_factory=dict)
    level: Level = Level.CLEAN
    raised_by: str | None = None
    exposed: bool = False
    calls: list[CallRecord] = field(default_factory=list)
    by_id: dict[str, CallRecord] = field(default_factory=dict)
    voided_pins: set[tuple[str, str]] = field(default_factory=set)
    # Tools whose pinned rule could not be checked (no definition listed), already alerted on.
    unchecked_pins: set[tuple[str, str]] = field(default_factory=set)
    # Call id -> id of the call whose untrusted text suggested its arguments.
    steered: dict[str, str] = field(default_factory=dict)
    unanswered: dict[str, list[CallRecord]] = field(default_factory=dict)
    uncommitted: list[CallRecord] = field(default_factory=list)
    alerts: list[Alert] = field(default_factory=list)
    # Legs in the context that more than the cautious defaults gave (the conversation, a rule, a hint, ...).
    backed: set[Leg] = field(default_factory=set)
    trifecta_alerted: bool = False
    truncation_alerted: bool = False
    # Call id -> the legs (private data, untrusted content) of its result that a reading bound left unexamined.
    unexamined: dict[str, frozenset[Leg]] = field(default_factory=dict)
    pushed: tuple[Level, tuple[Leg, ...]] = (Level.CLEAN, ())
    # The session's data flow (the graph's ``flows_to`` edges), recorded as each call is decided.
    flows: FlowRecord = field(default_factory=FlowRecord)
    # The reviewed-only policy: approvals on record, the scope the host gave, and the latest attempt of each
    # write (server, tool, arguments hash) -> call id.
    approvals: ApprovalStore = field(default_factory=ApprovalStore)
    scope: Scope | None = None
    attempts: dict[tuple[str, str, str], str] = field(default_factory=dict)

    def unique_call_id(self, call_id: str | None, index: int) -> str:
        """The id a new call is known by: the host's, unless the session already has a call with it."""
        return call_id if call_id and call_id not in self.by_id else f"{call_id or 'call'}#{index}"

    def add_call(self, record: CallRecord) -> None:
        """Append a decided call (its id is unique in the session)."""
        self.calls.append(record)
        self.by_id[record.call_id] = record
        self.unanswered.setdefault(record.raw_id or record.call_id, []).append(record)
        self.uncommitted.append(record)
        self.flows.add_call(record)
        if self.notices is not None:
            decided = CallDecided(
                session_id=self.session_id, server=record.server, tool=record.tool, decision=record.decision
            )
            self.notices.append(decided)

    def raise_alert(
        self, kind: AlertKind, call_id: str | None, message: str, severity: Severity | None = None, **extra: Any
    ) -> None:
        """Append an alert with the given severity, by default that of its kind."""
        alert = Alert(kind=kind, severity=severity or ALERT_SEVERITY[kind], call_id=call_id, message=message, **extra)
        self.alerts.append(alert)
        if self.notices is not None:
            call = self.by_id.get(call_id) if call_id is not None else None
            self.notices.append(
                AlertRaised(session_id=self.session_id, alert=alert)
                if call is None
                else AlertRaised(
                    session_id=self.session_id, alert=alert, server=call.server, tool=call.tool, decision=call.decision
                )
            )

    def add_available(self, legs: frozenset[Leg], call_id: str | None) -> None:
        """Add legs the session's tools can give; raise ``exposed`` the first time they cover all three."""
        self.available |= legs
        if not self.exposed and self.available >= ALL_LEGS:
            self.exposed = True
            self.raise_alert(AlertKind.EXPOSED, call_id, "the tools available in this session cover all three legs")

    def stamp_call(self, call_id: str, time: datetime | None, source: str | None) -> None:
        """Note that a call was observed as an event, with the event's time and source (where it was read)."""
        record = self.by_id.get(call_id)
        if record is not None:
            record.observed, record.time, record.source = True, time, source

    def raise_level(self, level: Level, call_id: str | None) -> None:
        """Levels only go up; remember the call that raised the session to its level."""
        if level.rank > self.level.rank:
            self.level = level
            self.raised_by = call_id

    def enter_legs(self, legs: Iterable[Leg], call_id: str) -> None:
        """Put legs in the context (the first call to bring each is remembered), raise the level, and raise
        ``armed`` the moment untrusted content and private data are both in."""
        was_armed = level_of_legs(self.legs) is Level.ARMED
        for leg in sort_legs(legs):
            self.legs.setdefault(leg, call_id)
        level = level_of_legs(self.legs)
        self.raise_level(level, call_id or None)
        if level is Level.ARMED and not was_armed:
            self.raise_alert(
                AlertKind.ARMED,
                call_id or None,
                "untrusted content and private data have both entered the context",
                path=self.path_to(call_id) if call_id else self.path_to(""),
            )

    def take_notices(self) -> list[Notice]:
        """Return what to push since the last take (with a :class:`LevelChanged` first if level or legs moved)."""
        notices = self.notices
        if notices is None:
            return []
        now = (self.level, tuple(sort_legs(self.legs)))
        if now != self.pushed:
            self.pushed = now
            notices.insert(0, LevelChanged(session_id=self.session_id, level=now[0], legs=now[1]))
        self.notices = []
        return notices

    def path_to(self, call_id: str, evidence: Iterable[Evidence] = ()) -> tuple[str, ...]:
        """Return the call path U → P → this call: the untrusted sources (:meth:`find_untrusted_sources`), the calls
        whose private content the evidence found (else the call that first brought private data; the conversation
        itself is left out), then this call."""
        items = tuple(evidence)
        sources = [e.from_call for e in items if e.kind is EvidenceKind.FRAGMENT and e.from_call]
        private = sources or [self.legs.get(Leg.PRIVATE_DATA, "")]
        path = [*self.find_untrusted_sources(call_id, items), *private, call_id]
        return tuple(dict.fromkeys(p for p in path if p))

    def find_untrusted_sources(self, call_id: str, evidence: Iterable[Evidence] = ()) -> list[str]:
        """Return the calls an alert on this call names as where untrusted content came from: those whose result
        carried the content that steered the call, as the evidence knows them (it chose the call's target, or
        suggested its destination, or the arguments of a read whose private content the call carries), in session
        order. When nothing names one (and for an alert without evidence), the call that first brought untrusted
        content into the session."""
        items = tuple(evidence)
        record = self.by_id.get(call_id)
        known = [e.from_call for e in items if e.kind is EvidenceKind.STEERING and e.from_call]
        if items and record is not None:  # the destinations untrusted content suggested, as the data flow has them
            known += [
                flow.source
                for flow in self.flows.flows_into(record)
                if flow.evidence == "destination-origin" and flow.transform == Origin.ATTACKER
            ]
        fragments = [e.from_call for e in items if e.kind is EvidenceKind.FRAGMENT and e.from_call]
        known += [self.steered[source] for source in fragments if source in self.steered]
        found = sorted({c for c in known if c in self.by_id and c != call_id}, key=lambda c: self.by_id[c].index)
        return found or [self.legs.get(Leg.UNTRUSTED_CONTENT, "")]

    def steps_to(self, call_id: str, evidence: Iterable[Evidence] = ()) -> tuple[PathStep, ...]:
        """Return the path of an alert on this call, searched on the session's data flow: from the untrusted
        sources (:meth:`find_untrusted_sources`) and the private sources (as in :meth:`path_to`) to this call."""
        items = tuple(evidence)
        untrusted = self.find_untrusted_sources(call_id, items)
        fragments = [e.from_call for e in items if e.kind is EvidenceKind.FRAGMENT and e.from_call]
        private = fragments or [self.legs.get(Leg.PRIVATE_DATA, "")]
        return find_path_steps(self.by_id, call_id, untrusted, private, self.flows.flows_into)

    def to_report(self) -> SessionReport:
        """Return the state frozen into a :class:`SessionReport`."""
        return SessionReport(
            session_id=self.session_id,
            level=self.level,
            legs=tuple(sort_legs(self.legs)),
            exposed=self.exposed,
            calls=tuple(call.to_report() for call in self.calls),
            alerts=tuple(self.alerts),
            evidence_truncated=self.index.truncated or bool(self.unexamined),
            raised_by=self.raised_by,
        )
