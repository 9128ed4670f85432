"""The engine side of the span processor, fed records directly: held calls, bad records, requests."""

from __future__ import annotations

import json
from typing import Any

from monitor.models import AlertRaised, Decision, SessionReport
from monitor.otel import _records as rec
from monitor.otel._config import ProcessorConfig
from monitor.otel._engine import SpanEngine
from monitor.session import SessionMonitor


def make_engine(**options: Any) -> tuple[SpanEngine, list[list[Any]]]:
    """An engine whose messages are collected in a list."""
    sent: list[list[Any]] = []
    settings = {"max_spans": 100, "span_ttl": 3600.0, "max_sessions": 100, "session_ttl": 3600.0, **options}
    return SpanEngine(SessionMonitor(), sent.append, ProcessorConfig(**settings)), sent


def make_end(span: int, up: int, session: str, tool: str, call_id: str, when: float = 1.0) -> list[Any]:
    """The record the processor writes when an ``execute_tool`` span ends."""
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool,
        "gen_ai.tool.call.id": call_id,
        "gen_ai.tool.call.arguments": json.dumps({"q": call_id}),
        "gen_ai.tool.call.result": json.dumps({"text": "ok"}),
    }
    record: list[Any] = [None] * (rec.E_ATTRIBUTES + 1)
    record[0] = rec.END
    record[rec.E_TIME] = when
    record[rec.E_SPAN] = span
    record[rec.E_TRACE_HI], record[rec.E_TRACE_LO] = 1, 2
    record[rec.E_UP] = up
    record[rec.E_SESSION] = session
    record[rec.E_NAME] = f"execute_tool {tool}"
    record[rec.E_START], record[rec.E_END_NS] = span * 1000, span * 1000 + 500
    record[rec.E_STATUS] = 0
    record[rec.E_ATTRIBUTES] = attributes
    return record


def ask(engine: SpanEngine, sent: list[list[Any]], what: str, argument: Any = None) -> Any:
    """A request, and the engine's answer to it."""
    engine.handle([rec.REQUEST, 7, what, argument])
    reply = sent[-1]
    assert reply[0] == rec.OUT_REPLY and reply[1] == 7
    return reply[2]


def test_a_call_held_for_a_tool_span_that_never_ends_is_analysed_when_that_span_is_forgotten() -> None:
    engine, sent = make_engine(max_spans=3)
    # Span 10 is a tool span above span 11; it never ends (its end was lost), so 11 waits for it.
    engine.handle(make_end(11, 10, "s", "mcp__web__fetch", "inner"))
    assert ask(engine, sent, rec.ASK_SESSION, "s") is None  # nothing decided yet
    for span in range(20, 24):  # other calls push the holder out of the bounded links
        engine.handle(make_end(span, 0, "t", "mcp__web__fetch", f"c{span}"))
    report = ask(engine, sent, rec.ASK_SESSION, "s")
    assert report is not None and [c.call_id for c in report.calls] == ["inner"]


def test_bad_records_are_reported_not_raised() -> None:
    engine, sent = make_engine()
    engine.handle(["?", 1])
    engine.handle([rec.END])  # too short
    engine.handle(make_end(1, 0, "s", "mcp__web__fetch", "c1"))
    errors = [m for m in sent if m[0] == rec.OUT_ERROR]
    assert [(m[1], m[2]) for m in errors] == [("engine", 1), ("engine", 1)]
    assert "unknown record kind" in errors[0][3] and errors[1][3] == ""  # the traceback once per kind
    assert [c.call_id for c in ask(engine, sent, rec.ASK_SESSION, "s").calls] == ["c1"]


def test_decisions_are_counted_per_batch_and_before_any_answer() -> None:
    engine, sent = make_engine()
    engine.handle(make_end(1, 0, "s", "mcp__web__fetch", "c1"))
    engine.handle(make_end(2, 0, "s", "mcp__web__fetch", "c2"))
    assert not any(m[0] == rec.OUT_DECISIONS for m in sent)
    ask(engine, sent, rec.ASK_FLUSH)
    counts = [m for m in sent if m[0] == rec.OUT_DECISIONS]
    assert len(counts) == 1 and sum(counts[0][1].values()) == 2
    assert sent.index(counts[0]) < len(sent) - 1  # sent before the reply


def test_requests_list_end_and_close_sessions() -> None:
    engine, sent = make_engine()
    for n, session in enumerate(("a", "b")):
        engine.handle(make_end(n + 1, 0, session, "mcp__web__fetch", f"c{n}"))
    assert ask(engine, sent, rec.ASK_LIST) == ["a", "b"]
    ended = ask(engine, sent, rec.ASK_END, "a")
    assert ended.session_id == "a" and [rec.OUT_ENDED, "a"] in sent
    assert ask(engine, sent, rec.ASK_END, "a") is None
    ask(engine, sent, rec.ASK_CLOSE)
    assert ask(engine, sent, rec.ASK_LIST) == [] and [rec.OUT_ENDED, "b"] in sent


def test_alerts_decisions_and_reports_are_handed_over_as_objects() -> None:
    engine, sent = make_engine()
    engine.handle(list(rec.make_check(1.0, 5, "s", 0, 0, 1, 2, "mail", "send_email", {"to": "a@b.example"}, "c1")))
    reply = sent[-1]
    assert reply[:2] == [rec.OUT_REPLY, 5] and isinstance(reply[2], Decision)
    engine.handle([rec.GAP, 2.0, "s", 3])  # a monitoring-gap alert
    alerts = [m for m in sent if m[0] == rec.OUT_ALERT]
    assert alerts and all(isinstance(m[-1], AlertRaised) and m[5] == m[-1].alert.message for m in alerts)
    assert alerts[-1][-1].alert.kind.value == "monitoring-gap"
    assert isinstance(ask(engine, sent, rec.ASK_SESSION, "s"), SessionReport)


def test_an_engine_keeps_the_monitors_sink_and_replaces_an_earlier_engine() -> None:
    from monitor.testing import RecordingSink

    host_sink = RecordingSink()
    monitor = SessionMonitor(sink=host_sink)
    settings = ProcessorConfig(max_spans=100, span_ttl=3600.0, max_sessions=100, session_ttl=3600.0)
    first_sent: list[list[Any]] = []
    second_sent: list[list[Any]] = []
    first = SpanEngine(monitor, first_sent.append, settings)
    # A forked child builds its own engine on the copied monitor: the copied engine must not be fed any more.
    second = SpanEngine(monitor, second_sent.append, settings)
    second.handle(make_end(1, 0, "s", "send_email", "c1"))
    second.end_batch()
    assert monitor.sink is second
    assert first_sent == [] and second_sent
    # Nothing piles up in the copied engine, which nobody reads any more.
    first.end_batch()
    assert first_sent == []
    assert [n.decision.call_id for n in host_sink.decisions] == ["c1"]
