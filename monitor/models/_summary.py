"""Counts over analysed sessions: what ``trifecta analyze`` prints at the end, whatever the output format."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from monitor.models._decisions import Action, Reason
from monitor.models._reports import SessionReport
from monitor.models._tools import Severity

_BASELINE_REASONS = frozenset({Reason.BASELINE_ASKS, Reason.BASELINE_BLOCKS})


@dataclass
class AnalysisSummary:
    """Counts over everything analysed so far (kept as counters: memory does not grow with sessions)."""

    sessions: int = 0
    calls: int = 0
    by_level: Counter[str] = field(default_factory=Counter)
    by_action: Counter[str] = field(default_factory=Counter)
    errors: int = 0
    max_severity: Severity | None = None
    baseline: str | None = None
    client_asked: int = 0
    monitor_asked: int = 0

    def add(self, report: SessionReport) -> None:
        """Count one finished session."""
        self.sessions += 1
        self.calls += len(report.calls)
        self.by_level[report.level.value] += 1
        for call in report.calls:
            decision = call.decision
            self.by_action[decision.action.value] += 1
            self.client_asked += any(r in _BASELINE_REASONS for r in decision.reasons)
            self.monitor_asked += (decision.monitor_action or decision.action) is not Action.ALLOW
        for alert in report.alerts:
            if self.max_severity is None or alert.severity.rank > self.max_severity.rank:
                self.max_severity = alert.severity
