"""Spans as they arrive, in any order, buffered per trace and turned into session events.

A span alone does not say everything: its session may sit on an ancestor, and one logical call may be
several spans. :class:`SpanAssembler` keeps a small summary per span of each open trace, assembles a trace
(:func:`~monitor.spans.assemble_trace`) once it is complete or idle, and ends sessions once idle.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypedDict, Unpack

import orjson

from monitor.jsonrecords import flatten_json_text
from monitor.models import Event, Record, RecordError, SessionEnd, ToolCall, ToolResult, ToolsListed, UserMessage
from monitor.spans._assembly import MergedCall, SpanLink, TraceItem, assemble_trace
from monitor.spans._facts import ParseCache, SpanFacts, extract_span_facts
from monitor.spans._record import SpanRecord


@dataclass(slots=True)
class _OpenTrace:
    first_source: str
    first_clock: int
    last_clock: int
    spans: dict[str, SpanFacts] = field(default_factory=dict)
    own_sessions: set[str] = field(default_factory=set)
    complete: bool = False
    size: int = 0


@dataclass(slots=True)
class _OpenSession:
    first_clock: int
    last_active: int
    user_texts: set[str] = field(default_factory=set)
    tool_lists: set[tuple[str, int]] = field(default_factory=set)


DEFAULT_TRACE_IDLE_SPANS = 20_000
"""Spans after which a trace that got none of them is turned into events, root or not."""
DEFAULT_SESSION_IDLE_SPANS = 20_000
"""Spans after which a session that got no event from them ends."""
DEFAULT_MAX_BUFFERED_SPANS = 100_000
"""Span summaries buffered at most."""
DEFAULT_MAX_BUFFERED_BYTES = 32 * 2**20
"""About the most bytes of buffered content (arguments, results, user messages)."""
DEFAULT_REMEMBERED_SPANS = 100_000
"""Links of spans already turned into events that are kept for late children."""
_CLOSED_REMEMBERED = 10_000  # ended sessions remembered, to report one that gets events again


class AssemblerBounds(TypedDict, total=False):
    """The bounds of a :class:`SpanAssembler`, its keyword arguments; each one left out is its ``DEFAULT_*``."""

    trace_idle_spans: int
    session_idle_spans: int
    max_buffered_spans: int
    max_buffered_bytes: int
    remembered_spans: int


class SpanAssembler:
    """Buffer spans per trace as they arrive, in any order, and turn each finished trace into events.

    Time is counted in spans added (the *clock*), so the bounds hold whatever the timestamps say:

    - A trace is turned into events at the next :meth:`drain` after its root span (a span without a parent)
      was added; or once no span of it arrived for ``trace_idle_spans`` spans (a trace whose root is not in
      the input: a slice of a distributed trace); or, least recently active first, when more than
      ``max_buffered_spans`` spans, or span summaries of more than about ``max_buffered_bytes`` bytes (the
      text of arguments, results and user messages counted), are buffered. Only a :class:`SpanFacts` per
      span is buffered (ids, times, session key, and for tool and chat spans what they say), never the span.
    - A span that arrives after its trace was turned into events is assembled with the trace's links, kept
      for the last ``remembered_spans`` spans: it inherits its session and is dropped when it duplicates a
      call already emitted.
    - A session ends (:class:`SessionEnd`) once no buffered trace carries its key and no event went to it
      for ``session_idle_spans`` spans, and at :meth:`finish`. A session that gets events after it ended is
      reported and analysed as a new session of the same id.

    Within a session, a user message and a tool list are emitted once each, however many chat spans repeat
    them. Memory is bounded by the three limits (plus the ids of the last ended sessions), not by the input.
    The bounds are keyword arguments (:class:`AssemblerBounds`), each ``DEFAULT_*`` when left out.
    """

    def __init__(self, **bounds: Unpack[AssemblerBounds]) -> None:
        self.trace_idle_spans = bounds.get("trace_idle_spans", DEFAULT_TRACE_IDLE_SPANS)
        self.session_idle_spans = bounds.get("session_idle_spans", DEFAULT_SESSION_IDLE_SPANS)
        self.max_buffered_spans = bounds.get("max_buffered_spans", DEFAULT_MAX_BUFFERED_SPANS)
        self.max_buffered_bytes = bounds.get("max_buffered_bytes", DEFAULT_MAX_BUFFERED_BYTES)
        self.remembered_spans = bounds.get("remembered_spans", DEFAULT_REMEMBERED_SPANS)
        self._clock = 0
        self._last_source: str | None = None
        self._buffered = 0
        self._buffered_bytes = 0
        self._traces: OrderedDict[str, _OpenTrace] = OrderedDict()  # by last activity
        self._complete: deque[str] = deque()
        self._remembered: OrderedDict[str, dict[str, SpanLink]] = OrderedDict()
        self._remembered_count = 0
        self._pending_sessions: dict[str, int] = {}  # session key -> buffered traces carrying it
        self._sessions: OrderedDict[str, _OpenSession] = OrderedDict()  # by last activity
        self._closed: OrderedDict[str, None] = OrderedDict()
        self._cache = ParseCache()

    @property
    def buffered_spans(self) -> int:
        """Spans buffered now."""
        return self._buffered

    @property
    def buffered_bytes(self) -> int:
        """The rough size of what is buffered now (see :attr:`SpanFacts.size`)."""
        return self._buffered_bytes

    def add(self, record: SpanRecord, source: str) -> None:
        """Buffer one span; ``source`` (``file:line`` or ``file#<pointer>``) names where it came from, in its
        events and in later errors."""
        self._clock += 1
        self._last_source = source
        trace_id = record.trace_id
        trace = self._traces.get(trace_id)
        if trace is None:
            trace = self._traces[trace_id] = _OpenTrace(source, self._clock, self._clock)
        else:
            self._traces.move_to_end(trace_id)
            trace.last_clock = self._clock
        if record.span_id in trace.spans:
            return  # the same span exported twice
        remembered = self._remembered.get(trace_id)
        if remembered is not None and record.span_id in remembered:
            return
        facts = extract_span_facts(record, self._cache)
        facts.source = source
        trace.spans[record.span_id] = facts
        trace.size += facts.size
        self._buffered += 1
        self._buffered_bytes += facts.size
        for key in (facts.session_key, facts.protocol_session_key):  # a protocol session may be the trace's key
            if key is not None and key not in trace.own_sessions:
                trace.own_sessions.add(key)
                self._pending_sessions[key] = self._pending_sessions.get(key, 0) + 1
        if facts.parent_id is None and not trace.complete:
            trace.complete = True
            self._complete.append(trace_id)

    def drain(self) -> Iterator[Record]:
        """Events of the traces that are ready, and the ends of idle sessions. Call after each batch of spans."""
        while self._complete:
            trace_id = self._complete.popleft()
            trace = self._traces.pop(trace_id, None)
            if trace is not None:
                yield from self._flush(trace_id, trace)
        while self._traces:
            trace_id, trace = next(iter(self._traces.items()))
            if (
                self._clock - trace.last_clock <= self.trace_idle_spans
                and self._buffered <= self.max_buffered_spans
                and self._buffered_bytes <= self.max_buffered_bytes
            ):
                break
            del self._traces[trace_id]
            yield from self._flush(trace_id, trace)
        cutoff = self._clock - self.session_idle_spans
        idle = []
        for session_id, session in self._sessions.items():
            if session.last_active > cutoff:
                break
            if not self._pending_sessions.get(session_id):
                idle.append(session_id)
        for session_id in idle:
            yield from self._end_session(session_id)

    def finish(self, source: str | None = None) -> Iterator[Record]:
        """The end of the input (``source`` names it): every buffered trace becomes events and every session
        ends."""
        self._complete.clear()
        for trace_id, trace in sorted(self._traces.items(), key=lambda item: item[1].first_clock):
            yield from self._flush(trace_id, trace)
        self._traces.clear()
        for session_id in sorted(self._sessions, key=lambda s: self._sessions[s].first_clock):
            yield SessionEnd(session_id=session_id, source=source)
        self._sessions.clear()
        self._remembered.clear()
        self._remembered_count = 0

    def _end_session(self, session_id: str) -> Iterator[Record]:
        del self._sessions[session_id]
        self._closed[session_id] = None
        if len(self._closed) > _CLOSED_REMEMBERED:
            self._closed.popitem(last=False)
        yield SessionEnd(session_id=session_id, source=self._last_source)

    def _flush(self, trace_id: str, trace: _OpenTrace) -> Iterator[Record]:
        self._buffered -= len(trace.spans)
        self._buffered_bytes -= trace.size
        for key in trace.own_sessions:
            left = self._pending_sessions.get(key, 0) - 1
            if left > 0:
                self._pending_sessions[key] = left
            else:
                self._pending_sessions.pop(key, None)
        remembered = self._remembered.pop(trace_id, None)
        assembly = assemble_trace(trace_id, trace.spans, (remembered or {}).get)
        if remembered is None:
            remembered = {}
        else:
            self._remembered_count -= len(remembered)
        remembered.update(assembly.links)
        self._remembered[trace_id] = remembered
        self._remembered_count += len(remembered)
        while self._remembered_count > self.remembered_spans and len(self._remembered) > 1:
            _, dropped = self._remembered.popitem(last=False)
            self._remembered_count -= len(dropped)
        yield from self._emit(assembly.items, trace.first_source)

    def _emit(self, items: list[TraceItem], source: str) -> Iterator[Record]:
        by_session: dict[str, list[TraceItem]] = {}
        for item in items:
            by_session.setdefault(item.session_id, []).append(item)
        for session_id, session_items in by_session.items():
            session = self._sessions.get(session_id)
            if session is None:
                if session_id in self._closed:
                    del self._closed[session_id]
                    yield RecordError(
                        source=source,
                        message=(
                            f"session {session_id!r} continues after it ended (no event for more than "
                            f"{self.session_idle_spans} spans); its later events are analysed as a separate session"
                        ),
                    )
                session = self._sessions[session_id] = _OpenSession(self._clock, self._clock)
            for item in session_items:
                event = _build_event(item, session)
                if event is not None:
                    yield event
            session.last_active = self._clock
            self._sessions.move_to_end(session_id)


def _build_event(item: TraceItem, session: _OpenSession) -> Event | None:
    payload = item.payload
    time = _time(item.time_ns)
    if isinstance(payload, MergedCall):
        common: dict[str, Any] = {
            "session_id": item.session_id,
            "time": time,
            "call_id": payload.call_id,
            "source": item.source,
        }
        if item.starts_call:
            return ToolCall(**common, server=payload.server, tool=payload.tool, arguments=payload.arguments)
        return ToolResult(**common, result=payload.result, is_error=payload.is_error)
    if isinstance(payload, str):
        if payload in session.user_texts:
            return None
        session.user_texts.add(payload)
        return UserMessage(session_id=item.session_id, time=time, text=payload, source=item.source)
    server, tools = payload
    try:
        digest = hash(orjson.dumps(tools, option=orjson.OPT_SORT_KEYS, default=str))
    except TypeError:  # an integer beyond 64 bits, or nesting beyond orjson's limit: its text instead
        digest = hash(flatten_json_text(tools))
    key = (server, digest)
    if key in session.tool_lists:
        return None
    session.tool_lists.add(key)
    return ToolsListed(session_id=item.session_id, time=time, server=server, tools=list(tools), source=item.source)


def _time(ns: int) -> datetime | None:
    """A span time as a datetime; None when it is unset or outside what a datetime holds."""
    if ns <= 0:
        return None
    try:
        return datetime.fromtimestamp(ns / 1e9, tz=UTC)
    except (OverflowError, ValueError, OSError):
        return None
