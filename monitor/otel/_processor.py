"""The span processor: what runs on the application's threads, and how it reaches the engine.

On the application's threads the processor only resolves each span's session, stamps it, and, when a span
of agent work ends, writes it as one compact record (:mod:`monitor.otel._records`) to a bounded queue. A
delivery thread hands the queue, in order, to the engine (:class:`~monitor.otel._engine.SpanEngine`), which
runs in a process of its own by default (``worker="process"``) or on the delivery thread
(``worker="thread"``). The engine's answers come back on a reader thread: the level and legs to stamp on
the session's next spans, the alerts (emitted there as log records, metric increments and ``on_alert``
calls), and the replies to :meth:`TrifectaSpanProcessor.check_tool_call` and the other requests.
"""

from __future__ import annotations

import itertools
import logging
import os
import threading
import time
import weakref
from collections import Counter
from collections.abc import Callable, Mapping
from enum import StrEnum
from threading import get_ident
from typing import Any

import orjson
from opentelemetry import baggage
from opentelemetry import trace as trace_api
from opentelemetry._logs import Logger, LoggerProvider, SeverityNumber
from opentelemetry.attributes import BoundedAttributes
from opentelemetry.context import Context
from opentelemetry.metrics import Counter as MetricCounter
from opentelemetry.metrics import MeterProvider
from opentelemetry.sdk import trace as sdk_trace
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from monitor.classify._layers import OverrideSource
from monitor.decide import Policy, decide_on_monitor_error
from monitor.models._decisions import Alert, Decision, Level
from monitor.models._legs import Posture
from monitor.models._names import split_mcp_name
from monitor.models._reports import SessionReport
from monitor.models._tools import Severity
from monitor.otel import _records as rec
from monitor.otel._names import (
    ALERT_EVENT_NAME,
    ATTR_ACTION,
    ATTR_ALERT_KIND,
    ATTR_ALERT_SEVERITY,
    ATTR_ERROR_KIND,
    ATTR_LEGS,
    ATTR_LEVEL,
    ATTR_SERVER,
    ATTR_SESSION_ID,
    ATTR_TOOL,
    BAGGAGE_SESSION_KEYS,
    METRIC_ALERTS,
    METRIC_DECISIONS,
    METRIC_DROPPED,
    METRIC_INTERNAL_ERRORS,
    TrifectaAlert,
    read_legs,
)
from monitor.otel._workers import ProcessWorker, ThreadWorker, Worker, make_process_config
from monitor.session._monitor import SessionMonitor
from monitor.spans import (
    EXECUTE_TOOL,
    GEN_AI_INPUT_MESSAGES,
    GEN_AI_OPERATION_NAME,
    GEN_AI_PROMPT,
    GEN_AI_TOOL_DEFINITIONS,
    LLM_INPUT_MESSAGES,
    LLM_REQUEST_FUNCTIONS,
    LLM_TOOLS,
    MCP_METHOD_NAME,
    OPENINFERENCE_SPAN_KIND,
    SESSION_KEYS,
    TRACELOOP_SPAN_KIND,
    UNKNOWN_SERVER,
    is_tool_span,
    read_session_key,
)

__all__ = ["LevelStamps", "TrifectaSpanProcessor", "WorkerKind"]

logger = logging.getLogger("monitor.otel")


class WorkerKind(StrEnum):
    """Where the engine runs."""

    PROCESS = "process"  # a child process: the engine does not compete with the application for the GIL
    THREAD = "thread"  # the processor's delivery thread, in this process


class LevelStamps(StrEnum):
    """Which spans of a session get ``trifecta.level`` and ``trifecta.legs`` when they start (every one of them
    gets ``trifecta.session_id``)."""

    TOOLS = "tools"  # tool spans: the level and legs each call started at (the default)
    ALL = "all"  # every span of the session, its agent, chat and other spans too
    NONE = "none"  # none: the session id only


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
# A span that marks GenAI work (its session is worth resolving and stamping even without a session key).
_GENAI_MARKERS = (GEN_AI_OPERATION_NAME, OPENINFERENCE_SPAN_KIND, TRACELOOP_SPAN_KIND)
# Attributes that carry user messages or tool definitions (what the engine reads on chat spans).
_CHAT_KEYS = (
    GEN_AI_INPUT_MESSAGES,
    GEN_AI_TOOL_DEFINITIONS,
    f"{LLM_INPUT_MESSAGES}.0.message.role",
    f"{LLM_TOOLS}.0.tool.json_schema",
    f"{LLM_TOOLS}.0.tool.name",
    f"{LLM_REQUEST_FUNCTIONS}.0.name",
    f"{GEN_AI_PROMPT}.0.role",
)
# Every attribute the processor looks at on a span, to pass over other spans (HTTP, database…) in one test.
_KEYS = frozenset((*SESSION_KEYS, *_GENAI_MARKERS, *_CHAT_KEYS, MCP_METHOD_NAME))
_SESSION_KEYSET = frozenset(SESSION_KEYS)
_CHAT_KEYSET = frozenset(_CHAT_KEYS)
# What can make a span a tool span besides ``gen_ai.operation.name``, or a chat span: a span with none of these
# (an agent span, say) is passed over at its end in one test.
_TOOL_MARKERS = frozenset((MCP_METHOD_NAME, OPENINFERENCE_SPAN_KIND, TRACELOOP_SPAN_KIND))
_END_KEYS = _TOOL_MARKERS | _CHAT_KEYSET
_CLEAN: tuple[str, str] = (Level.CLEAN.value, "")
# The class of the spans the SDK's tracer makes: tested first, as ``isinstance`` on an abstract class runs Python.
_SDK_SPAN: type = getattr(sdk_trace, "_Span", Span)
_LOW_64 = (1 << 64) - 1
_dumps = orjson.dumps
_NEWLINE = orjson.OPT_APPEND_NEWLINE
_BUSY_WAIT = 0.05  # seconds between deliveries while spans flow (each wakes a thread that needs the GIL)
_IDLE_WAIT = 0.25  # seconds between looks when nothing flowed for a while
_IDLE_AFTER = 50  # empty looks before the delivery thread slows down
_MAX_RESTARTS = 3  # engine processes started again after one died, before falling back to a thread
_GAPS_KEPT = 10_000  # sessions with dropped spans remembered until the engine is told

# What is kept of a span on the application side: its session, whether it was named explicitly (by
# attributes or baggage, its own or an ancestor's), the nearest tool span at or above it, whether it is a
# tool span that has not ended, the nearest tool span strictly above it (0: none), and, for a chat span, its
# attributes as they were written when it started (its end is not written again when they did not change).
_Link = tuple[str, bool, int, bool, int, dict[str, Any] | None]


class _Reply:
    __slots__ = ("answer", "done", "failed")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.answer: Any = None
        self.failed = False


class TrifectaSpanProcessor(SpanProcessor):
    """An OpenTelemetry span processor that watches traced agent sessions for the lethal trifecta.

    Add it with ``provider.add_span_processor(TrifectaSpanProcessor(logger_provider=...))``. The engine runs
    off the application's threads: in a child process (``worker="process"``, the default when no
    ``monitor`` is given) or on the processor's delivery thread (``worker="thread"``, the default, and the
    only choice, when a ``monitor`` object is given). ``rules``, ``posture`` and ``policy`` configure a new
    :class:`SessionMonitor`.

    ``on_alert`` is called with a :class:`TrifectaAlert` for each alert; ``logger_provider`` receives one log
    record per alert (event name ``trifecta.alert``); ``meter_provider`` gets the counters. Both are called
    on the processor's own thread, never on the application's. ``max_spans``/``span_ttl`` bound the span
    links kept on the application side and in the engine; ``max_sessions``/``session_ttl`` the sessions;
    ``max_queue_bytes`` the spans waiting for the engine: on the application's side, and again in the
    engine process, which reads them as they come (beyond that, spans are dropped, counted, and their
    session gets a ``monitoring-gap`` alert). ``check_timeout`` is how long :meth:`check_tool_call` waits.
    ``level_stamps`` says which spans get the session's level and legs besides its id: tool spans (the
    default: the level each call started at), all, or none. ``engine_niceness`` lowers the engine process's
    scheduling priority (``nice``, 0 to 19; default 10), so that on a busy machine the application's threads,
    its exporters included, run before the engine, which catches up when the processors are free.
    """

    def __init__(
        self,
        monitor: SessionMonitor | None = None,
        *,
        rules: OverrideSource | None = None,
        posture: Posture | str | None = None,
        policy: Policy | None = None,
        worker: WorkerKind | str | None = None,
        on_alert: Callable[[TrifectaAlert], object] | None = None,
        logger_provider: LoggerProvider | None = None,
        meter_provider: MeterProvider | None = None,
        max_spans: int = 100_000,
        span_ttl: float = 3600.0,
        max_sessions: int = 10_000,
        session_ttl: float = 3600.0,
        max_queue_bytes: int = 128 * 1024 * 1024,
        check_timeout: float = 5.0,
        level_stamps: LevelStamps | str = LevelStamps.TOOLS,
        engine_niceness: int = 10,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if monitor is not None and (rules is not None or posture is not None or policy is not None):
            raise ValueError("give either a monitor or rules/posture/policy for a new one, not both")
        bounds = (max_spans, max_sessions, max_queue_bytes)
        if min(bounds) < 1 or min(span_ttl, session_ttl, check_timeout) <= 0:
            raise ValueError("the bounds, time-to-lives and timeout must be positive")
        if not 0 <= engine_niceness <= 19:
            raise ValueError("engine_niceness must be from 0 (the application's priority) to 19 (the lowest)")
        if level_stamps not in tuple(LevelStamps):
            choices = ", ".join(kind.value for kind in LevelStamps)
            raise ValueError(f"level_stamps must be one of {choices}, not {level_stamps!r}")
        self.level_stamps = LevelStamps(level_stamps)
        # Whether a tool span, and any other span, gets the level and legs (read on every span's start).
        self._levels_on_tools = self.level_stamps is not LevelStamps.NONE
        self._levels_on_others = self.level_stamps is LevelStamps.ALL
        kind = WorkerKind(worker) if worker is not None else None
        if kind is None:
            kind = WorkerKind.THREAD if monitor is not None else WorkerKind.PROCESS
        if monitor is not None and kind is WorkerKind.PROCESS:
            raise ValueError("a monitor object lives in this process: use worker='thread' with it")
        self.worker_kind = kind
        self._engine_options = {
            "max_spans": max_spans,
            "span_ttl": span_ttl,
            "max_sessions": max_sessions,
            "session_ttl": session_ttl,
        }
        self._monitor_options: dict[str, Any] = {
            "posture": Posture(posture or Posture.BALANCED),
            "policy": policy,
            "rules": rules,
        }
        self._process_config = b""
        if kind is WorkerKind.PROCESS:
            self._process_config = make_process_config(
                self._monitor_options, self._engine_options, max_queue_bytes, engine_niceness
            )
        if monitor is None and kind is WorkerKind.THREAD:
            monitor = SessionMonitor(**self._monitor_options)
        self.monitor: SessionMonitor | None = monitor
        """The monitor the engine feeds, with ``worker="thread"`` (None with a process: it lives there)."""
        self.on_alert = on_alert
        self.max_spans = max_spans
        self.span_ttl = span_ttl
        self.max_sessions = max_sessions
        self.session_ttl = session_ttl
        self.max_queue_bytes = max_queue_bytes
        self.check_timeout = check_timeout
        self._clock = clock
        self._logger: Logger | None = logger_provider.get_logger(_SCOPE) if logger_provider is not None else None
        self._alerts_counter: MetricCounter | None = None
        self._decisions_counter: MetricCounter | None = None
        self._errors_counter: MetricCounter | None = None
        self._dropped_counter: MetricCounter | None = None
        if meter_provider is not None:
            meter = meter_provider.get_meter(_SCOPE)
            self._alerts_counter = meter.create_counter(METRIC_ALERTS, unit="{alert}", description="Alerts raised")
            self._decisions_counter = meter.create_counter(
                METRIC_DECISIONS, unit="{decision}", description="Tool calls decided"
            )
            self._errors_counter = meter.create_counter(
                METRIC_INTERNAL_ERRORS, unit="{error}", description="Internal failures of the trifecta monitor"
            )
            self._dropped_counter = meter.create_counter(
                METRIC_DROPPED, unit="{span}", description="Spans the trifecta monitor could not analyse"
            )
        self._errors: Counter[str] = Counter()
        self._dropped = 0
        self._restarts = 0
        self._requests = itertools.count(1)
        self._reset()
        _track_forks(self)

    def _reset(self) -> None:
        """Fresh application-side state and delivery thread (at start, and in a forked child)."""
        self._closed = False
        self._errors_lock = threading.Lock()  # (new in a forked child: another thread may have held the old)
        self._links: dict[int, _Link] = {}  # two generations: links used lately, and the ones before
        self._old_links: dict[int, _Link] = {}
        self._rotate_at = self._clock() + self.span_ttl / 2
        self._half_spans = max(1, self.max_spans // 2)
        self._stamps: dict[str, tuple[str, str]] = {}
        # Records written for the engine, one line each, in order: appended and taken under the lock, in one
        # step each (a bytearray grown and emptied instead reallocates, and faults in fresh pages, as it goes).
        self._queue_lock = threading.Lock()
        self._queued: list[bytes] = []
        self._queued_bytes = 0
        self._gaps_lock = threading.Lock()
        self._gaps: dict[str, int] = {}
        self._replies: dict[int, _Reply] = {}
        self._own_threads: set[int] = set()
        self._wake = threading.Event()
        self._idle = False
        self._worker: Worker | None = None
        self._worker_lock = threading.Lock()
        self._stopped = threading.Event()
        self._pump_thread = threading.Thread(target=self._pump, name="trifecta-monitor-delivery", daemon=True)
        self._pump_thread.start()

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
            parent_link = None
            if parent is not None:
                parent_link = self._links.get(parent[1]) or self._find_old_link(parent[1])
            if (
                parent_link is not None
                and parent_link[1]
                and attributes.get(GEN_AI_OPERATION_NAME) == EXECUTE_TOOL
                and _SESSION_KEYSET.isdisjoint(attributes)
            ):  # the common case: a tool span inside a session named above it
                session, explicit, is_tool, is_chat = parent_link[0], True, True, False
            else:
                resolved = self._resolve_start(span, attributes, parent_link, parent_context)
                if resolved is None:
                    return  # not agent work: nothing to keep, nothing to stamp
                session, explicit, is_tool, is_chat = resolved
            up = parent_link[2] if parent_link is not None else 0
            span_id = span._context[1]  # type: ignore[index]  # an SDK span always has one
            links = self._links
            links[span_id] = (session, explicit, span_id if is_tool else up, is_tool, up, None)
            if len(links) > self._half_spans:
                self._rotate_links()
            levels = self._levels_on_tools if is_tool else self._levels_on_others
            if bounded.max_value_len is None and (
                bounded.maxlen is None or len(attributes) + (3 if levels else 1) <= bounded.maxlen
            ):
                # The SDK's set_attributes validates every value (microseconds per span); ours are known to be
                # strings that need no truncation, and a span is frozen only when it ends.
                attributes[ATTR_SESSION_ID] = session
                if levels:
                    attributes[ATTR_LEVEL], attributes[ATTR_LEGS] = self._stamps.get(session, _CLEAN)
            else:
                _stamp(span, session, self._stamps.get(session, _CLEAN) if levels else None)
            if is_chat:
                trace_id = span._context[0]  # type: ignore[index]
                self._write_chat_start(
                    span_id, trace_id, span._name, span._start_time, attributes, session, explicit, up
                )
        except Exception:
            self._fail("on_start")

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
            attributes = bounded._dict
            if attributes.get(GEN_AI_OPERATION_NAME) != EXECUTE_TOOL and (
                _END_KEYS.isdisjoint(attributes)
                or (_CHAT_KEYSET.isdisjoint(attributes) and not is_tool_span(attributes))
            ):
                return  # not a tool or chat span
            context = span._context
            if context is None:
                return
            span_id = context[1]
            resolved = self._resolve_end(span, span_id, attributes)
            if resolved is None:
                return
            session, up = resolved
            if self._queued_bytes >= self.max_queue_bytes:
                self._drop(session)
                return
            trace_id = context[0]
            record = (
                rec.END,
                self._clock(),
                span_id,
                trace_id >> 64,
                trace_id & _LOW_64,
                up,
                session,
                span._name,
                span._start_time,
                span._end_time,
                span._status._status_code._value_,
                attributes,
            )
            # Written now, so that the span's attributes are freed with the span, as without the processor.
            try:
                line = _dumps(record, default=str, option=_NEWLINE)
            except TypeError:
                line = _dump(record)
            with self._queue_lock:
                self._queued.append(line)
                self._queued_bytes += len(line)
            if self._idle:
                self._idle = False
                self._wake.set()
        except Exception:
            self._fail("on_end")

    def _start_other(self, span: Span, parent_context: Context | None) -> None:
        """``on_start`` for a span that is not the SDK's own (read and stamped through the public API)."""
        attributes = dict(span.attributes or {})
        span_id = span.get_span_context().span_id
        parent = span.parent
        parent_link = self._find_link(parent.span_id) if parent is not None else None
        resolved = self._resolve_start(span, attributes, parent_link, parent_context)
        if resolved is None:
            return
        session, explicit, is_tool, is_chat = resolved
        up = parent_link[2] if parent_link is not None else 0
        self._links[span_id] = (session, explicit, span_id if is_tool else up, is_tool, up, None)
        if len(self._links) > self._half_spans:
            self._rotate_links()
        levels = self._levels_on_tools if is_tool else self._levels_on_others
        _stamp(span, session, self._stamps.get(session, _CLEAN) if levels else None)
        if is_chat:
            attributes = dict(span.attributes or {})
            trace_id = span.get_span_context().trace_id
            self._write_chat_start(span_id, trace_id, span.name, span.start_time, attributes, session, explicit, up)

    def _write_chat_start(
        self,
        span_id: int,
        trace_id: int,
        name: str,
        start_time: int | None,
        attributes: Mapping[str, Any],
        session: str,
        explicit: bool,
        up: int,
    ) -> None:
        """Write a chat span's start: its user messages and tool definitions count from then. Its link keeps the
        attributes written, so that its end is written only if they changed."""
        record = (
            rec.START,
            self._clock(),
            span_id,
            trace_id >> 64,
            trace_id & _LOW_64,
            session,
            name,
            start_time,
            attributes,
        )
        self._enqueue(record, session)
        self._links[span_id] = (session, explicit, up, False, up, dict(attributes))

    def _resolve_start(
        self,
        span: Span,
        attributes: Mapping[str, Any],
        parent_link: _Link | None,
        parent_context: Context | None,
    ) -> tuple[str, bool, bool, bool] | None:
        """A starting span's session, whether it was named explicitly, whether it is a tool or a chat span;
        None when it is not agent work in a session."""
        if attributes.get(GEN_AI_OPERATION_NAME) == EXECUTE_TOOL:
            relevant = is_tool = True
            is_chat = False
        else:
            relevant = not _KEYS.isdisjoint(attributes)
            is_tool = relevant and not _TOOL_MARKERS.isdisjoint(attributes) and is_tool_span(attributes)
            is_chat = relevant and not is_tool and not _CHAT_KEYSET.isdisjoint(attributes)
        session = read_session_key(attributes) if relevant and not _SESSION_KEYSET.isdisjoint(attributes) else None
        if session is not None:
            return session, True, is_tool, is_chat
        if parent_link is not None and parent_link[1]:
            return parent_link[0], True, is_tool, is_chat
        session = _read_baggage_session(parent_context)
        if session is not None:
            return session, True, is_tool, is_chat
        if parent_link is not None:
            return parent_link[0], False, is_tool, is_chat
        if relevant:  # a tool, chat or agent span: its trace is its session
            return _resolve_fallback_session(span), False, is_tool, is_chat
        return None

    def _resolve_end(self, span: ReadableSpan, span_id: int, attributes: Mapping[str, Any]) -> tuple[str, int] | None:
        """An ending span's session and the nearest tool span above it, from the link made when it started;
        None for a chat span with nothing new since its start was written."""
        link = self._links.get(span_id) or self._old_links.get(span_id)
        if link is None:
            return self._resolve_unlinked(span, attributes)
        if link[5] is not None and link[5] == attributes:
            return None
        return link[0], link[4]

    def _end_other(self, span: ReadableSpan) -> None:
        """``on_end`` for a span that is not the SDK's own (read through the public API)."""
        attributes = dict(span.attributes or {})
        context = span.get_span_context()
        if context is None or not (is_tool_span(attributes) or not _CHAT_KEYSET.isdisjoint(attributes)):
            return
        resolved = self._resolve_end(span, context.span_id, attributes)
        if resolved is None:
            return
        session, up = resolved
        trace_id = context.trace_id
        record = (
            rec.END,
            self._clock(),
            context.span_id,
            trace_id >> 64,
            trace_id & _LOW_64,
            up,
            session,
            span.name,
            span.start_time,
            span.end_time,
            span.status.status_code.value,
            attributes,
        )
        self._enqueue(record, session)

    def shutdown(self) -> None:
        """Analyse what is queued, end every session in the engine, and stop it (waits up to 30 s)."""
        if self._closed:
            return
        try:
            if self._worker is not None or self._queued:
                self._ask(rec.ASK_CLOSE, None, 30.0)
        except Exception:
            self._fail("shutdown")
        self._closed = True
        self._stopped.set()
        self._wake.set()
        self._pump_thread.join(30.0)
        with self._worker_lock:
            worker, self._worker = self._worker, None
        if worker is not None:
            try:
                worker.close(10.0)
            except Exception:
                self._fail("shutdown")
        self._links.clear()
        self._old_links.clear()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Wait until every span ended so far was analysed and its alerts emitted; False on timeout."""
        if self._closed:
            return True
        reply = self._request(rec.ASK_FLUSH, None)
        return reply is not None and reply.done.wait(timeout_millis / 1000) and not reply.failed

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
            if self._closed or threading.get_ident() in self._own_threads:
                raise RuntimeError("check_tool_call called after shutdown or from the processor's own thread")
            return self._check(span_or_context, tool, arguments, server, call_id)
        except Exception:
            self._fail("check_tool_call")
            return decide_on_monitor_error(call_id)

    def session(self, session_id: str, timeout: float = 60.0) -> SessionReport | None:
        """The session as the engine holds it once every span ended so far is analysed (waiting at most
        ``timeout`` seconds); None if unknown, or on failure."""
        try:
            answer = self._ask(rec.ASK_SESSION, session_id, timeout)
            return SessionReport.model_validate(answer) if answer is not None else None
        except Exception:
            self._fail("session")
            return None

    def end_session(self, session_id: str, timeout: float = 60.0) -> SessionReport | None:
        """End a session once every span ended so far is analysed; its final report, or None when it is
        unknown or on failure (waiting at most ``timeout`` seconds)."""
        try:
            answer = self._ask(rec.ASK_END, session_id, timeout)
            return SessionReport.model_validate(answer) if answer is not None else None
        except Exception:
            self._fail("end_session")
            return None

    def list_sessions(self, timeout: float = 60.0) -> list[str]:
        """The ids of the sessions the engine holds, least recently active first ([] on failure)."""
        try:
            answer = self._ask(rec.ASK_LIST, None, timeout)
            return [str(session) for session in answer or ()]
        except Exception:
            self._fail("list_sessions")
            return []

    # -- introspection ------------------------------------------------------------------------------

    @property
    def errors(self) -> dict[str, int]:
        """Internal failures so far, by kind (``on_start``, ``on_end``, ``engine``, ``monitor``, …)."""
        with self._errors_lock:
            return dict(self._errors)

    @property
    def internal_errors(self) -> int:
        """The number of internal failures so far (none of them reached the application)."""
        return sum(self.errors.values())

    @property
    def dropped(self) -> int:
        """Spans not analysed because the queue to the engine was full."""
        return self._dropped

    @property
    def tracked_spans(self) -> int:
        """Span links held on the application side now."""
        return len(self._links) + len(self._old_links)

    # -- on_start -----------------------------------------------------------------------------------

    def _find_old_link(self, span_id: int) -> _Link | None:
        link = self._old_links.get(span_id)
        if link is not None:
            self._links[span_id] = link  # used again: keep it through the next rotation
        return link

    def _find_link(self, span_id: int) -> _Link | None:
        link = self._links.get(span_id)
        if link is None:
            link = self._old_links.get(span_id)
            if link is not None:
                self._links[span_id] = link  # used again: keep it through the next rotation
        return link

    def _rotate_links(self) -> None:
        """Forget the older generation: links are kept for at least ``span_ttl / 2`` seconds after their last
        use and at most ``span_ttl``, and at most ``max_spans`` of them."""
        self._old_links = self._links
        self._links = {}
        self._rotate_at = self._clock() + self.span_ttl / 2

    # -- on_end -------------------------------------------------------------------------------------

    def _resolve_unlinked(self, span: ReadableSpan, attributes: Mapping[str, Any]) -> tuple[str, int]:
        """The session of a span that has no link (not agent work when it started, or its link expired), and
        the nearest tool span above it (0: none)."""
        parent = span.parent
        parent_link = self._find_link(parent.span_id) if parent is not None else None
        up = parent_link[2] if parent_link is not None else 0
        session = attributes.get(ATTR_SESSION_ID)  # our stamp: the session resolved when the span started
        if type(session) is str:
            return session, up
        session = read_session_key(attributes)
        if session is not None:
            return session, up
        return (parent_link[0] if parent_link is not None else _resolve_fallback_session(span)), up

    # -- the queue ----------------------------------------------------------------------------------

    def _enqueue(self, record: tuple[Any, ...], session: str, bounded: bool = True) -> None:
        if bounded and self._queued_bytes >= self.max_queue_bytes:
            self._drop(session)
            return
        line = _dump(record)
        with self._queue_lock:
            self._queued.append(line)
            self._queued_bytes += len(line)
        if self._idle or not bounded:
            self._idle = False
            self._wake.set()

    def _drop(self, session: str) -> None:
        first = self._dropped == 0
        self._dropped += 1
        with self._gaps_lock:
            if session in self._gaps or len(self._gaps) < _GAPS_KEPT:
                self._gaps[session] = self._gaps.get(session, 0) + 1
        if self._dropped_counter is not None:
            self._dropped_counter.add(1)
        if first:
            logger.warning(
                "trifecta-monitor: the queue to the engine is full: spans are dropped, counted, and their "
                "sessions get a monitoring-gap alert"
            )

    def _pump(self) -> None:
        """The delivery thread: hands the queue to the engine, in order, until the processor stops."""
        self._own_threads.add(threading.get_ident())
        empty = 0
        while True:
            self._wake.wait(_IDLE_WAIT if self._idle else _BUSY_WAIT)
            self._wake.clear()
            with self._queue_lock:
                lines, self._queued = self._queued, []
                self._queued_bytes = 0
            with self._gaps_lock:
                gaps, self._gaps = self._gaps, {}
            now = self._clock()
            if now >= self._rotate_at:
                self._rotate_links()
            lines.extend(_dump((rec.GAP, now, session, count)) for session, count in gaps.items())
            worker = self._worker
            if lines:
                empty = 0
                try:
                    self._deliver(lines)
                except Exception:
                    self._fail("deliver")
                    self._fail_requests(lines)
            elif worker is not None and not self._flush_worker(worker):
                empty = 0  # written batches wait for the engine process: look again soon
            elif self._stopped.is_set():
                return
            else:
                empty += 1
                if empty >= _IDLE_AFTER:
                    self._idle = True

    def _deliver(self, batch: list[bytes]) -> None:
        """Hand a batch of written records (one line each) to the engine."""
        # A process that cannot be started falls back to a thread: the second attempt makes that.
        worker = self._worker or self._start_worker() or self._start_worker()
        if worker is None:
            self._drop_batch(batch)
            return
        if not worker.deliver(batch):
            # The engine is that far behind: its spans are dropped (their sessions told), requests still go.
            kept = self._drop_batch(batch)
            if kept:
                worker.deliver(kept, force=True)

    def _drop_batch(self, batch: list[bytes]) -> list[bytes]:
        """Drop the spans of a batch, counted and told to their sessions; return the rest (requests, gaps)."""
        kept = []
        for line in batch:
            record = orjson.loads(line)
            if record[0] == rec.END:
                self._drop(record[rec.E_SESSION])
            elif record[0] == rec.START:
                self._drop(record[rec.S_SESSION])
            else:
                kept.append(line)
        return kept

    def _flush_worker(self, worker: Worker) -> bool:
        try:
            return worker.flush()
        except Exception:
            self._fail("deliver")
            return True

    def _start_worker(self) -> Worker | None:
        with self._worker_lock:
            if self._worker is not None:
                return self._worker
            kind = self.worker_kind
            try:
                if kind is WorkerKind.PROCESS and self._restarts <= _MAX_RESTARTS:
                    self._worker = ProcessWorker(
                        self._process_config,
                        self._on_output,
                        self._on_worker_exit,
                        self._register_thread,
                        self.max_queue_bytes,
                    )
                else:
                    if self.monitor is None:
                        self.monitor = SessionMonitor(**self._monitor_options)
                    self._worker = ThreadWorker(self.monitor, self._on_output, dict(self._engine_options))
            except Exception:
                self._fail("start_worker")
                if kind is WorkerKind.PROCESS:
                    self.worker_kind = WorkerKind.THREAD  # no process here: run in this one
                return None
            return self._worker

    def _register_thread(self) -> None:
        self._own_threads.add(threading.get_ident())

    def _on_worker_exit(self, worker: ProcessWorker) -> None:
        """The engine process died: fail what waits for it, start another on the next batch, tell sessions."""
        self._fail("worker_exit")
        with self._worker_lock:
            if self._worker is worker:
                self._worker = None
            self._restarts += 1
        for reply in list(self._replies.values()):
            reply.failed = True
            reply.done.set()
        self._replies.clear()
        with self._gaps_lock:
            for session in list(self._stamps)[-_GAPS_KEPT:]:
                self._gaps[session] = self._gaps.get(session, 0)
        self._stamps.clear()
        self._wake.set()

    def _fail_requests(self, batch: list[bytes]) -> None:
        """Requests in a batch that could not be delivered are answered as failed at once."""
        for line in batch:
            if not line.startswith((b'["k",', b'["q",')):
                continue
            record = orjson.loads(line)
            reply = self._replies.pop(record[rec.K_REQUEST if record[0] == rec.CHECK else rec.Q_REQUEST], None)
            if reply is not None:
                reply.failed = True
                reply.done.set()

    # -- requests -----------------------------------------------------------------------------------

    def _request(self, what: str, argument: Any) -> _Reply | None:
        if threading.get_ident() in self._own_threads:
            return None  # the engine answers on this very thread: waiting would never end
        request = next(self._requests)
        reply = self._replies[request] = _Reply()
        self._enqueue((rec.REQUEST, request, what, argument), "", bounded=False)
        self._wake.set()
        return reply

    def _ask(self, what: str, argument: Any, timeout: float) -> Any:
        reply = self._request(what, argument)
        if reply is None:
            raise RuntimeError(f"{what}: asked from the processor's own thread")
        if not reply.done.wait(timeout):
            raise TimeoutError(f"{what}: no answer from the engine within {timeout} s")
        if reply.failed:
            raise RuntimeError(f"{what}: the engine stopped before it answered")
        return reply.answer

    def _check(
        self,
        span_or_context: trace_api.Span | Context | None,
        tool: str,
        arguments: Mapping[str, Any] | None,
        server: str | None,
        call_id: str | None,
    ) -> Decision:
        if isinstance(span_or_context, trace_api.Span):
            span, context = span_or_context, None
        else:
            context = span_or_context
            span = trace_api.get_current_span(context)
        span_context = span.get_span_context()
        link = self._find_link(span_context.span_id) if span_context.is_valid else None
        session = link[0] if link is not None else None
        if session is None:
            attributes = getattr(span, "attributes", None)
            session = read_session_key(attributes) if isinstance(attributes, Mapping) else None
        if session is None:
            session = _read_baggage_session(context)
        parent_id = _get_parent_id(span)
        parent_link = self._find_link(parent_id) if parent_id else None
        if session is None:
            if parent_link is not None:
                session = parent_link[0]
            elif span_context.is_valid:
                session = _resolve_fallback_session(span)
            else:
                session = "unknown"
        if server is None:
            split = split_mcp_name(tool)
            server, tool = split if split else (UNKNOWN_SERVER, tool)
        own_span = span_context.span_id if link is not None and link[3] else 0
        up = parent_link[2] if parent_link is not None else 0
        request = next(self._requests)
        reply = self._replies[request] = _Reply()
        trace_id = span_context.trace_id
        record = [
            rec.CHECK,
            self._clock(),
            request,
            session,
            own_span,
            up,
            trace_id >> 64,
            trace_id & _LOW_64,
            span_context.span_id,
            server,
            tool,
            dict(arguments) if arguments is not None else None,
            call_id,
        ]
        self._enqueue(tuple(record), session, bounded=False)
        self._wake.set()
        if not reply.done.wait(self.check_timeout):
            self._replies.pop(request, None)
            raise TimeoutError(f"check_tool_call: no answer from the engine within {self.check_timeout} s")
        if reply.failed or reply.answer is None:
            raise RuntimeError("check_tool_call: the engine stopped before it answered")
        return Decision.model_validate(reply.answer)

    # -- what the engine sends back -----------------------------------------------------------------

    def _on_output(self, message: list[Any]) -> None:
        """Handle one message of the engine (on the reader or delivery thread). Never raises."""
        try:
            kind = message[0]
            if kind == rec.OUT_STAMP:
                stamps = self._stamps
                stamps[message[1]] = (message[2], message[3])
                if len(stamps) > 2 * self.max_sessions:
                    del stamps[next(iter(stamps))]
            elif kind == rec.OUT_ALERT:
                self._emit(message)
            elif kind == rec.OUT_DECISIONS:
                if self._decisions_counter is not None:
                    for action, count in message[1].items():
                        self._decisions_counter.add(count, {ATTR_ACTION: action})
            elif kind == rec.OUT_REPLY:
                reply = self._replies.pop(message[1], None)
                if reply is not None:
                    reply.answer = message[2]
                    reply.done.set()
            elif kind == rec.OUT_ENDED:
                self._stamps.pop(message[1], None)
            elif kind == rec.OUT_ERROR:
                self._count_error(message[1], message[2], message[3])
            elif kind == rec.OUT_LOG:
                logger.log(message[1], "trifecta-monitor engine: %s", message[2])
        except Exception:
            self._fail("output")

    def _emit(self, message: list[Any]) -> None:
        """One log record, one counter increment and one callback per alert; each guarded on its own."""
        _, trace_hi, trace_lo, span_id, attributes, body, alert_json, decision_json = message
        trace_id = (trace_hi << 64) | trace_lo
        severity = attributes[ATTR_ALERT_SEVERITY]
        if self._logger is not None:
            try:
                context = SpanContext(trace_id, span_id, is_remote=False, trace_flags=_SAMPLED)
                severity_number, severity_text = _LOG_SEVERITY[severity]
                self._logger.emit(
                    timestamp=time.time_ns(),
                    context=trace_api.set_span_in_context(NonRecordingSpan(context)) if context.is_valid else None,
                    severity_number=severity_number,
                    severity_text=severity_text,
                    body=body,
                    attributes=attributes,
                    event_name=ALERT_EVENT_NAME,
                )
            except Exception:
                self._fail("emit_log")
        if self._alerts_counter is not None:
            try:
                self._alerts_counter.add(
                    1, {ATTR_ALERT_KIND: attributes[ATTR_ALERT_KIND], ATTR_ALERT_SEVERITY: severity}
                )
            except Exception:
                self._fail("metrics")
        if self.on_alert is not None:
            try:
                self.on_alert(
                    TrifectaAlert(
                        alert=Alert.model_validate_json(alert_json),
                        session_id=attributes[ATTR_SESSION_ID],
                        level=Level(attributes[ATTR_LEVEL]),
                        legs=read_legs(attributes[ATTR_LEGS]),
                        server=attributes.get(ATTR_SERVER),
                        tool=attributes.get(ATTR_TOOL),
                        decision=Decision.model_validate_json(decision_json) if decision_json is not None else None,
                        trace_id=format(trace_id, "032x"),
                        span_id=format(span_id, "016x"),
                    )
                )
            except Exception:
                self._fail("on_alert")

    # -- failures -----------------------------------------------------------------------------------

    def _fail(self, kind: str) -> None:
        """Count a failure; log it (with its traceback) the first time this kind happens."""
        try:
            first = self._count(kind, 1)
            if first:
                logger.exception("trifecta-monitor: internal error in %s (further ones are only counted)", kind)
        except Exception:  # pragma: no cover - logging or metrics failing: nothing more to do
            pass

    def _count_error(self, kind: str, count: int, text: str) -> None:
        if self._count(kind, count) and text:
            logger.error("trifecta-monitor: internal error in the %s (further ones are only counted)\n%s", kind, text)

    def _count(self, kind: str, count: int) -> bool:
        with self._errors_lock:
            first = kind not in self._errors
            self._errors[kind] += count
        if self._errors_counter is not None:
            self._errors_counter.add(count, {ATTR_ERROR_KIND: kind})
        return first


# -- helpers -----------------------------------------------------------------------------------------


def _stamp(span: Span, session: str, levels: tuple[str, str] | None) -> None:
    """Stamp through the public API (the level and legs too, when given), unless the span is at its attribute
    count limit (it would drop its oldest attributes for ours: it stays as it is)."""
    stamps = {ATTR_SESSION_ID: session}
    if levels is not None:
        stamps[ATTR_LEVEL], stamps[ATTR_LEGS] = levels
    limits = getattr(span, "_limits", None)
    limit = getattr(limits, "max_span_attributes", None)
    attributes = span.attributes or {}
    if not isinstance(limit, int) or len(attributes) + len(stamps) <= limit:
        span.set_attributes(stamps)


def _dump(record: tuple[Any, ...]) -> bytes:
    try:
        return orjson.dumps(record, default=str, option=orjson.OPT_APPEND_NEWLINE)
    except TypeError:  # an integer beyond 64 bits in an attribute: written as text
        return orjson.dumps(_plain(record), default=str, option=orjson.OPT_APPEND_NEWLINE)


def _plain(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool) and not -(1 << 63) <= value < (1 << 64):
        return str(value)
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    return value


def _read_baggage_session(context: Context | None) -> str | None:
    entries = baggage.get_all(context)
    if not entries:
        return None
    for key in BAGGAGE_SESSION_KEYS:
        value = entries.get(key)
        if value is not None and value != "":
            return str(value)
    return None


def _resolve_fallback_session(span: ReadableSpan | trace_api.Span) -> str:
    """As the OTLP reader: the resource's session key, else the trace id."""
    resource = getattr(span, "resource", None)
    if resource is not None:
        session = read_session_key(resource.attributes)
        if session is not None:
            return session
    context = span.get_span_context()
    return format(context.trace_id, "032x") if context is not None else "unknown"


def _get_parent_id(span: object) -> int | None:
    parent = getattr(span, "parent", None)
    return parent.span_id if isinstance(parent, SpanContext) and parent.span_id else None


_PROCESSORS: weakref.WeakSet[TrifectaSpanProcessor] = weakref.WeakSet()


def _track_forks(processor: TrifectaSpanProcessor) -> None:
    """In a forked child, a processor starts afresh: the parent's threads and engine process are not its own."""
    _PROCESSORS.add(processor)


def _after_fork_in_child() -> None:
    for processor in list(_PROCESSORS):
        if not processor._closed:
            worker = processor._worker
            if isinstance(worker, ProcessWorker):
                worker.abandon()  # the parent's engine: let go of our copies of its pipes
            processor._reset()


os.register_at_fork(after_in_child=_after_fork_in_child)
