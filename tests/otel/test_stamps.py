"""A span's ``trifecta.level`` stamp never says less than the truth.

The truth for a span is the level of its session when the span started, as a synchronous in-process engine
computes it: one that has analysed every span that ended before. The processor's engine runs behind the
application (in its own process by default, which takes a moment to start): a span that starts before the
engine caught up with its session is stamped ``pending`` (no legs), and gets its true level and legs if the
engine catches up while the span is still recording. These tests replay the same spans twice, once through a
synchronous reference and once as an application would, and compare every tool span's stamp.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from support.otel_example import load_example

from monitor.models import Level
from monitor.otel import ATTR_LEGS, ATTR_LEVEL, ATTR_SESSION_ID, TrifectaSpanProcessor
from monitor.otel._config import ProcessorConfig
from monitor.otel._links import SessionLinks
from monitor.otel._names import format_legs
from monitor.otel._progress import EngineProgress

STARTING_DELAY = 2.0  # seconds the engine process takes to start, on top of its own start
Waiter = Callable[..., bool]


example = load_example()


Pause = Callable[[trace.Span, str], None]


def trace_incidents(
    provider: TracerProvider, sessions: int = 4, prefix: str = "conv", pause: Pause | None = None
) -> None:
    """Trace the GitHub incident ``sessions`` times, one conversation each (``<prefix>-<n>``), as fast as the
    SDK goes; each call also as the MCP client span nested in its ``execute_tool`` span (one call, two tool
    spans). ``pause(span, name)`` runs in each ``execute_tool`` span as it starts (the call taking its time)."""
    tracer = provider.get_tracer("github-incident")
    for number in range(sessions):
        example.CONVERSATION = f"{prefix}-{number}"
        example.main(_NestingTracer(tracer, pause))


class _NestingTracer:
    """A tracer that also opens the MCP client span of each ``execute_tool`` span inside it."""

    def __init__(self, tracer: trace.Tracer, pause: Pause | None) -> None:
        self._tracer = tracer
        self._pause = pause

    def start_as_current_span(self, name: str, attributes: dict[str, Any]) -> Any:
        return _nest(self._tracer, name, attributes, self._pause)


def _nest(tracer: trace.Tracer, name: str, attributes: dict[str, Any], pause: Pause | None) -> Any:
    @contextmanager
    def opened() -> Iterator[trace.Span]:
        with tracer.start_as_current_span(name, attributes=attributes) as span:
            if attributes.get("gen_ai.operation.name") != "execute_tool":
                yield span
                return
            if pause is not None:
                pause(span, name)
            tool = str(attributes["gen_ai.tool.name"]).rsplit("__", 1)[-1]
            client = {
                "mcp.method.name": "tools/call",
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": tool,
                "gen_ai.tool.call.id": attributes["gen_ai.tool.call.id"],
                "server.address": "api.githubcopilot.com",
            }
            with tracer.start_as_current_span(f"tools/call {tool}", attributes=client):
                yield span

    return opened()


class SettleFirst(SpanProcessor):
    """Added before the monitor: before each span starts, the engine analyses every span ended so far (a
    synchronous engine), and the level of the span's session, as the engine reports it, is noted."""

    def __init__(self, processor: TrifectaSpanProcessor) -> None:
        self.processor = processor
        self.truth: list[tuple[str, str] | None] = []  # by start order: (level, legs) of tool spans, else None

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        assert self.processor.force_flush()
        if (span.attributes or {}).get("gen_ai.operation.name") != "execute_tool":
            self.truth.append(None)
            return
        report = self.processor.session(example.CONVERSATION)
        self.truth.append(("clean", "") if report is None else (report.level.value, format_legs(report.legs)))


def make_provider(processor: SpanProcessor, *before: SpanProcessor) -> tuple[TracerProvider, InMemorySpanExporter]:
    """A tracer provider with an in-memory exporter and the processors given."""
    provider = TracerProvider(resource=Resource({"service.name": "agent"}), shutdown_on_exit=False)
    spans = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    for other in before:
        provider.add_span_processor(other)
    provider.add_span_processor(processor)
    return provider, spans


def read_stamps(spans: tuple[ReadableSpan, ...]) -> list[tuple[Any, Any] | None]:
    """Each span's level and legs stamps (None for the spans that are not tool spans), in start order."""
    ordered = sorted(spans, key=lambda s: s.start_time or 0)
    stamps: list[tuple[Any, Any] | None] = []
    for span in ordered:
        attributes = dict(span.attributes or {})
        is_tool = attributes.get("gen_ai.operation.name") == "execute_tool"
        stamps.append((attributes.get(ATTR_LEVEL), attributes.get(ATTR_LEGS)) if is_tool else None)
    return stamps


def compute_truth(sessions: int = 4) -> list[tuple[str, str] | None]:
    """Every span's true level and legs at its start, in start order, from a synchronous engine (``worker=
    "thread"`` analysing every ended span before the next one starts); its own stamps agree."""
    processor = TrifectaSpanProcessor(worker="thread", logger_provider=LoggerProvider(shutdown_on_exit=False))
    settle = SettleFirst(processor)
    provider, spans = make_provider(processor, settle)
    trace_incidents(provider, sessions)
    provider.shutdown()
    assert processor.errors == {}
    assert read_stamps(spans.get_finished_spans()) == settle.truth
    return settle.truth


@pytest.fixture(scope="module")
def truth() -> list[tuple[str, str] | None]:
    """The true stamps of :func:`trace_incidents`' spans."""
    return compute_truth()


@pytest.fixture
def slow_engine_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Engine processes started during the test take :data:`STARTING_DELAY` seconds more to start: a real
    delay in the child's start (its interpreter runs a ``sitecustomize`` that sleeps), nothing mocked."""
    (tmp_path / "sitecustomize.py").write_text(f"import time\ntime.sleep({STARTING_DELAY})\n", encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))


def assert_never_lower(stamps: list[tuple[Any, Any] | None], truth: list[tuple[str, str] | None]) -> int:
    """Every tool span's stamp is the truth, or ``pending`` with no legs; return how many are pending."""
    assert len(stamps) == len(truth)
    assert [s is None for s in stamps] == [t is None for t in truth]
    pending = 0
    for number, (stamp, true) in enumerate(zip(stamps, truth, strict=True)):
        if stamp is None or true is None:
            continue
        if stamp == ("pending", None):
            pending += 1
            continue
        assert stamp == true, f"span {number}: stamped {stamp}, true {true}"
    return pending


def test_the_reference_sees_the_session_climb(truth: list[tuple[str, str] | None]) -> None:
    # The user's words are private (partial); the public issues add untrusted content (armed); the private file
    # read while armed keeps it armed until the pull request: each session, then the next from clean again.
    levels = [t[0] for t in truth if t is not None]
    assert levels == ["partial", "partial", "armed", "armed", "armed", "armed"] * 4


@pytest.mark.usefixtures("slow_engine_start")
def test_spans_ended_while_the_engine_starts_are_stamped_pending_never_clean(
    truth: list[tuple[str, str] | None],
) -> None:
    processor = TrifectaSpanProcessor(logger_provider=LoggerProvider(shutdown_on_exit=False))  # the defaults
    assert processor.worker_kind.value == "process"
    provider, spans = make_provider(processor)
    trace_incidents(provider)  # over in milliseconds: the engine is still starting
    provider.shutdown()  # the engine analyses them all: their ended spans are not changed for it
    stamps = read_stamps(spans.get_finished_spans())
    assert processor.errors == {}
    assert processor.worker_kind.value == "process"
    pending = assert_never_lower(stamps, truth)
    # Every tool span started after the chat span of its session ended, before the engine could say what it
    # made of it: none of them is known (the bug stamped them all "clean").
    assert pending == sum(t is not None for t in truth)


@pytest.mark.parametrize("worker", ["process", "thread"])
def test_stamps_are_true_or_pending_at_any_pace(worker: str, truth: list[tuple[str, str] | None]) -> None:
    processor = TrifectaSpanProcessor(worker=worker, logger_provider=LoggerProvider(shutdown_on_exit=False))
    provider, spans = make_provider(processor)
    trace_incidents(provider)
    assert processor.force_flush()
    trace_incidents(provider, prefix="again")  # the engine runs now: the same spans again, in new sessions
    stamps = read_stamps(spans.get_finished_spans())
    provider.shutdown()
    assert processor.errors == {}
    assert_never_lower(stamps[: len(truth)], truth)
    assert_never_lower(stamps[len(truth) :], truth)
    assert {s[0] for s in stamps if s is not None} <= {*(level.value for level in Level), "pending"}


def test_session_ids_are_stamped_whatever_the_engine_knows() -> None:
    processor = TrifectaSpanProcessor(worker="thread", logger_provider=LoggerProvider(shutdown_on_exit=False))
    provider, spans = make_provider(processor)
    trace_incidents(provider, 1)
    provider.shutdown()
    assert {dict(s.attributes or {})[ATTR_SESSION_ID] for s in spans.get_finished_spans()} == {"conv-0"}


@pytest.mark.usefixtures("slow_engine_start")
def test_a_pending_span_gets_its_true_level_when_the_engine_catches_up_while_it_records(
    truth: list[tuple[str, str] | None], wait_for: Waiter
) -> None:
    processor = TrifectaSpanProcessor(logger_provider=LoggerProvider(shutdown_on_exit=False))
    provider, spans = make_provider(processor)
    seen: list[tuple[Any, Any]] = []

    def take_time(span: trace.Span, name: str) -> None:  # each call runs until the engine caught up with it
        assert isinstance(span, ReadableSpan)
        seen.append((dict(span.attributes or {}).get(ATTR_LEVEL), dict(span.attributes or {}).get(ATTR_LEGS)))
        assert wait_for(lambda: dict(span.attributes or {}).get(ATTR_LEVEL) != "pending", 30), name

    trace_incidents(provider, 1, pause=take_time)
    provider.shutdown()
    assert processor.errors == {}
    stamps = read_stamps(spans.get_finished_spans())
    session = truth[: len(stamps)]
    assert assert_never_lower(stamps, session) == 0  # every tool span got its level while it recorded
    assert seen[0] == ("pending", None)  # the first call started while the engine was starting
    assert next(s for s in stamps if s is not None) == session[2] == ("partial", "private_data")


def test_the_engine_progress_decides_which_stamps_are_known() -> None:
    progress = EngineProgress(max_sessions=2)  # follows 4 sessions at most
    assert progress.find_wait("new") == 0  # nothing queued: known (clean)
    progress.note("a", 1)
    progress.note("b", 2)
    assert (progress.find_wait("a"), progress.find_wait("b")) == (1, 2)
    progress.acknowledge(1, lambda _: ("clean", ""))
    assert (progress.find_wait("a"), progress.find_wait("b")) == (0, 2)
    progress.acknowledge(1, lambda _: ("clean", ""))  # old news: nothing moves back
    assert progress.acked == 1
    for number, session in enumerate("cdef", start=3):  # beyond 4 sessions: the first seen are forgotten…
        progress.note(session, number)
    assert "b" not in progress.find_in_flight()
    assert progress.find_wait("b") == progress.find_wait("unseen") > 1  # …so no unseen session is known yet
    progress.acknowledge(6, lambda _: ("clean", ""))
    assert progress.find_wait("b") == progress.find_wait("unseen") == 0
    progress.lose(["a"])
    assert progress.find_wait("a") == -1  # records lost: never known…
    progress.forget_lost("a")
    assert progress.find_wait("a") == 0  # …until the engine ends the session
    progress.note("a", 7)
    span = TracerProvider(shutdown_on_exit=False).get_tracer("t").start_span("s", attributes={ATTR_LEVEL: "pending"})
    assert isinstance(span, Span)
    assert progress.watch(7, "a", span)  # waits for 7
    assert not progress.watch(6, "a", span)  # acknowledged already: the caller decides now
    progress.acknowledge(7, lambda _: ("armed", "private_data,untrusted_content"))
    assert dict(span.attributes or {})[ATTR_LEGS] == "private_data,untrusted_content"
    progress.note("a", 8)
    progress.note("a", 9)  # a record of the session after the span started: the level then is not exact
    span.set_attribute(ATTR_LEVEL, "pending")
    assert progress.watch(8, "a", span)
    progress.acknowledge(9, lambda _: ("trifecta", "private_data,untrusted_content,external_communication"))
    assert dict(span.attributes or {})[ATTR_LEVEL] == "pending"
    span.end()
    progress.note("a", 10)
    assert progress.watch(10, "a", span)
    progress.acknowledge(10, lambda _: ("trifecta", ""))
    assert dict(span.attributes or {})[ATTR_LEVEL] == "pending"  # ended: never changed


def test_links_stamp_pending_and_unknown_without_legs() -> None:
    links = SessionLinks(ProcessorConfig(), lambda: 0.0)
    tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.conversation.id": "s"}
    links.progress.note("s", 1)
    assert links.start(None, 1, 0, tool, None) == ("s", ("pending", None), False, 1)  # type: ignore[arg-type]
    links.set_stamp("s", "armed", "private_data,untrusted_content")
    links.acknowledge(1)
    assert links.start(None, 2, 0, tool, None) == (  # type: ignore[arg-type]
        "s",
        ("armed", "private_data,untrusted_content"),
        False,
        0,
    )
    assert links.forget_stamps() == ["s"]  # the engine died
    assert links.start(None, 3, 0, tool, None) == ("s", ("unknown", None), False, -1)  # type: ignore[arg-type]
    links.forget_stamp("s")  # the new engine ended the session
    assert links.start(None, 4, 0, tool, None) == ("s", ("clean", ""), False, 0)  # type: ignore[arg-type]
