"""The span processor: the OpenTelemetry SDK's hooks, and the parts they hand their work to.

On the application's threads the processor only links each span to its session and stamps it
(:mod:`~monitor.otel._links`), and, when a span of agent work ends, writes it as one compact record
(:mod:`~monitor.otel._records`) to the bounded queue of :mod:`~monitor.otel._delivery`, whose thread hands
it, in order, to the engine (:class:`~monitor.otel._engine.SpanEngine`): in a process of its own by default
(``worker="process"``), or on the delivery thread (``worker="thread"``). The engine's messages come back on a
reader thread: the level and legs to stamp on the session's next spans, the alerts (handed to the exporters
of :mod:`~monitor.otel._exporters`: log records, metric counters, ``on_alert``), and the replies to the
questions of :mod:`~monitor.otel._requests` (:meth:`TrifectaSpanProcessor.check_tool_call` and the others).
"""

from __future__ import annotations

import os
import time
import weakref
from collections.abc import Callable, Iterable, Mapping
from threading import get_ident
from typing import Any

from opentelemetry import trace as trace_api
from opentelemetry._logs import LoggerProvider, get_logger_provider
from opentelemetry.attributes import BoundedAttributes
from opentelemetry.context import Context
from opentelemetry.metrics import MeterProvider
from opentelemetry.sdk import trace as sdk_trace
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor

from monitor.decide import Policy, decide_on_monitor_error
from monitor.models import Decision, Posture, SessionReport
from monitor.otel import _records as rec
from monitor.otel._config import LevelStamps, ProcessorConfig, WorkerKind, pack_config
from monitor.otel._delivery import Delivery
from monitor.otel._exporters import (
    AlertExporter,
    CallbackAlertExporter,
    DecisionLogExporter,
    LogRecordAlertExporter,
    MetricsExporter,
    SinkAlertExporter,
)
from monitor.otel._failures import Failures
from monitor.otel._links import SessionLinks
from monitor.otel._names import ATTR_LEGS, ATTR_LEVEL, ATTR_SESSION_ID, TrifectaAlert
from monitor.otel._progress import write_level
from monitor.otel._receiver import Receiver
from monitor.otel._requests import Requests
from monitor.session import MonitorConfig, RuleChoice, SessionMonitor
from monitor.types import AlertSink

# The class of the spans the SDK's tracer makes: tested first, as ``isinstance`` on an abstract class runs Python.
_SDK_SPAN: type = getattr(sdk_trace, "_Span", Span)


class TrifectaSpanProcessor(SpanProcessor):
    """An OpenTelemetry span processor that watches traced agent sessions for the lethal trifecta.

    Add it with ``provider.add_span_processor(TrifectaSpanProcessor(logger_provider=...))``. The engine runs
    off the application's threads: in a child process (``worker="process"``, the default when no
    ``monitor`` is given) or on the processor's delivery thread (``worker="thread"``, the default, and the
    only choice, when a ``monitor`` object is given). ``monitor_config`` (a :class:`~monitor.session.MonitorConfig`)
    configures a new :class:`SessionMonitor`; ``rules``, ``posture`` and ``policy`` are its fields given one by
    one (they change ``monitor_config``'s).

    ``on_alert`` is called with a :class:`TrifectaAlert` for each alert; ``sink`` (an
    :class:`~monitor.types.AlertSink`, as a :class:`SessionMonitor` takes) is pushed every decision, change of
    level and alert the engine makes, as notices; ``logger_provider`` (by default the
    global one, ``opentelemetry._logs.get_logger_provider()``, so that an SDK configured later, or by
    ``opentelemetry-instrument``, gets them) receives one log record per alert (event name ``trifecta.alert``);
    ``meter_provider`` gets the counters. All of them are called on the processor's own thread, never on the
    application's (what they raise is counted in :attr:`errors`). ``max_spans``/``span_ttl`` bound the span
    links kept on the application side and in the engine; ``max_sessions``/``session_ttl`` the sessions;
    ``max_queue_bytes`` the spans waiting for the engine: on the application's side, and again in the
    engine process, which reads them as they come (beyond that, spans are dropped, counted, and their
    session gets a ``monitoring-gap`` alert). ``max_engine_bytes`` bounds the engine process's resident memory
    (a backlog of spans waiting in it past 32 MiB, or an eighth of the bound, waits in a temporary file):
    when it grew beyond that, the engine ends its least recently active tenth of sessions and holds no more
    sessions than it kept from then on (with ``worker="thread"``, only ``max_sessions`` applies).
    ``check_timeout`` is how long :meth:`check_tool_call` waits.
    ``level_stamps`` says which spans get the session's level and legs besides its id: tool spans (the
    default: the level each call started at), all, or none; a span that starts before the engine analysed
    every span of its session that ended before is stamped ``pending`` (no legs) instead, and gets its level
    and legs when the engine catches up, if it still records then. ``engine_niceness`` lowers the engine
    process's scheduling priority (``nice``, 0 to 19; default 10), so that on a busy machine the application's
    threads, its exporters included, run before the engine, which catches up when the processors are free.
    ``trusted_servers`` names the servers whose tool annotations are trusted (their hints may lower risk).
    ``guardrail_attributes`` also writes each decision with the guardrail attribute names being proposed for
    OpenTelemetry (one ``trifecta.decision`` log record per decided call, and the same attributes on the
    alerts' records): off by default, as the names may still change. All of them are validated once into
    :attr:`config`. :func:`~monitor.otel.read_processor_options` reads them from ``TRIFECTA_*`` variables.

    Raises ValueError for a monitor given with options for a new one, a monitor with ``worker="process"``, an
    unknown worker or ``level_stamps``, a bound, time-to-live or timeout that is not positive, a niceness out
    of 0 to 19, or rules that cannot be sent to the engine process.
    """

    def __init__(
        self,
        monitor: SessionMonitor | None = None,
        *,
        monitor_config: MonitorConfig | None = None,
        rules: RuleChoice | None = None,
        posture: Posture | str | None = None,
        policy: Policy | None = None,
        worker: WorkerKind | str | None = None,
        on_alert: Callable[[TrifectaAlert], object] | None = None,
        sink: AlertSink | None = None,
        logger_provider: LoggerProvider | None = None,
        meter_provider: MeterProvider | None = None,
        max_spans: int = 100_000,
        span_ttl: float = 3600.0,
        max_sessions: int = 10_000,
        session_ttl: float = 3600.0,
        max_queue_bytes: int = 128 * 1024 * 1024,
        max_engine_bytes: int = 256 * 1024 * 1024,
        check_timeout: float = 5.0,
        level_stamps: LevelStamps | str = LevelStamps.TOOLS,
        engine_niceness: int = 10,
        trusted_servers: Iterable[str] = (),
        guardrail_attributes: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if isinstance(trusted_servers, str):  # a set of its letters is never what was meant
            raise ValueError("trusted_servers takes server names (a list), not one string")
        shorthands = {"rules": rules, "posture": posture, "policy": policy}
        given = {name: value for name, value in shorthands.items() if value is not None}
        if monitor is not None and (given or monitor_config is not None):
            raise ValueError("give either a monitor or monitor_config/rules/posture/policy for a new one, not both")
        made_with = monitor_config or MonitorConfig()
        self.config = ProcessorConfig(
            max_spans=max_spans,
            span_ttl=span_ttl,
            max_sessions=max_sessions,
            session_ttl=session_ttl,
            max_queue_bytes=max_queue_bytes,
            max_engine_bytes=max_engine_bytes,
            check_timeout=check_timeout,
            level_stamps=LevelStamps(level_stamps),
            engine_niceness=engine_niceness,
            monitor_config=made_with.replace(**given) if given else made_with,
            trusted_servers=frozenset(trusted_servers),
            guardrail_attributes=guardrail_attributes,
            decision_notices=sink is not None,
        )
        """The bounds and options, validated (shared by every part of the processor and by its engine)."""
        kind, monitor = _choose_worker(self.config, monitor, worker)
        self._clock = clock
        self._metrics = MetricsExporter(meter_provider) if meter_provider is not None else None
        self._failures = Failures(self._metrics.count_errors if self._metrics is not None else None)
        self._callback = CallbackAlertExporter(on_alert)
        logs = logger_provider if logger_provider is not None else get_logger_provider()
        exporters: list[AlertExporter] = [LogRecordAlertExporter(logs)]
        decisions = DecisionLogExporter(logs) if guardrail_attributes else None
        exporters += [self._metrics] if self._metrics is not None else []
        exporters += [self._callback, SinkAlertExporter(sink)] if sink is not None else [self._callback]
        self._links = SessionLinks(self.config, clock)
        self._delivery = Delivery(
            self.config, clock, self._failures, self._metrics, monitor, kind, self._links.progress
        )
        self._requests = Requests(self.config, clock, self._delivery)
        receiver = Receiver(self._links, self._requests, exporters, self._metrics, self._failures, decisions, sink)
        self._delivery.start(receiver)
        self._own_threads = self._delivery.own_threads
        self._closed = False
        _PROCESSORS.add(self)

    # -- SpanProcessor ------------------------------------------------------------------------------

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        """Link the span to its parent and session; stamp the session id, level and legs on it."""
        if self._closed or get_ident() in self._own_threads:
            return
        try:
            if type(span) is not _SDK_SPAN and not isinstance(span, Span):
                self._start_other(span, parent_context)
                return
            # An SDK span is read through its fields (its properties cost as much as the rest of this method),
            # and a span context by position (it is a tuple: trace id, span id, ...). No other thread sees it yet.
            bounded: BoundedAttributes = span._attributes  # type: ignore[assignment]  # always, in an SDK span
            attributes: dict[str, Any] = bounded._dict
            parent = span._parent
            span_id = span._context[1]  # type: ignore[index]  # an SDK span always has one
            parent_id = parent[1] if parent is not None else 0
            started = self._links.start(span, span_id, parent_id, attributes, parent_context)
            if started is None:
                return  # not agent work: nothing to keep, nothing to stamp
            session, levels, is_chat, wait = started
            if bounded.max_value_len is None and (
                bounded.maxlen is None or len(attributes) + (1 if levels is None else 3) <= bounded.maxlen
            ):
                # The SDK's set_attributes validates every value (microseconds per span); ours are known to be
                # strings that need no truncation, and a span is frozen only when it ends.
                attributes[ATTR_SESSION_ID] = session
                if levels is not None:
                    level, legs = levels
                    attributes[ATTR_LEVEL] = level
                    if legs is not None:
                        attributes[ATTR_LEGS] = legs
            elif not _stamp(span, session, levels):
                wait = 0  # not stamped: nothing to replace later
            if wait > 0:  # stamped pending: given the level if the engine catches up while the span records
                self._watch(span, session, wait)
            if is_chat:
                trace_id = span._context[0]  # type: ignore[index]
                self._start_chat(span_id, trace_id, span._name, span._start_time, attributes, session)
        except Exception:
            self._failures.fail("on_start")

    def on_end(self, span: ReadableSpan) -> None:
        """Queue a span of agent work (a tool or chat span) for the engine."""
        if self._closed or get_ident() in self._own_threads:
            return
        try:
            bounded = getattr(span, "_attributes", None)
            if type(bounded) is not BoundedAttributes:
                self._end_other(span)
                return
            # The SDK's ended span, read through its fields (frozen now) and its span context by position.
            context, attributes = span._context, bounded._dict
            ended = self._links.end(span, context[1], attributes) if context is not None else None
            if ended is None:
                return
            session, up = ended
            trace_id, span_id = context[0], context[1]  # type: ignore[index]  # not None when ended is not
            name, start, end, status = span._name, span._start_time, span._end_time, span._status._status_code._value_
            record = rec.make_end(self._clock(), span_id, trace_id, up, session, name, start, end, status, attributes)
            # Written now, so that the span's attributes are freed with the span, as without the processor.
            self._delivery.put(record, session)
        except Exception:
            self._failures.fail("on_end")

    def shutdown(self) -> None:
        """Analyse what is queued, end every session in the engine, and stop it (waits up to 30 s)."""
        if self._closed:
            return
        try:
            if self._delivery.active:
                self._requests.ask(rec.ASK_CLOSE, None, 30.0)
        except Exception:
            self._failures.fail("shutdown")
        self._closed = True
        self._delivery.close()
        self._links.clear()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Wait until every span ended so far was analysed and its alerts emitted; False on timeout."""
        return self._closed or self._requests.flush(timeout_millis / 1000)

    # -- hosts --------------------------------------------------------------------------------------

    def check_tool_call(
        self,
        span_or_context: trace_api.Span | Context | None,
        tool: str,
        arguments: Mapping[str, Any] | None,
        server: str | None = None,
        call_id: str | None = None,
    ) -> Decision:
        """Decide a call before the host executes it, in the session of the given span or context.

        ``span_or_context`` is the call's own tool span (best: its end then records only the result), its
        parent span, or a context holding one (None: the current context). The session is resolved as for
        any span: attributes, ancestors, baggage. ``server`` defaults to the ``mcp__<server>__`` prefix of
        ``tool``. Every span that ended before is analysed first. When the call's tool span ends later, it
        is matched to this decision (by the span, the call id, or server, tool and arguments) and only its
        result is recorded. Never raises: on failure, or after ``check_timeout`` seconds, the answer is
        ``confirm`` with the reason ``monitor-error``.
        """
        try:
            if self._closed or get_ident() in self._own_threads:
                raise RuntimeError("check_tool_call called after shutdown or from the processor's own thread")
            place = self._links.resolve_call(span_or_context)
            return self._requests.check(place, tool, arguments, server, call_id)
        except Exception:
            self._failures.fail("check_tool_call")
            return decide_on_monitor_error(call_id)

    def session(self, session_id: str, timeout: float = 60.0) -> SessionReport | None:
        """The session as the engine holds it once every span ended so far is analysed (waiting at most
        ``timeout`` seconds); None if unknown, or on failure."""
        return self._ask_report(rec.ASK_SESSION, session_id, timeout, "session")

    def end_session(self, session_id: str, timeout: float = 60.0) -> SessionReport | None:
        """End a session once every span ended so far is analysed; its final report, or None when it is
        unknown or on failure (waiting at most ``timeout`` seconds)."""
        return self._ask_report(rec.ASK_END, session_id, timeout, "end_session")

    def list_sessions(self, timeout: float = 60.0) -> list[str]:
        """The ids of the sessions the engine holds, least recently active first ([] on failure)."""
        try:
            answer = self._requests.ask(rec.ASK_LIST, None, timeout)
            return [str(session) for session in answer or ()]
        except Exception:
            self._failures.fail("list_sessions")
            return []

    # -- introspection ------------------------------------------------------------------------------

    @property
    def errors(self) -> dict[str, int]:
        """Internal failures so far, by kind (``on_start``, ``on_end``, ``engine``, ``monitor``, …), the
        exceptions of your own callbacks on the processor's threads among them, ``SystemExit`` and
        ``KeyboardInterrupt`` included (``on_alert``, ``emit_log``, ``sink``): none of them stops monitoring."""
        return self._failures.read()

    @property
    def internal_errors(self) -> int:
        """The number of internal failures so far (none of them reached the application)."""
        return sum(self.errors.values())

    @property
    def dropped(self) -> int:
        """Spans not analysed because the queue to the engine was full."""
        return self._delivery.dropped

    @property
    def tracked_spans(self) -> int:
        """Span links held on the application side now."""
        return self._links.count

    @property
    def monitor(self) -> SessionMonitor | None:
        """The monitor the engine feeds, with ``worker="thread"`` (None with a process: it lives there)."""
        return self._delivery.monitor

    @property
    def worker_kind(self) -> WorkerKind:
        """Where the engine runs (``thread`` after falling back from a process that could not be started)."""
        return self._delivery.worker_kind

    @property
    def level_stamps(self) -> LevelStamps:
        """Which spans get the session's level and legs (``config.level_stamps``)."""
        return self.config.level_stamps

    @property
    def on_alert(self) -> Callable[[TrifectaAlert], object] | None:
        """The callback each alert is given to (it may be replaced at any time)."""
        return self._callback.callback

    @on_alert.setter
    def on_alert(self, callback: Callable[[TrifectaAlert], object] | None) -> None:
        self._callback.callback = callback

    # -- the parts' hooks ---------------------------------------------------------------------------

    def _start_other(self, span: Span, parent_context: Context | None) -> None:
        """``on_start`` for a span that is not the SDK's own (read and stamped through the public API)."""
        span_id = span.get_span_context().span_id
        parent = span.parent
        attributes = dict(span.attributes or {})
        parent_id = parent.span_id if parent is not None else 0
        started = self._links.start(span, span_id, parent_id, attributes, parent_context)
        if started is None:
            return
        session, levels, is_chat, _ = started
        _stamp(span, session, levels)  # a pending level stays so: only the SDK's spans are watched
        if is_chat:
            attributes = dict(span.attributes or {})
            trace_id = span.get_span_context().trace_id
            self._start_chat(span_id, trace_id, span.name, span.start_time, attributes, session)

    def _start_chat(
        self, span_id: int, trace_id: int, name: str, start: int | None, attributes: Mapping[str, Any], session: str
    ) -> None:
        """Write a chat span's start: its user messages and tool definitions count from then."""
        self._delivery.put(rec.make_start(self._clock(), span_id, trace_id, session, name, start, attributes), session)
        self._links.keep_chat(span_id, attributes)

    def _end_other(self, span: ReadableSpan) -> None:
        """``on_end`` for a span that is not the SDK's own (read through the public API)."""
        attributes = dict(span.attributes or {})
        context = span.get_span_context()
        ended = self._links.end(span, context.span_id, attributes) if context is not None else None
        if ended is None:
            return
        session, up = ended
        span_id, trace_id = context.span_id, context.trace_id  # type: ignore[union-attr]  # not None when ended is not
        name, start, end, status = span.name, span.start_time, span.end_time, span.status.status_code.value
        record = rec.make_end(self._clock(), span_id, trace_id, up, session, name, start, end, status, attributes)
        self._delivery.put(record, session)

    def _watch(self, span: Span, session: str, wait: int) -> None:
        """Watch a span stamped ``pending`` until the engine acknowledges ``wait``; if it did meanwhile, stamp
        the level now."""
        progress = self._links.progress
        if not progress.watch(wait, session, span) and progress.find_wait(session) == 0:
            write_level(span, *self._links.read_stamp(session))

    def _ask_report(self, what: str, session_id: str, timeout: float, kind: str) -> SessionReport | None:
        try:
            return self._requests.ask_report(what, session_id, timeout)
        except Exception:
            self._failures.fail(kind)
            return None

    def _restart_in_child(self) -> None:
        """In a forked child: fresh application-side state, delivery thread and, with the first span, engine."""
        self._failures.after_fork()
        self._links.clear()
        self._requests.clear()
        self._delivery.after_fork()


def _choose_worker(
    config: ProcessorConfig, monitor: SessionMonitor | None, worker: WorkerKind | str | None
) -> tuple[WorkerKind, SessionMonitor | None]:
    """The worker kind (a thread with a monitor object, else a process), and the monitor a thread runs."""
    kind = WorkerKind(worker) if worker is not None else None
    if kind is None:
        kind = WorkerKind.THREAD if monitor is not None else WorkerKind.PROCESS
    if monitor is not None and kind is WorkerKind.PROCESS:
        raise ValueError("a monitor object lives in this process: use worker='thread' with it")
    if kind is WorkerKind.PROCESS:
        pack_config(config)  # rules that cannot reach the engine process are refused now
    elif monitor is None:
        monitor = config.make_monitor()
    return kind, monitor


def _stamp(span: Span, session: str, levels: tuple[str, str | None] | None) -> bool:
    """Stamp through the public API (the level, and legs unless None, too, when given), unless the span is at
    its attribute count limit (it would drop its oldest attributes for ours: it stays as it is); True if
    stamped."""
    stamps = {ATTR_SESSION_ID: session}
    if levels is not None:
        level, legs = levels
        stamps[ATTR_LEVEL] = level
        if legs is not None:
            stamps[ATTR_LEGS] = legs
    limits = getattr(span, "_limits", None)
    limit = getattr(limits, "max_span_attributes", None)
    attributes = span.attributes or {}
    room = len(stamps) if levels is None else 3  # a pending level keeps room for the legs that replace it
    if not isinstance(limit, int) or len(attributes) + room <= limit:
        span.set_attributes(stamps)
        return True
    return False


# In a forked child, a processor starts afresh: the parent's threads and engine process are not its own.
_PROCESSORS: weakref.WeakSet[TrifectaSpanProcessor] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for processor in list(_PROCESSORS):
        if not processor._closed:
            processor._restart_in_child()


os.register_at_fork(after_in_child=_after_fork_in_child)
