"""Alerts beyond logs and metrics: the processor pushes to an ``AlertSink`` what a ``SessionMonitor`` would.

The sink is the project's own protocol (:class:`monitor.types.AlertSink`): the processor's engine pushes it
every decision, change of level and alert, as the same notices a monitor in this process pushes its sink, on
the processor's own thread, whichever worker runs the engine; whatever the sink raises is counted, never
raised into the application.
"""

from __future__ import annotations

import threading

import pytest
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from support.otel_example import load_example

from monitor.models import AlertRaised, CallDecided, LevelChanged
from monitor.otel import TrifectaAlert, TrifectaSpanProcessor
from monitor.session import SessionMonitor
from monitor.testing import RecordingSink

example = load_example()
example.CONVERSATION = "conv-sink"


def trace_incident(processor: TrifectaSpanProcessor) -> InMemorySpanExporter:
    """Trace the GitHub incident through a provider with ``processor``; its spans."""
    provider = TracerProvider(shutdown_on_exit=False)
    spans = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    provider.add_span_processor(processor)
    example.main(provider.get_tracer("github-incident"))
    assert processor.force_flush()
    return spans


class ThreadNoting(RecordingSink):
    """A recording sink that also notes the threads it is called on."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: set[int] = set()

    def on_decision(self, notice: CallDecided) -> None:
        self.threads.add(threading.get_ident())
        super().on_decision(notice)

    def on_alert(self, notice: AlertRaised) -> None:
        self.threads.add(threading.get_ident())
        super().on_alert(notice)

    def on_level(self, notice: LevelChanged) -> None:
        self.threads.add(threading.get_ident())
        super().on_level(notice)


def record_reference() -> RecordingSink:
    """What a monitor in this process pushes its own sink for the same spans."""
    reference = RecordingSink()
    logs = LoggerProvider(shutdown_on_exit=False)
    processor = TrifectaSpanProcessor(SessionMonitor(sink=reference), logger_provider=logs)
    trace_incident(processor)
    processor.shutdown()
    return reference


@pytest.mark.parametrize("worker", ["process", "thread"])
def test_the_sink_gets_every_decision_level_and_alert_a_monitor_would(worker: str) -> None:
    reference = record_reference()
    assert len(reference.decisions) == 3 and reference.levels and reference.alerts
    sink = ThreadNoting()
    alerts: list[TrifectaAlert] = []
    logs = LoggerProvider(shutdown_on_exit=False)
    processor = TrifectaSpanProcessor(worker=worker, sink=sink, on_alert=alerts.append, logger_provider=logs)
    trace_incident(processor)
    processor.shutdown()
    assert processor.errors == {}
    assert sink.decisions == reference.decisions
    assert sink.levels == reference.levels
    assert sink.alerts == reference.alerts
    assert [a.alert for a in alerts] == [n.alert for n in sink.alerts]  # on_alert too, unchanged
    assert {kind.value for kind in reference.alert_kinds} >= {"exfiltration"}
    assert threading.get_ident() not in sink.threads  # never on the application's thread


class Exploding(RecordingSink):
    """A sink that raises whatever it is given, after keeping it."""

    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error

    def on_decision(self, notice: CallDecided) -> None:
        super().on_decision(notice)
        raise self.error

    def on_alert(self, notice: AlertRaised) -> None:
        super().on_alert(notice)
        raise self.error

    def on_level(self, notice: LevelChanged) -> None:
        super().on_level(notice)
        raise self.error


@pytest.mark.parametrize("worker", ["process", "thread"])
@pytest.mark.parametrize("error", [RuntimeError("sink down"), SystemExit(3), KeyboardInterrupt()])
def test_a_failing_sink_is_counted_never_raised_and_monitoring_goes_on(worker: str, error: BaseException) -> None:
    sink = Exploding(error)
    alerts: list[TrifectaAlert] = []
    logs = LoggerProvider(shutdown_on_exit=False)
    processor = TrifectaSpanProcessor(worker=worker, sink=sink, on_alert=alerts.append, logger_provider=logs)
    spans = trace_incident(processor)  # nothing raised here
    assert len(spans.get_finished_spans()) == 5
    calls = processor.session(example.CONVERSATION)
    processor.shutdown()
    assert calls is not None and len(calls.calls) == 3
    pushed = len(sink.decisions) + len(sink.levels) + len(sink.alerts)
    assert pushed > 5 and processor.errors == {"sink": pushed}
    assert len(alerts) == len(sink.alerts)  # the other exporters still ran


@pytest.mark.parametrize("worker", ["thread", "process"])
def test_without_a_sink_no_decision_notices_cross_the_pipe(worker: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each decision crosses from the engine only when a sink will hear it: the same session traced with and
    without a sink sends decision messages in the one case only."""
    from monitor.otel import _records as rec
    from monitor.otel._receiver import Receiver

    seen: list[str] = []
    real = Receiver.on_output

    def note(self: Receiver, message: list[object]) -> None:
        seen.append(str(message[0]))
        real(self, message)

    monkeypatch.setattr(Receiver, "on_output", note)
    logs = LoggerProvider(shutdown_on_exit=False)
    counts = []
    for sink in (None, RecordingSink()):
        seen.clear()
        processor = TrifectaSpanProcessor(worker=worker, sink=sink, logger_provider=logs)
        assert processor.config.decision_notices is (sink is not None)
        trace_incident(processor)
        processor.shutdown()
        counts.append(seen.count(str(rec.OUT_DECIDED)))
        assert str(rec.OUT_ALERT) in seen  # the alerts cross either way
    assert counts[0] == 0 and counts[1] > 0
