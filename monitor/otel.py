"""Live OpenTelemetry: a span processor that feeds traced agent sessions to the monitor as they run.

Platform teams that already trace their agents add the monitor with one line::

    provider.add_span_processor(TrifectaSpanProcessor(logger_provider=logger_provider))

**What it reads.** Spans are decoded by the same code as the offline OTLP reader
(:mod:`monitor.ingest.spans`: :func:`~monitor.ingest.spans.convert_readable_span`,
:func:`~monitor.ingest.spans.extract_span_facts` and :func:`~monitor.ingest.spans.assemble_trace`), so the
three attribute flavours (GenAI/MCP semantic conventions, OpenInference, Traceloop) and the session keys are
the reader's. A tool span feeds the engine when it ends: it ends after its call ran, so the call is decided
(``before_call``) and then its result recorded (``after_call``, with the result when the span carries one).
One logical call seen as several nested spans (an agent's ``execute_tool`` span, the MCP client span, the MCP
server span) is held until its outermost tool span ends and then merged, exactly as the reader merges it.
Chat spans give the user messages and the tool definitions offered to the model (``tools/list`` entries),
read when the span starts and again when it ends; each is taken once per session.

**What it writes.** Every span of a session gets ``trifecta.session_id``, ``trifecta.level`` and
``trifecta.legs`` when it starts (the level and legs as they stand at that moment). Each alert becomes one
OpenTelemetry log record (event name ``trifecta.alert``) in the trace context of the span that triggered it,
goes to the ``on_alert`` callback, and is counted when a meter provider is given.

**Safety.** No hook raises into the application: failures are counted (:attr:`TrifectaSpanProcessor.errors`)
and logged once per kind. Nothing is exported or written by the processor itself: log records go through the
given logger provider's processors. Memory is bounded: links from span to parent and session are kept for
at most ``max_spans`` spans, each for ``span_ttl`` seconds after it was last used; sessions for at most
``max_sessions``, each ended (:meth:`SessionMonitor.end_session`) ``session_ttl`` seconds after its last
activity. Sessions are locked one by one. Spans started, and log records emitted, while the processor is
itself at work on the same thread (by a log record processor, an ``on_alert`` callback, a logging handler)
are not processed again.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from opentelemetry import baggage
from opentelemetry import trace as trace_api
from opentelemetry._logs import Logger, LoggerProvider, SeverityNumber
from opentelemetry.context import Context
from opentelemetry.metrics import Counter as MetricCounter
from opentelemetry.metrics import MeterProvider
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.trace import NonRecordingSpan, SpanContext

from monitor.classify.layers import OverrideSource
from monitor.decide import Policy, decide_on_monitor_error
from monitor.ingest.names import split_mcp_name
from monitor.ingest.spans import (
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
    MergedCall,
    ParseCache,
    SpanFacts,
    SpanLink,
    TraceItem,
    assemble_trace,
    convert_readable_span,
    extract_span_facts,
    is_tool_span,
    read_session_key,
)
from monitor.models.decisions import Alert, Decision, Level
from monitor.models.legs import LEG_ORDER, Leg, Posture
from monitor.models.reports import SessionReport
from monitor.models.tools import Severity
from monitor.session.monitor import SessionMonitor
from monitor.session.state import SessionState

__all__ = [
    "ALERT_EVENT_NAME",
    "ATTR_ACTION",
    "ATTR_ALERT_KIND",
    "ATTR_ALERT_PATH",
    "ATTR_ALERT_SEVERITY",
    "ATTR_CALL_ID",
    "ATTR_ERROR_KIND",
    "ATTR_EVIDENCE",
    "ATTR_LEGS",
    "ATTR_LEVEL",
    "ATTR_SERVER",
    "ATTR_SESSION_ID",
    "ATTR_TOOL",
    "BAGGAGE_SESSION_KEYS",
    "METRIC_ALERTS",
    "METRIC_DECISIONS",
    "METRIC_INTERNAL_ERRORS",
    "TrifectaAlert",
    "TrifectaSpanProcessor",
    "summarize_evidence",
]

logger = logging.getLogger("monitor.otel")

# -- our own names (opentelemetry-semantic-conventions marks the GenAI ones as moved: none are imported) -----

ATTR_SESSION_ID = "trifecta.session_id"
"""Span and log attribute: the session the span belongs to, as the monitor resolved it."""
ATTR_LEVEL = "trifecta.level"
"""Span and log attribute: the session's level (``clean`` … ``exfiltration``)."""
ATTR_LEGS = "trifecta.legs"
"""Span and log attribute: the legs in the session's context, as a list of strings."""
ATTR_ALERT_KIND = "trifecta.alert.kind"
"""Log and metric attribute: the alert's kind (``armed``, ``trifecta``, ``exfiltration``, …)."""
ATTR_ALERT_SEVERITY = "trifecta.alert.severity"
"""Log and metric attribute: the alert's severity (``info``, ``warning``, ``high``, ``critical``)."""
ATTR_ALERT_PATH = "trifecta.alert.path"
"""Log attribute: the call path behind the alert (call ids)."""
ATTR_TOOL = "trifecta.tool"
"""Log attribute: the tool of the call the alert is about."""
ATTR_SERVER = "trifecta.server"
"""Log attribute: the server of the call the alert is about."""
ATTR_CALL_ID = "trifecta.call_id"
"""Log attribute: the call the alert is about (the monitor's call id)."""
ATTR_EVIDENCE = "trifecta.evidence"
"""Log attribute: a one-line summary of the alert's evidence."""
ATTR_ACTION = "trifecta.action"
"""Log and metric attribute: the decision's action (``allow``, ``confirm``, ``deny``)."""
ATTR_ERROR_KIND = "trifecta.error.kind"
"""Metric attribute: where an internal error happened (``on_start``, ``on_end``, ``engine``, …)."""

ALERT_EVENT_NAME = "trifecta.alert"
"""The event name of the log record emitted for each alert."""

METRIC_ALERTS = "trifecta.alerts"
"""Counter: alerts raised, by kind and severity."""
METRIC_DECISIONS = "trifecta.decisions"
"""Counter: tool calls decided, by action."""
METRIC_INTERNAL_ERRORS = "trifecta.internal_errors"
"""Counter: failures inside the processor or the engine, by kind. None of them reaches the application."""

BAGGAGE_SESSION_KEYS = (ATTR_SESSION_ID, *SESSION_KEYS)
"""Baggage entries that name a session, in precedence order."""

_SCOPE = "trifecta-monitor"

_SEVERITY_NUMBER = {
    Severity.INFO: SeverityNumber.INFO,
    Severity.WARNING: SeverityNumber.WARN,
    Severity.HIGH: SeverityNumber.ERROR,
    Severity.CRITICAL: SeverityNumber.FATAL,
}

# A span that marks GenAI work (its session is worth resolving and stamping even without a session key).
_GENAI_MARKERS = (GEN_AI_OPERATION_NAME, OPENINFERENCE_SPAN_KIND, TRACELOOP_SPAN_KIND)
# Attributes that carry user messages or tool definitions (what extract_span_facts reads on chat spans).
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
_KEYS = frozenset(
    (*SESSION_KEYS, *_GENAI_MARKERS, *_CHAT_KEYS, MCP_METHOD_NAME, OPENINFERENCE_SPAN_KIND, TRACELOOP_SPAN_KIND)
)
_SESSION_KEYSET = frozenset(SESSION_KEYS)
_CLEAN_STAMP: tuple[str, tuple[str, ...]] = (Level.CLEAN.value, ())
_STAMPS = 3  # attributes stamped on a span when it starts
_MAX_DEPTH = 256  # ancestors walked at most (guards against malformed parent chains)
_TTL_SWEEP = 64  # expired links dropped at most per span started (the size bound is always kept)
_SEEN_PER_SESSION = 10_000  # user texts and tool lists remembered per session to take each once
_DECIDED_PER_SESSION = 256  # calls decided by check_tool_call and awaiting their span, per session
_EVIDENCE_SUMMARY = 1024  # characters


@dataclass(frozen=True, slots=True)
class TrifectaAlert:
    """One alert as the span processor reports it: the engine's :class:`Alert` and where it happened.

    ``trace_id`` and ``span_id`` (lowercase hex) name the span that triggered it; ``server``, ``tool`` and
    ``decision`` describe the call the alert is about, when it is about one.
    """

    alert: Alert
    session_id: str
    level: Level
    legs: tuple[Leg, ...]
    server: str | None
    tool: str | None
    decision: Decision | None
    trace_id: str
    span_id: str


def summarize_evidence(alert: Alert, limit: int = _EVIDENCE_SUMMARY) -> str:
    """Summarize an alert's evidence on one line (``fragment from call-2: …; destination: …``)."""
    parts = []
    for item in alert.evidence:
        source = f" from {item.from_call}" if item.from_call else ""
        parts.append(f"{item.kind.value}{source}: {item.detail}")
    text = "; ".join(parts)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _Link:
    """What is kept of a span while it may still matter: its parent, its session, and its call."""

    __slots__ = (
        "call_id",
        "decided",
        "deferred_to",
        "explicit",
        "is_tool",
        "open",
        "parent",
        "pending",
        "session",
        "tool",
        "touched",
    )

    def __init__(self, parent: int | None, session: str, explicit: bool, is_tool: bool, touched: float) -> None:
        self.parent = parent
        self.session = session
        self.explicit = explicit  # named by attributes or baggage (its own or an ancestor's), not a fallback
        self.is_tool = is_tool
        self.open = True
        self.tool: str | None = None  # set once the span's call is known: late descendants are deduplicated
        self.call_id: str | None = None
        self.pending: list[tuple[str, SpanFacts]] | None = None  # descendant tool spans held until this ends
        self.deferred_to: _Link | None = None
        self.decided: str | None = None  # the call id check_tool_call decided for this span
        self.touched = touched


class _LiveSession:
    """The processor's side of one session: its lock, what was taken once, and the stamp for new spans."""

    __slots__ = ("alerts_seen", "closed", "decided", "lock", "stamp", "tool_lists", "touched", "user_texts")

    def __init__(self, touched: float) -> None:
        self.lock = threading.Lock()
        self.closed = False
        self.touched = touched
        self.stamp = _CLEAN_STAMP
        self.alerts_seen = 0
        self.user_texts: set[int] = set()
        self.tool_lists: set[tuple[str, int]] = set()
        self.decided: OrderedDict[Any, str] = OrderedDict()


@dataclass(slots=True)
class _Pending:
    """An alert to emit once the session lock is released."""

    alert: Alert
    session_id: str
    level: Level
    legs: tuple[Leg, ...]
    server: str | None
    tool: str | None
    decision: Decision | None


class TrifectaSpanProcessor(SpanProcessor):
    """An OpenTelemetry span processor that watches traced agent sessions for the lethal trifecta.

    ``monitor`` is the :class:`SessionMonitor` to feed (a new one with ``rules``, ``posture`` and ``policy``
    when None; give either a monitor or those). ``on_alert`` is called with a :class:`TrifectaAlert` for
    each alert. ``logger_provider`` receives one log record per alert (event name ``trifecta.alert``);
    ``meter_provider`` gets the counters :data:`METRIC_ALERTS`, :data:`METRIC_DECISIONS` and
    :data:`METRIC_INTERNAL_ERRORS`. ``max_spans``/``span_ttl`` and ``max_sessions``/``session_ttl`` bound
    what is kept (counts, and seconds since last use, on ``clock``). See the module documentation.
    """

    def __init__(
        self,
        monitor: SessionMonitor | None = None,
        *,
        rules: OverrideSource | None = None,
        posture: Posture | str | None = None,
        policy: Policy | None = None,
        on_alert: Callable[[TrifectaAlert], object] | None = None,
        logger_provider: LoggerProvider | None = None,
        meter_provider: MeterProvider | None = None,
        max_spans: int = 100_000,
        span_ttl: float = 3600.0,
        max_sessions: int = 10_000,
        session_ttl: float = 3600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if monitor is not None and (rules is not None or posture is not None or policy is not None):
            raise ValueError("give either a monitor or rules/posture/policy for a new one, not both")
        if max_spans < 1 or max_sessions < 1 or span_ttl <= 0 or session_ttl <= 0:
            raise ValueError("max_spans, max_sessions, span_ttl and session_ttl must be positive")
        if monitor is None:
            monitor = SessionMonitor(posture=posture or Posture.BALANCED, policy=policy, rules=rules)
        self.monitor = monitor
        self.on_alert = on_alert
        self.max_spans = max_spans
        self.span_ttl = span_ttl
        self.max_sessions = max_sessions
        self.session_ttl = session_ttl
        self._clock = clock
        self._links: OrderedDict[int, _Link] = OrderedDict()  # by last use
        self._links_lock = threading.Lock()
        self._sessions: OrderedDict[str, _LiveSession] = OrderedDict()  # by last activity
        self._sessions_lock = threading.Lock()
        self._local = threading.local()
        self._errors: Counter[str] = Counter()
        self._errors_lock = threading.Lock()
        self._engine_errors_seen = monitor.internal_errors
        self._shut_down = False
        self._next_sweep = clock() + session_ttl / 16
        self._logger: Logger | None = None
        if logger_provider is not None:
            self._logger = logger_provider.get_logger(_SCOPE)
        self._alerts_counter: MetricCounter | None = None
        self._decisions_counter: MetricCounter | None = None
        self._errors_counter: MetricCounter | None = None
        if meter_provider is not None:
            meter = meter_provider.get_meter(_SCOPE)
            self._alerts_counter = meter.create_counter(METRIC_ALERTS, unit="{alert}", description="Alerts raised")
            self._decisions_counter = meter.create_counter(
                METRIC_DECISIONS, unit="{decision}", description="Tool calls decided"
            )
            self._errors_counter = meter.create_counter(
                METRIC_INTERNAL_ERRORS, unit="{error}", description="Internal failures of the trifecta monitor"
            )

    # -- SpanProcessor ------------------------------------------------------------------------------

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        """Link the span to its parent and session; stamp the session id, level and legs on it."""
        local = self._local
        if getattr(local, "busy", False) or self._shut_down:
            return
        local.busy = True
        try:
            self._start(span, parent_context)
        except Exception:
            self._fail("on_start")
        finally:
            local.busy = False

    def on_end(self, span: ReadableSpan) -> None:
        """Feed a tool span's call to the engine, or a chat span's user messages and tool definitions."""
        local = self._local
        if getattr(local, "busy", False) or self._shut_down:
            return
        local.busy = True
        try:
            self._end(span)
        except Exception:
            self._fail("on_end")
        finally:
            local.busy = False

    def shutdown(self) -> None:
        """Stop processing; end the sessions this processor held in the monitor and forget every link."""
        self._shut_down = True
        with self._sessions_lock:
            sessions = list(self._sessions.items())
            self._sessions.clear()
        with self._links_lock:
            self._links.clear()
        for session_id, live in sessions:
            with live.lock:
                live.closed = True
                self._end_in_monitor(session_id)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Return True: nothing is buffered for export."""
        return True

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
        ``tool``. When the call's tool span ends later, it is matched to this decision (by the span, the call
        id, or server, tool and arguments) and only its result is recorded. Never raises: on failure the
        answer is ``confirm`` with the reason ``monitor-error``.
        """
        local = self._local
        was_busy = getattr(local, "busy", False)
        local.busy = True
        try:
            return self._check(span_or_context, tool, arguments, server, call_id)
        except Exception:
            self._fail("check_tool_call")
            return decide_on_monitor_error(call_id)
        finally:
            local.busy = was_busy

    def end_session(self, session_id: str) -> SessionReport | None:
        """End a session now (in this processor and in the monitor); its final report, or None on failure."""
        try:
            with self._sessions_lock:
                live = self._sessions.pop(session_id, None)
            if live is None:
                return self.monitor.end_session(session_id)
            with live.lock:
                live.closed = True
                return self.monitor.end_session(session_id)
        except Exception:
            self._fail("end_session")
            return None

    # -- introspection ------------------------------------------------------------------------------

    @property
    def errors(self) -> dict[str, int]:
        """Internal failures so far, by kind (``on_start``, ``on_end``, ``engine``, ``emit_log``, …)."""
        self._sync_engine_errors()
        with self._errors_lock:
            return dict(self._errors)

    @property
    def internal_errors(self) -> int:
        """The number of internal failures so far (none of them reached the application)."""
        return sum(self.errors.values())

    @property
    def tracked_spans(self) -> int:
        """Span links held now."""
        return len(self._links)

    def list_sessions(self) -> list[str]:
        """List the ids of the sessions held now, least recently active first."""
        with self._sessions_lock:
            return list(self._sessions)

    # -- on_start -----------------------------------------------------------------------------------

    def _start(self, span: Span, parent_context: Context | None) -> None:
        attributes = span.attributes or {}
        parent = span.parent
        parent_id = parent.span_id if parent is not None and parent.span_id else None
        parent_link = self._links.get(parent_id) if parent_id is not None else None
        relevant = not _KEYS.isdisjoint(attributes)
        is_tool = relevant and is_tool_span(attributes)
        session = read_session_key(attributes) if relevant and not _SESSION_KEYSET.isdisjoint(attributes) else None
        explicit = session is not None
        if session is None:
            if parent_link is not None and parent_link.explicit:
                session, explicit = parent_link.session, True
            else:
                session = _read_baggage_session(parent_context)
                explicit = session is not None
                if session is None:
                    if parent_link is not None:
                        session = parent_link.session
                    elif relevant:  # a tool, chat or agent span: its trace is its session
                        session = _resolve_fallback_session(span)
                    else:
                        return  # not agent work: nothing to keep, nothing to stamp
        now = self._clock()
        link = _Link(parent_id, session, explicit, is_tool, now)
        context = span.get_span_context()
        links = self._links
        with self._links_lock:
            links[context.span_id] = link
            if parent_link is not None and parent_id is not None and parent_id in links:
                parent_link.touched = now
                links.move_to_end(parent_id)
            if len(links) > self.max_spans or next(iter(links.values())).touched < now - self.span_ttl:
                self._evict_links(now)
        live = self._sessions.get(session)
        level, legs = live.stamp if live is not None else _CLEAN_STAMP
        limit = getattr(getattr(span, "_limits", None), "max_span_attributes", None)
        if not isinstance(limit, int) or len(attributes) + _STAMPS <= limit:
            # A span at its attribute count limit would drop its oldest attributes for ours: it stays as it is.
            span.set_attributes({ATTR_SESSION_ID: session, ATTR_LEVEL: level, ATTR_LEGS: legs})
        if relevant and not is_tool and _has_any(attributes, _CHAT_KEYS):
            # User messages and tool definitions count from the moment the model call starts.
            self._observe_chat(span, session, context)

    def _evict_links(self, now: float) -> None:
        """Drop the least recently used links beyond the size bound, and some of those past their TTL."""
        links = self._links
        while len(links) > self.max_spans:
            links.popitem(last=False)
        cutoff = now - self.span_ttl
        for _ in range(_TTL_SWEEP):
            if not links:
                break
            span_id, link = next(iter(links.items()))
            if link.touched >= cutoff:
                break
            del links[span_id]

    # -- on_end -------------------------------------------------------------------------------------

    def _end(self, span: ReadableSpan) -> None:
        attributes = span.attributes or {}
        context = span.get_span_context()
        if context is None:
            return
        link = self._links.get(context.span_id)
        if link is None and _KEYS.isdisjoint(attributes):
            return  # not agent work
        pending: list[tuple[str, SpanFacts]] | None = None
        if link is not None:
            now = self._clock()
            with self._links_lock:
                link.open = False
                pending, link.pending = link.pending, None
                link.touched = now
                if context.span_id in self._links:
                    self._links.move_to_end(context.span_id)
        if is_tool_span(attributes):
            self._end_tool(span, context, link, pending)
        elif pending:  # a span that looked like a tool span when it started, and no longer does
            self._assemble(context, dict(pending), linked=True)
        elif _has_any(attributes, _CHAT_KEYS):
            session = link.session if link is not None else self._resolve_session_at_end(span, attributes)
            self._observe_chat(span, session, context)

    def _end_tool(
        self,
        span: ReadableSpan,
        context: SpanContext,
        link: _Link | None,
        pending: list[tuple[str, SpanFacts]] | None,
    ) -> None:
        facts = extract_span_facts(convert_readable_span(span), self._get_cache())
        if facts.session_key is None:
            facts.session_key = (
                link.session if link is not None else self._resolve_session_at_end(span, span.attributes)
            )
        tool = facts.tool
        ancestor = self._find_tool_ancestor(link.parent if link is not None else _get_parent_id(span))
        if ancestor is not None and tool is not None:
            # Held until the outermost tool span of the call ends: one logical call, several spans.
            with self._links_lock:
                target = ancestor if ancestor.open else ancestor.deferred_to
                if target is not None and target.open:
                    if target.pending is None:
                        target.pending = []
                    target.pending.append((facts.span_id, facts))
                    if pending:
                        target.pending.extend(pending)
                    if link is not None:
                        link.tool, link.call_id, link.deferred_to = tool.tool, tool.call_id, target
                    return
        spans = {facts.span_id: facts}
        if pending:
            spans.update(pending)
        # Alone, without a tool span above it, nothing linked can change how it merges: skip the lookups.
        self._assemble(context, spans, linked=ancestor is not None or bool(pending))

    def _find_tool_ancestor(self, parent_id: int | None) -> _Link | None:
        """The nearest ancestor that is a tool span, among the spans still linked."""
        current = parent_id
        for _ in range(_MAX_DEPTH):
            if current is None:
                return None
            link = self._links.get(current)
            if link is None:
                return None
            if link.is_tool:
                return link
            current = link.parent
        return None

    def _assemble(self, context: SpanContext, spans: dict[str, SpanFacts], linked: bool) -> None:
        """Merge the spans of one call (as the OTLP reader does) and feed the result to the engine.

        ``linked``: look up spans outside ``spans`` (a tool span above may have emitted this call already).
        Every span given has its session key set, so sessions never need the lookups.
        """
        known = self._find_link if linked else _find_no_link
        assembly = assemble_trace(format(context.trace_id, "032x"), spans, known)
        decided: dict[str, str] = {}
        links = self._links
        for span_hex, span_link in assembly.links.items():
            own = links.get(int(span_hex, 16))
            if own is not None:
                if span_link.tool is not None:
                    own.tool, own.call_id = span_link.tool, span_link.call_id
                if own.decided is not None and span_link.call_id is not None:
                    decided[span_link.call_id] = own.decided
        self._feed(assembly.items, context, decided)

    def _find_link(self, span_hex: str) -> SpanLink | None:
        """The link of a span outside the spans being assembled, for :func:`assemble_trace`."""
        link = self._links.get(int(span_hex, 16))
        if link is None:
            return None
        parent = format(link.parent, "016x") if link.parent is not None else None
        return SpanLink(parent, link.session, link.tool, link.call_id)

    def _observe_chat(self, span: ReadableSpan, session: str, context: SpanContext) -> None:
        facts = extract_span_facts(convert_readable_span(span), self._get_cache())
        if not facts.user_texts and not facts.tool_lists:
            return
        if facts.session_key is None:
            facts.session_key = session
        facts.parent_id = None  # read alone: its session is settled, and it is no call
        self._feed(assemble_trace(format(context.trace_id, "032x"), {facts.span_id: facts}).items, context, {})

    def _resolve_session_at_end(self, span: ReadableSpan, attributes: Mapping[str, Any] | None) -> str:
        """The session of a span that has no link (not agent work when it started, or its link expired)."""
        session = read_session_key(attributes or {})
        if session is not None:
            return session
        parent = self._links.get(_get_parent_id(span) or 0)
        return parent.session if parent is not None else _resolve_fallback_session(span)

    # -- the engine ---------------------------------------------------------------------------------

    def _feed(self, items: Iterable[TraceItem], context: SpanContext, decided: Mapping[str, str]) -> None:
        """Feed event items to the engine, session by session under its lock; then emit the new alerts."""
        by_session: dict[str, list[TraceItem]] = {}
        for item in items:
            by_session.setdefault(item.session_id, []).append(item)
        emitted: list[_Pending] = []
        for session_id, session_items in by_session.items():
            live = self._enter(session_id)
            try:
                emitted.extend(self._feed_session(live, session_id, session_items, decided))
            finally:
                live.lock.release()
        self._sync_engine_errors()
        self._evict_sessions()
        for pending in emitted:
            self._emit(pending, context)

    def _feed_session(
        self, live: _LiveSession, session_id: str, items: list[TraceItem], decided: Mapping[str, str]
    ) -> list[_Pending]:
        monitor = self.monitor
        decisions: dict[str, tuple[str, str, Decision | None]] = {}  # monitor call id -> server, tool, decision
        answer_as: dict[int, str] = {}  # id(MergedCall) -> the call id before_call was given
        requested: set[int] = set()
        for item in items:
            payload = item.payload
            if isinstance(payload, MergedCall):
                if id(payload) not in requested:  # a call comes before its result, in time order
                    requested.add(id(payload))
                    raw = decided.get(payload.call_id) or self._pop_predecided(live, payload)
                    if raw is None:
                        decision = monitor.before_call(
                            session_id, payload.server, payload.tool, payload.arguments, payload.call_id
                        )
                        decisions[decision.call_id] = (payload.server, payload.tool, decision)
                        if self._decisions_counter is not None:
                            self._decisions_counter.add(1, {ATTR_ACTION: decision.action.value})
                    else:
                        answer_as[id(payload)] = raw
                else:
                    raw = answer_as.get(id(payload), payload.call_id)
                    monitor.after_call(session_id, raw, payload.result, payload.is_error)
            elif isinstance(payload, str):
                key = hash(payload)
                if key not in live.user_texts:
                    _remember(live.user_texts, key)
                    monitor.observe_user_message(session_id, payload)
            else:
                server, tools = payload
                tools_key = (server, hash(orjson.dumps(tools, option=orjson.OPT_SORT_KEYS, default=str)))
                if tools_key not in live.tool_lists:
                    _remember(live.tool_lists, tools_key)
                    monitor.register_tools(session_id, server, list(tools))
        return self._collect(live, session_id, decisions)

    def _pop_predecided(self, live: _LiveSession, call: MergedCall) -> str | None:
        """The call id ``check_tool_call`` already decided this call under, if it did (and forget it)."""
        if not live.decided:
            return None
        raw = live.decided.pop(call.call_id, None)
        if raw is None:
            raw = live.decided.pop(_make_call_key(call.server, call.tool, call.arguments), None)
        return raw

    def _collect(
        self, live: _LiveSession, session_id: str, decisions: Mapping[str, tuple[str, str, Decision | None]]
    ) -> list[_Pending]:
        """Update the session's stamp and gather the alerts raised since the last look (under its lock)."""
        state = _read_engine_state(self.monitor, session_id)
        if state is None:
            return []
        legs = tuple(leg for leg in LEG_ORDER if leg in state.legs)
        live.stamp = (state.level.value, tuple(leg.value for leg in legs))
        alerts = state.alerts
        if len(alerts) <= live.alerts_seen:
            return []
        fresh = alerts[live.alerts_seen :]
        live.alerts_seen = len(alerts)
        out = []
        for alert in fresh:
            server = tool = None
            decision = None
            if alert.call_id is not None:
                known = decisions.get(alert.call_id)
                if known is not None:
                    server, tool, decision = known
                else:
                    for record in reversed(state.calls[-64:]):
                        if record.call_id == alert.call_id:
                            server, tool, decision = record.server, record.tool, record.decision
                            break
            out.append(_Pending(alert, session_id, state.level, legs, server, tool, decision))
        return out

    def _emit(self, pending: _Pending, context: SpanContext) -> None:
        """One log record, one counter increment and one callback per alert; each guarded on its own."""
        alert = pending.alert
        if self._logger is not None:
            try:
                attributes: dict[str, Any] = {
                    ATTR_ALERT_KIND: alert.kind.value,
                    ATTR_ALERT_SEVERITY: alert.severity.value,
                    ATTR_SESSION_ID: pending.session_id,
                    ATTR_LEVEL: pending.level.value,
                    ATTR_LEGS: [leg.value for leg in pending.legs],
                    ATTR_EVIDENCE: summarize_evidence(alert),
                    ATTR_ALERT_PATH: list(alert.path),
                }
                if alert.call_id is not None:
                    attributes[ATTR_CALL_ID] = alert.call_id
                if pending.tool is not None:
                    attributes[ATTR_TOOL] = pending.tool
                if pending.server is not None:
                    attributes[ATTR_SERVER] = pending.server
                if pending.decision is not None:
                    attributes[ATTR_ACTION] = pending.decision.action.value
                self._logger.emit(
                    timestamp=time.time_ns(),
                    context=trace_api.set_span_in_context(NonRecordingSpan(context)),
                    severity_number=_SEVERITY_NUMBER[alert.severity],
                    severity_text=alert.severity.value.upper(),
                    body=alert.message,
                    attributes=attributes,
                    event_name=ALERT_EVENT_NAME,
                )
            except Exception:
                self._fail("emit_log")
        if self._alerts_counter is not None:
            try:
                self._alerts_counter.add(
                    1, {ATTR_ALERT_KIND: alert.kind.value, ATTR_ALERT_SEVERITY: alert.severity.value}
                )
            except Exception:
                self._fail("metrics")
        if self.on_alert is not None:
            try:
                self.on_alert(
                    TrifectaAlert(
                        alert=alert,
                        session_id=pending.session_id,
                        level=pending.level,
                        legs=pending.legs,
                        server=pending.server,
                        tool=pending.tool,
                        decision=pending.decision,
                        trace_id=format(context.trace_id, "032x"),
                        span_id=format(context.span_id, "016x"),
                    )
                )
            except Exception:
                self._fail("on_alert")

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
        link = self._links.get(span_context.span_id) if span_context.is_valid else None
        session = link.session if link is not None else None
        if session is None:
            attributes = getattr(span, "attributes", None)
            session = read_session_key(attributes) if isinstance(attributes, Mapping) else None
        if session is None:
            session = _read_baggage_session(context)
        if session is None:
            parent = self._links.get(_get_parent_id(span) or 0)
            if parent is not None:
                session = parent.session
            elif span_context.is_valid:
                session = _resolve_fallback_session(span)
            else:
                session = "unknown"
        if server is None:
            split = split_mcp_name(tool)
            server, tool = split if split else (UNKNOWN_SERVER, tool)
        live = self._enter(session)
        try:
            decision = self.monitor.before_call(session, server, tool, arguments, call_id)
            raw = call_id or decision.call_id
            if link is not None and link.is_tool and link.open:
                link.decided = raw
            else:
                key: Any = call_id if call_id is not None else _make_call_key(server, tool, arguments)
                live.decided[key] = raw
                while len(live.decided) > _DECIDED_PER_SESSION:
                    live.decided.popitem(last=False)
            if self._decisions_counter is not None:
                self._decisions_counter.add(1, {ATTR_ACTION: decision.action.value})
            emitted = self._collect(live, session, {decision.call_id: (server, tool, decision)})
        finally:
            live.lock.release()
        self._sync_engine_errors()
        self._evict_sessions()
        for pending in emitted:
            self._emit(pending, span_context)
        return decision

    # -- sessions -----------------------------------------------------------------------------------

    def _enter(self, session_id: str) -> _LiveSession:
        """The session's live state, its lock held (the caller releases it)."""
        while True:
            now = self._clock()
            with self._sessions_lock:
                live = self._sessions.get(session_id)
                if live is None:
                    live = self._sessions[session_id] = _LiveSession(now)
                else:
                    self._sessions.move_to_end(session_id)
                live.touched = now
            live.lock.acquire()
            if not live.closed:
                return live
            live.lock.release()  # ended meanwhile: start it afresh

    def _evict_sessions(self) -> None:
        """End the least recently active sessions beyond ``max_sessions``, and those idle past ``session_ttl``.

        Idle sessions are looked for at most every ``session_ttl / 16`` seconds; the count bound is kept always.
        A session in use at that moment is active, so it is passed over.
        """
        sessions = self._sessions
        now = self._clock()
        if len(sessions) <= self.max_sessions and now < self._next_sweep:
            return
        self._next_sweep = now + self.session_ttl / 16
        cutoff = now - self.session_ttl
        for _ in range(len(sessions)):
            with self._sessions_lock:
                if not sessions:
                    return
                session_id, live = next(iter(sessions.items()))
                if len(sessions) <= self.max_sessions and live.touched >= cutoff:
                    return
                if not live.lock.acquire(blocking=False):
                    live.touched = now
                    sessions.move_to_end(session_id)
                    continue
                del sessions[session_id]
            try:
                live.closed = True
                self._end_in_monitor(session_id)
            finally:
                live.lock.release()

    def _end_in_monitor(self, session_id: str) -> None:
        try:
            self.monitor.end_session(session_id)
        except Exception:
            self._fail("end_session")

    # -- failures -----------------------------------------------------------------------------------

    def _get_cache(self) -> ParseCache:
        cache: ParseCache | None = getattr(self._local, "cache", None)
        if cache is None:
            cache = self._local.cache = ParseCache()
        return cache

    def _fail(self, kind: str) -> None:
        """Count a failure; log it (with its traceback) the first time this kind happens."""
        try:
            with self._errors_lock:
                first = kind not in self._errors
                self._errors[kind] += 1
            if self._errors_counter is not None:
                self._errors_counter.add(1, {ATTR_ERROR_KIND: kind})
            if first:
                logger.exception("trifecta-monitor: internal error in %s (further ones are only counted)", kind)
        except Exception:  # pragma: no cover - logging or metrics failing: nothing more to do
            pass

    def _sync_engine_errors(self) -> None:
        """Count the failures the engine caught and logged itself (SessionMonitor never raises)."""
        seen = self.monitor.internal_errors
        if seen == self._engine_errors_seen:
            return
        with self._errors_lock:
            new = self.monitor.internal_errors - self._engine_errors_seen
            if new <= 0:
                return
            self._engine_errors_seen += new
            first = "engine" not in self._errors
            self._errors["engine"] += new
        if self._errors_counter is not None:
            self._errors_counter.add(new, {ATTR_ERROR_KIND: "engine"})
        if first:
            logger.error("trifecta-monitor: the engine failed and answered 'confirm' (further failures are counted)")


# -- helpers -----------------------------------------------------------------------------------------


def _read_engine_state(monitor: SessionMonitor, session_id: str) -> SessionState | None:
    """The engine's state of a session, read in place: ``SessionMonitor.session`` would copy every call.

    Called with the session's lock held, so no other thread of this processor changes it meanwhile.
    """
    return monitor.live_state(session_id)


def _find_no_link(_span_hex: str) -> SpanLink | None:
    return None


def _has_any(attributes: Mapping[str, Any], keys: tuple[str, ...]) -> bool:
    return any(key in attributes for key in keys)


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


def _make_call_key(server: str, tool: str, arguments: Mapping[str, Any] | None) -> tuple[str, str, bytes]:
    return server, tool, orjson.dumps(arguments, option=orjson.OPT_SORT_KEYS, default=str)


def _remember(seen: set[Any], key: Any) -> None:
    if len(seen) >= _SEEN_PER_SESSION:
        seen.clear()
    seen.add(key)
