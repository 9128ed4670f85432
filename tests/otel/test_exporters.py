"""The alert exporters: a log record, counters and a callback per alert, whichever worker raised it."""

from __future__ import annotations

from typing import Any

import orjson
from opentelemetry._logs import SeverityNumber
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from monitor.otel import ALERT_EVENT_NAME, ATTR_ALERT_KIND, ATTR_SESSION_ID, TrifectaAlert
from monitor.otel import _records as rec
from monitor.otel._config import ProcessorConfig
from monitor.otel._engine import SpanEngine
from monitor.otel._exporters import CallbackAlertExporter, ExportedAlert, LogRecordAlertExporter, MetricsExporter
from monitor.session import SessionMonitor

TRACE_ID = (0x1234 << 64) | 0x5678
SPAN_ID = 0x9A


def raise_alerts() -> list[list[Any]]:
    """The alert messages of an engine on this thread: a check that exposes the session, then a gap."""
    sent: list[list[Any]] = []
    engine = SpanEngine(SessionMonitor(), sent.append, ProcessorConfig())
    arguments = {"sql": "select * from customers"}
    engine.handle(list(rec.make_check(1.0, 1, "s", 0, 0, TRACE_ID, SPAN_ID, "db", "execute_sql", arguments, "c1")))
    engine.handle([rec.GAP, 2.0, "s", 2])
    return [m for m in sent if m[0] == rec.OUT_ALERT]


def cross_the_pipe(message: list[Any]) -> list[Any]:
    """The message as the engine process writes it and the processor reads it back."""
    decoded: list[Any] = orjson.loads(orjson.dumps(message, default=rec.encode_value))
    return decoded


def test_the_callback_gets_the_same_alert_from_either_worker() -> None:
    messages = raise_alerts()
    assert len(messages) >= 2
    for message in messages:
        crossed = cross_the_pipe(message)
        assert isinstance(crossed[-1], str)  # JSON text across the pipe, the object on a thread
        got: list[TrifectaAlert] = []
        exporter = CallbackAlertExporter(got.append)
        exporter.export(ExportedAlert(message))
        exporter.export(ExportedAlert(crossed))
        assert got[0] == got[1] and got[0].alert is message[-1].alert
        assert got[0].session_id == "s" and got[0].level.value == message[4]["trifecta.level"]
    first = ExportedAlert(messages[0]).read()
    assert (first.trace_id, first.span_id) == (format(TRACE_ID, "032x"), format(SPAN_ID, "016x"))
    assert first.tool == "execute_sql" and first.server == "db" and first.decision is not None
    CallbackAlertExporter(None).export(ExportedAlert(messages[0]))  # no callback: nothing happens


def test_a_log_record_per_alert_in_the_triggering_span() -> None:
    logs = InMemoryLogRecordExporter()  # type: ignore[no-untyped-call]
    provider = LoggerProvider(shutdown_on_exit=False)
    provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    exporter = LogRecordAlertExporter(provider)
    messages = raise_alerts()
    for message in messages:
        exporter.export(ExportedAlert(message))
    records = [r.log_record for r in logs.get_finished_logs()]
    assert [r.event_name for r in records] == [ALERT_EVENT_NAME] * len(messages)
    assert [r.body for r in records] == [m[5] for m in messages]
    written = [{k: list(v) if isinstance(v, tuple) else v for k, v in (r.attributes or {}).items()} for r in records]
    assert written == [m[4] for m in messages]  # as the engine prepared them (the SDK keeps sequences as tuples)
    assert (records[0].trace_id, records[0].span_id) == (TRACE_ID, SPAN_ID)
    gap = records[-1]  # reported against no span: no context
    assert gap.attributes is not None and gap.attributes[ATTR_ALERT_KIND] == "monitoring-gap"
    assert (gap.severity_number, gap.severity_text) == (SeverityNumber.ERROR, "HIGH") and gap.span_id == 0


def test_the_counters() -> None:
    reader = InMemoryMetricReader()
    metrics = MetricsExporter(MeterProvider(metric_readers=[reader]))
    messages = raise_alerts()
    for message in messages:
        metrics.export(ExportedAlert(message))
    metrics.count_decisions({"allow": 2, "deny": 1})
    metrics.count_errors("on_end", 3)
    metrics.count_dropped()
    data = reader.get_metrics_data()
    assert data is not None
    points = {
        (metric.name, tuple(sorted(point.attributes.items()))): point.value
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        for point in metric.data.data_points
    }
    alerts = {key: value for key, value in points.items() if key[0] == "trifecta.alerts"}
    assert sum(alerts.values()) == len(messages)
    gap = (("trifecta.alert.kind", "monitoring-gap"), ("trifecta.alert.severity", "high"))
    assert ("trifecta.alerts", gap) in alerts
    assert points[("trifecta.decisions", (("trifecta.action", "allow"),))] == 2
    assert points[("trifecta.decisions", (("trifecta.action", "deny"),))] == 1
    assert points[("trifecta.internal_errors", (("trifecta.error.kind", "on_end"),))] == 3
    assert points[("trifecta.dropped", ())] == 1
    assert all(m[4][ATTR_SESSION_ID] == "s" for m in messages)
