"""The public Protocols of trifecta-monitor: what a host, a rule source or an output format implements.

Implement these to plug into the monitor; nothing here needs to be subclassed.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from monitor.models import (
    AlertRaised,
    AnalysisSummary,
    CallDecided,
    LevelChanged,
    MonitorFailed,
    OverrideMatch,
    RecordError,
    SessionFacts,
    SessionReport,
    ToolContext,
)

__all__ = ["AlertSink", "FailureSink", "OverrideSource", "ReportWriter", "SessionFacts"]


@runtime_checkable
class AlertSink(Protocol):
    """Receives what a :class:`~monitor.SessionMonitor` decides and raises, as it happens.

    The monitor calls the sink after each operation, on the thread that made it, once the session's lock is
    released (a sink may query the monitor). A sink that raises is counted and logged; the monitor goes on.
    :class:`monitor.testing.RecordingSink` keeps everything it receives, for tests.
    """

    def on_decision(self, notice: CallDecided) -> None:
        """A requested call was decided."""
        ...

    def on_alert(self, notice: AlertRaised) -> None:
        """An alert was raised."""
        ...

    def on_level(self, notice: LevelChanged) -> None:
        """The session's level or the legs in its context changed."""
        ...


@runtime_checkable
class FailureSink(Protocol):
    """An :class:`AlertSink` may also hear of the monitor's own failures: a sink with this method is pushed a
    :class:`~monitor.models.MonitorFailed` for each (as the other notices are, once the session's lock is
    released). :meth:`~monitor.SessionMonitor.take_failures` gives the same values to a host without a sink."""

    def on_failure(self, notice: MonitorFailed) -> None:
        """The monitor failed inside an operation; a call it was deciding was answered ``confirm``."""
        ...


@runtime_checkable
class OverrideSource(Protocol):
    """Layer 1 of the classification: reviewed overrides (:class:`~monitor.classify.RuleSet` is one)."""

    def classify(self, tool: ToolContext) -> OverrideMatch | None:
        """Return the reviewed legs of a call, or None when no reviewed rule covers it."""
        ...

    def trust_for(self, server: str) -> bool | None:
        """Return the reviewed trust of a server (True: trusted), or None when no rule says."""
        ...


@runtime_checkable
class ReportWriter(Protocol):
    """An output format of ``trifecta analyze``: sessions and input errors as they come, then the summary."""

    def write_session(self, report: SessionReport) -> None:
        """Write one finished session."""
        ...

    def write_error(self, error: RecordError) -> None:
        """Write one rejected input record."""
        ...

    def close(self, summary: AnalysisSummary) -> None:
        """Write what comes after the last session (the summary, a closing bracket) and flush."""
        ...
