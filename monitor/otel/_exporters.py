"""Where the span processor's alerts go: one exporter each for log records, metric counters, ``on_alert`` and
a ``sink``.

As the OpenTelemetry SDK separates a span processor from its exporters, the processor hands every alert the
engine raised (an :class:`ExportedAlert`) to each :class:`AlertExporter` it was given, in turn, on its own
thread; an exporter that raises is counted as an internal failure of its ``failure_kind``, and the others
still run. The metrics exporter also counts the decisions, the internal failures and the dropped spans.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Protocol

from opentelemetry import trace as trace_api
from opentelemetry._logs import Logger, LoggerProvider, SeverityNumber
from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from monitor.models import AlertRaised, Level, Severity
from monitor.otel import _records as rec
from monitor.otel._names import (
    ALERT_EVENT_NAME,
    ATTR_ACTION,
    ATTR_ALERT_KIND,
    ATTR_ALERT_SEVERITY,
    ATTR_ERROR_KIND,
    ATTR_LEGS,
    ATTR_LEVEL,
    DECISION_EVENT_NAME,
    METRIC_ALERTS,
    METRIC_DECISIONS,
    METRIC_DROPPED,
    METRIC_INTERNAL_ERRORS,
    TrifectaAlert,
    read_legs,
)
from monitor.types import AlertSink

_SCOPE = "trifecta-monitor"
# A log record's severity number and text, by the alert's severity (as the engine writes it).
_LOG_SEVERITY: dict[str, tuple[SeverityNumber, str]] = {
    severity.value: (number, severity.value.upper())
    for severity, number in (
        (Severity.INFO, SeverityNumber.INFO),
        (Severity.WARNING, SeverityNumber.WARN),
        (Severity.HIGH, SeverityNumber.ERROR),
        (Severity.CRITICAL, SeverityNumber.FATAL),
    )
}
_SAMPLED = TraceFlags(TraceFlags.SAMPLED)


class ExportedAlert:
    """One alert as the exporters get it: the log record the engine prepared (its ``attributes`` and
    ``message``, and the span it is reported against), and the alert itself, read only when asked for."""

    __slots__ = ("_notice", "attributes", "message", "span_id", "trace_id")

    def __init__(self, message: list[Any]) -> None:
        """Take the engine's :data:`~monitor.otel._records.OUT_ALERT` message (raises ValueError when it is not
        one)."""
        _, trace_hi, trace_lo, self.span_id, self.attributes, self.message, notice = message
        self.trace_id: int = (trace_hi << 64) | trace_lo
        self._notice: AlertRaised | str = notice

    def read_notice(self) -> AlertRaised:
        """The alert as the monitor raised it (read once)."""
        notice = self._notice = rec.read_model(AlertRaised, self._notice)
        return notice

    def read(self) -> TrifectaAlert:
        """The alert, its session's level and legs, its call and span, as ``on_alert`` gets them."""
        notice = self.read_notice()
        attributes: Mapping[str, Any] = self.attributes
        return TrifectaAlert(
            alert=notice.alert,
            session_id=notice.session_id,
            level=Level(attributes[ATTR_LEVEL]),
            legs=read_legs(attributes[ATTR_LEGS]),
            server=notice.server,
            tool=notice.tool,
            decision=notice.decision,
            trace_id=format(self.trace_id, "032x"),
            span_id=format(self.span_id, "016x"),
        )


class AlertExporter(Protocol):
    """Sends alerts somewhere. It may raise: the processor counts the failure as ``failure_kind``."""

    failure_kind: ClassVar[str]

    def export(self, alert: ExportedAlert) -> None:
        """Send one alert."""
        ...


class LogRecordAlertExporter:
    """One log record per alert (event name ``trifecta.alert``) in the context of the span that triggered it,
    through the logger provider's own processors."""

    failure_kind: ClassVar[str] = "emit_log"

    def __init__(self, logger_provider: LoggerProvider) -> None:
        self._logger = logger_provider.get_logger(_SCOPE)

    def export(self, alert: ExportedAlert) -> None:
        """Emit the alert's log record."""
        severity = _LOG_SEVERITY[alert.attributes[ATTR_ALERT_SEVERITY]]
        _emit_in_span(
            self._logger, alert.trace_id, alert.span_id, severity, alert.message, alert.attributes, ALERT_EVENT_NAME
        )


class DecisionLogExporter:
    """One log record per decided call (event name ``trifecta.decision``), with the guardrail attributes, in
    the context of the span whose end decided it: severity INFO for ``allow``, WARN for a verdict that asks the
    user, ERROR for ``deny``."""

    failure_kind: ClassVar[str] = "emit_log"

    def __init__(self, logger_provider: LoggerProvider) -> None:
        self._logger = logger_provider.get_logger(_SCOPE)

    def export_decision(self, message: list[Any]) -> None:
        """Emit the log record of the engine's :data:`~monitor.otel._records.OUT_GUARDRAIL` message."""
        _, trace_hi, trace_lo, span_id, attributes, body = message
        action = attributes.get(ATTR_ACTION)
        number = {"allow": SeverityNumber.INFO, "deny": SeverityNumber.ERROR}.get(action, SeverityNumber.WARN)
        trace_id = (trace_hi << 64) | trace_lo
        _emit_in_span(self._logger, trace_id, span_id, (number, number.name), body, attributes, DECISION_EVENT_NAME)


def _emit_in_span(
    logger: Logger,
    trace_id: int,
    span_id: int,
    severity: tuple[SeverityNumber, str],
    body: Any,
    attributes: Mapping[str, Any],
    event_name: str,
) -> None:
    """Emit one log record in the context of the span it is reported against (none when the ids are not valid)."""
    context = SpanContext(trace_id, span_id, is_remote=False, trace_flags=_SAMPLED)
    logger.emit(
        timestamp=time.time_ns(),
        context=trace_api.set_span_in_context(NonRecordingSpan(context)) if context.is_valid else None,
        severity_number=severity[0],
        severity_text=severity[1],
        body=body,
        attributes=attributes,
        event_name=event_name,
    )


class MetricsExporter:
    """The processor's counters: ``trifecta.alerts`` (by kind and severity), and ``trifecta.decisions``,
    ``trifecta.internal_errors`` and ``trifecta.dropped``."""

    failure_kind: ClassVar[str] = "metrics"

    def __init__(self, meter_provider: MeterProvider) -> None:
        meter = meter_provider.get_meter(_SCOPE)
        self._alerts = meter.create_counter(METRIC_ALERTS, unit="{alert}", description="Alerts raised")
        self._decisions = meter.create_counter(METRIC_DECISIONS, unit="{decision}", description="Tool calls decided")
        self._errors = meter.create_counter(
            METRIC_INTERNAL_ERRORS, unit="{error}", description="Internal failures of the trifecta monitor"
        )
        self._dropped = meter.create_counter(
            METRIC_DROPPED, unit="{span}", description="Spans the trifecta monitor could not analyse"
        )

    def export(self, alert: ExportedAlert) -> None:
        """Count the alert by kind and severity."""
        attributes = alert.attributes
        self._alerts.add(
            1, {ATTR_ALERT_KIND: attributes[ATTR_ALERT_KIND], ATTR_ALERT_SEVERITY: attributes[ATTR_ALERT_SEVERITY]}
        )

    def count_decisions(self, counts: Mapping[str, int]) -> None:
        """Count the calls decided, by action."""
        for action, count in counts.items():
            self._decisions.add(count, {ATTR_ACTION: action})

    def count_errors(self, kind: str, count: int) -> None:
        """Count internal failures of one kind."""
        self._errors.add(count, {ATTR_ERROR_KIND: kind})

    def count_dropped(self) -> None:
        """Count one span dropped."""
        self._dropped.add(1)


class CallbackAlertExporter:
    """Calls ``callback`` with a :class:`TrifectaAlert` for each alert (nothing while it is None)."""

    failure_kind: ClassVar[str] = "on_alert"

    def __init__(self, callback: Callable[[TrifectaAlert], object] | None) -> None:
        self.callback = callback

    def export(self, alert: ExportedAlert) -> None:
        """Call the callback."""
        if self.callback is not None:
            self.callback(alert.read())


class SinkAlertExporter:
    """Hands each alert, as the monitor raised it, to an :class:`~monitor.types.AlertSink`'s ``on_alert``."""

    failure_kind: ClassVar[str] = "sink"

    def __init__(self, sink: AlertSink) -> None:
        self.sink = sink

    def export(self, alert: ExportedAlert) -> None:
        """Call the sink."""
        self.sink.on_alert(alert.read_notice())
