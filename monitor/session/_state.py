"""Mutable per-session state behind :class:`monitor.SessionMonitor`."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from monitor.evidence._index import ContentIndex
from monitor.models._decisions import ALERT_SEVERITY, Alert, AlertKind, Decision, Evidence, EvidenceKind, Level
from monitor.models._legs import Classification, Leg, sort_legs
from monitor.models._reports import CallReport, SessionReport
from monitor.models._tools import ToolDefinition


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

    def to_report(self) -> CallReport:
        """Freeze the record into a :class:`CallReport`."""
        return CallReport(
            call_id=self.call_id,
            index=self.index,
            server=self.server,
            tool=self.tool,
            legs=tuple(sort_legs(self.classification.legs)),
            provenance=self.classification.provenance,
            decision=self.decision,
        )


@dataclass
class SessionState:
    """Legs in the context (monotone), the calls, the alerts and the indexed content of one session."""

    session_id: str
    index: ContentIndex
    tools: dict[tuple[str, str], tuple[ToolDefinition, bool]] = field(default_factory=dict)
    available: set[Leg] = field(default_factory=set)
    # Leg -> id of the call that first brought it ("" for the conversation itself).
    legs: dict[Leg, str] = field(default_factory=dict)
    level: Level = Level.CLEAN
    raised_by: str | None = None
    exposed: bool = False
    calls: list[CallRecord] = field(default_factory=list)
    used_ids: set[str] = field(default_factory=set)
    voided_pins: set[tuple[str, str]] = field(default_factory=set)
    # Call id -> id of the call whose untrusted text suggested its arguments.
    steered: dict[str, str] = field(default_factory=dict)
    unanswered: dict[str, list[CallRecord]] = field(default_factory=dict)
    uncommitted: list[CallRecord] = field(default_factory=list)
    alerts: list[Alert] = field(default_factory=list)
    trifecta_alerted: bool = False
    truncation_alerted: bool = False

    def raise_alert(self, kind: AlertKind, call_id: str | None, message: str, **extra: Any) -> None:
        """Append an alert with the severity of its kind."""
        self.alerts.append(Alert(kind=kind, severity=ALERT_SEVERITY[kind], call_id=call_id, message=message, **extra))

    def raise_level(self, level: Level, call_id: str | None) -> None:
        """Levels only go up; remember the call that raised the session to its level."""
        if level.rank > self.level.rank:
            self.level = level
            self.raised_by = call_id

    def path_to(self, call_id: str, evidence: Iterable[Evidence] = ()) -> tuple[str, ...]:
        """The call path U → P → this call: the call that brought untrusted content, the calls whose private
        content the evidence found (else the call that first brought private data; the conversation itself
        is left out), then this call."""
        sources = [e.from_call for e in evidence if e.kind is EvidenceKind.FRAGMENT and e.from_call]
        private = sources or [self.legs.get(Leg.PRIVATE_DATA, "")]
        path = [self.legs.get(Leg.UNTRUSTED_CONTENT, ""), *private, call_id]
        return tuple(dict.fromkeys(p for p in path if p))

    def to_report(self) -> SessionReport:
        """Freeze the state into a :class:`SessionReport`."""
        return SessionReport(
            session_id=self.session_id,
            level=self.level,
            legs=tuple(sort_legs(self.legs)),
            exposed=self.exposed,
            calls=tuple(call.to_report() for call in self.calls),
            alerts=tuple(self.alerts),
            evidence_truncated=self.index.truncated,
            raised_by=self.raised_by,
        )
