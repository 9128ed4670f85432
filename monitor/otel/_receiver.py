"""What the engine sends back, handed to the part of the span processor it is for.

The engine's messages (:mod:`monitor.otel._records`) arrive in order on the reader thread of the engine
process, or on the delivery thread when the engine runs there: the level and legs to stamp go to the session
links, each alert to every alert exporter, the decisions to the metrics, the replies to the questions waiting
for them, the engine's failures and log records to this process's. The delivery also tells the receiver when
records could not be delivered and when the engine process died. The engine's acknowledgements (and the
replies, which acknowledge the records before their question) tell the session links which stamps are known.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from monitor.models import CallDecided, Level, LevelChanged
from monitor.otel import _records as rec
from monitor.otel._exporters import AlertExporter, DecisionLogExporter, ExportedAlert, MetricsExporter
from monitor.otel._failures import Failures
from monitor.otel._links import SessionLinks
from monitor.otel._names import read_legs
from monitor.otel._requests import Requests
from monitor.types import AlertSink

logger = logging.getLogger("monitor.otel")


@dataclass(frozen=True, slots=True)
class Receiver:
    """Hands each message of the engine to the part it is for: the delivery's listener. Never raises.

    Each alert goes to every one of ``exporters``, in order; each decided call's guardrail record to
    ``decisions``, when given; each decision and change of level to ``sink``, when given (its alerts go through
    an exporter), whatever it raises counted as ``sink``.
    """

    links: SessionLinks
    requests: Requests
    exporters: Sequence[AlertExporter]
    metrics: MetricsExporter | None
    failures: Failures
    decisions: DecisionLogExporter | None = None
    sink: AlertSink | None = None

    def on_output(self, message: list[Any]) -> None:
        """Handle one message of the engine (a failure is counted as ``output``). Nothing escapes, not even
        ``SystemExit`` or ``KeyboardInterrupt`` raised by a user's callback: the thread this runs on carries on."""
        try:
            kind = message[0]
            if kind == rec.OUT_STAMP:
                self.links.set_stamp(message[1], message[2], message[3])
                if self.sink is not None:
                    self._tell_level(self.sink, message)
            elif kind == rec.OUT_ACK:
                self.links.acknowledge(message[1])
            elif kind == rec.OUT_ALERT:
                self._export(ExportedAlert(message))
            elif kind == rec.OUT_GUARDRAIL:
                if self.decisions is not None:
                    self._export_decision(self.decisions, message)
            elif kind == rec.OUT_DECIDED:
                if self.sink is not None:
                    self._tell_decision(self.sink, message)
            elif kind == rec.OUT_DECISIONS:
                if self.metrics is not None:
                    self.metrics.count_decisions(message[1])
            elif kind == rec.OUT_REPLY:
                self.requests.answer(message[1], message[2], self.links.acknowledge)
            elif kind == rec.OUT_ENDED:
                self.links.forget_stamp(message[1])
            elif kind == rec.OUT_ERROR:
                self.failures.add(message[1], message[2], message[3])
            elif kind == rec.OUT_LOG:
                logger.log(message[1], "trifecta-monitor engine: %s", message[2])
        except BaseException:  # a user's logging handler or callback may raise anything: never our threads' end
            self.failures.fail("output")

    def on_tick(self, now: float) -> None:
        """A pass of the delivery thread: span links past their time are forgotten."""
        self.links.rotate_when_due(now)

    def on_lost(self, lines: list[bytes]) -> None:
        """Records that could not be delivered: the questions among them are answered as failed, and the sessions
        of the spans among them are lost (a later mark would otherwise acknowledge records the engine never saw)."""
        self.requests.fail_lost(lines)
        self.links.progress.lose(s for s in map(rec.read_span_session, lines) if s is not None)

    def on_exit(self) -> list[str]:
        """The engine process died: the questions in flight fail; the sessions it had stamped are forgotten, and
        returned (each gets a ``monitoring-gap`` alert from the next engine); their stamps, and those of the
        sessions with records in flight, are unknown from now on."""
        self.requests.fail_pending()
        return self.links.forget_stamps()

    def _tell_level(self, sink: AlertSink, message: list[Any]) -> None:
        """The sink's ``on_level`` for the engine's :data:`~monitor.otel._records.OUT_STAMP` message."""
        try:
            sink.on_level(LevelChanged(session_id=message[1], level=Level(message[2]), legs=read_legs(message[3])))
        except BaseException:
            self.failures.fail("sink")

    def _tell_decision(self, sink: AlertSink, message: list[Any]) -> None:
        """The sink's ``on_decision`` for the engine's :data:`~monitor.otel._records.OUT_DECIDED` message."""
        try:
            sink.on_decision(rec.read_model(CallDecided, message[1]))
        except BaseException:
            self.failures.fail("sink")

    def _export_decision(self, exporter: DecisionLogExporter, message: list[Any]) -> None:
        """A decided call's log record, guarded as an alert's is (counted as ``emit_log``)."""
        try:
            exporter.export_decision(message)
        except BaseException:
            self.failures.fail(exporter.failure_kind)

    def _export(self, alert: ExportedAlert) -> None:
        """One log record, one counter increment and one callback per alert; each guarded on its own, against
        any exception (``SystemExit`` and ``KeyboardInterrupt`` from ``on_alert`` included), counted by kind."""
        for exporter in self.exporters:
            try:
                exporter.export(alert)
            except BaseException:
                self.failures.fail(exporter.failure_kind)
