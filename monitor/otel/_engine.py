"""The engine side of the span processor: records of finished spans in, decisions, stamps and alerts out.

:class:`SpanEngine` runs on the worker (a thread, or a process of its own) and is fed, in order, the records
the processor writes on the application's threads (:mod:`monitor.otel._records`). It merges the spans of one
call exactly as the offline OTLP reader does (:func:`~monitor.spans.assemble_trace`), feeds the
:class:`SessionMonitor`, and sends back what the application side needs: the level and legs to stamp on new
spans, the alerts to emit, the decisions made, and the answers to requests: the alerts, decisions and reports
as objects, which only the engine process writes out (as JSON text, to cross its pipe). The monitor pushes
what it decides and raises to the engine, its :class:`~monitor.types.AlertSink`. It is single-threaded: only
the worker calls it. Its clock is the time the processor wrote into each record, so expiry follows the
application's clock whichever process the engine runs in.
"""

from __future__ import annotations

import traceback
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import orjson

from monitor.models import AlertRaised, CallDecided, Level, LevelChanged, SessionReport
from monitor.otel import _records as rec
from monitor.otel._config import ProcessorConfig
from monitor.otel._guardrail import make_guardrail_attributes, make_policy_id
from monitor.otel._names import format_legs, make_alert_attributes, make_decision_attributes
from monitor.session import SessionMonitor
from monitor.spans import (
    MergedCall,
    ParseCache,
    SpanFacts,
    SpanLink,
    SpanRecord,
    TraceItem,
    assemble_trace,
    extract_span_facts,
    is_tool_span,
)
from monitor.types import AlertSink

Send = Callable[[list[Any]], None]

_SEEN_PER_SESSION = 10_000  # user texts and tool lists remembered per session to take each once
_DECIDED_PER_SESSION = 256  # calls decided by check_tool_call and awaiting their span, per session
_TTL_SWEEP = 64  # expired span links dropped at most per record (the size bound is always kept)
MIN_SESSIONS = 64
"""Sessions an engine holds however short of memory it is (unless ``max_sessions`` is lower)."""


class _ToolLink:
    """A tool span the engine has heard of: open (a holder for the spans below it) or ended."""

    __slots__ = (
        "call_id",
        "decided",
        "deferred_to",
        "open",
        "pending",
        "session",
        "tool",
        "touched",
        "trace_id",
        "up",
    )

    def __init__(self, up: int, session: str, is_open: bool, touched: float) -> None:
        self.up = up  # the nearest tool span above it (0: none)
        self.session = session
        self.open = is_open
        self.tool: str | None = None
        self.call_id: str | None = None
        self.pending: list[tuple[str, SpanFacts]] | None = None  # tool spans below, held until this ends
        self.deferred_to: _ToolLink | None = None
        self.decided: str | None = None  # the call id check_tool_call decided for this span
        self.touched = touched
        self.trace_id = ""

    def hold(self, trace_id: str, spans: list[tuple[str, SpanFacts]]) -> None:
        """Hold tool spans below this open one until it ends: one logical call, several spans."""
        if self.pending is None:
            self.pending = []
        self.trace_id = trace_id
        self.pending.extend(spans)


class _Session:
    """The engine's bookkeeping for one session, besides the monitor's own state."""

    __slots__ = ("decided", "gaps", "stamp", "tool_lists", "touched", "user_texts")

    def __init__(self, touched: float) -> None:
        self.touched = touched
        self.stamp: tuple[str, str] = (Level.CLEAN.value, "")
        self.gaps = 0
        self.user_texts: set[int] = set()
        self.tool_lists: set[tuple[str, int]] = set()
        self.decided: OrderedDict[Any, str] = OrderedDict()


class _Links:
    """The tool spans the engine has heard of, by last use, within ``max_spans`` and ``span_ttl``; the spans held
    for a tool span dropped before it ended wait in ``orphans``, to be analysed as they are."""

    def __init__(self, config: ProcessorConfig) -> None:
        self._config = config
        self.by_id: OrderedDict[int, _ToolLink] = OrderedDict()
        self.orphans: list[tuple[str, list[tuple[str, SpanFacts]]]] = []

    def add(self, span_id: int, up: int, session: str, now: float, *, is_open: bool) -> _ToolLink:
        """Link a tool span (the most recently used), then drop the least recently used beyond the bounds."""
        link = self.by_id[span_id] = _ToolLink(up, session, is_open, now)
        links, max_spans = self.by_id, self._config.max_spans
        cutoff = now - self._config.span_ttl
        if len(links) > max_spans or next(iter(links.values())).touched < cutoff:
            swept = 0
            while links:
                first_id, first = next(iter(links.items()))
                if first is link:
                    break
                if len(links) <= max_spans and (first.touched >= cutoff or swept >= _TTL_SWEEP):
                    break
                del links[first_id]
                swept += 1
                if first.pending:  # spans held for a tool span that never ended: analysed as they are
                    self.orphans.append((first.trace_id, first.pending))
                    first.pending = None
        return link

    def touch(self, span_id: int, link: _ToolLink, now: float) -> None:
        link.touched = now
        if span_id in self.by_id:
            self.by_id.move_to_end(span_id)

    def find(self, span_hex: str) -> SpanLink | None:
        """The link of a span, as :func:`~monitor.spans.assemble_trace` reads it (None: not linked)."""
        link = self.by_id.get(int(span_hex, 16))
        if link is None:
            return None
        return SpanLink(format(link.up, "016x") if link.up else None, link.session, link.tool, link.call_id)


class SpanEngine:
    """Turns span records into monitor events, in record order; reports through ``send``. Never raises.

    ``config`` bounds the tool-span links it keeps (``max_spans``, ``span_ttl``) and its sessions
    (``max_sessions``, ``session_ttl``).
    """

    def __init__(self, monitor: SessionMonitor, send: Send, config: ProcessorConfig) -> None:
        self.monitor = monitor
        self._send = send
        # The engine hears what the monitor decides and raises as its sink. A sink the monitor had is kept; an
        # engine that fed it before (the parent's, copied into a forked child) is replaced, not chained.
        previous = monitor.sink
        self._next_sink: AlertSink | None = previous._next_sink if isinstance(previous, SpanEngine) else previous
        monitor.sink = self
        self._levels: dict[str, tuple[str, str]] = {}
        self._fresh: list[AlertRaised] = []
        self._config = config
        self._links = _Links(config)
        self._sessions: OrderedDict[str, _Session] = OrderedDict()  # by last activity
        self._cache = ParseCache()
        self._now = 0.0
        self._next_sweep = 0.0
        self._engine_errors_seen = monitor.internal_errors
        self._errors_reported: set[str] = set()
        self._decided: Counter[str] = Counter()
        self._session_cap = config.max_sessions
        # With guardrail attributes: the decisions made since the last look, written once their span is known.
        made = config.monitor_config
        self._policy_id = make_policy_id(made.posture.value, made.policy) if config.guardrail_attributes else None
        self._fresh_decisions: list[CallDecided] = []

    # -- entry point --------------------------------------------------------------------------------

    def handle(self, record: list[Any]) -> None:
        """Handle one record; a failure, whatever it is (``SystemExit`` raised by a user's rules or sink
        included), is reported as an internal error of kind ``engine``, and the engine carries on."""
        try:
            kind = record[0]
            if kind == rec.END:
                self._now = max(self._now, record[rec.E_TIME])
                self._on_end(record)
            elif kind == rec.START:
                self._now = max(self._now, record[rec.S_TIME])
                self._on_chat_start(record)
            elif kind == rec.CHECK:
                self._now = max(self._now, record[rec.K_TIME])
                self._on_check(record)
            elif kind == rec.GAP:
                self._now = max(self._now, record[rec.G_TIME])
                self._on_gap(record[rec.G_SESSION], record[rec.G_COUNT])
            elif kind == rec.REQUEST:
                self._on_request(record)
            elif kind == rec.MARK:
                self._send([rec.OUT_ACK, record[rec.M_NUMBER]])
            else:
                raise ValueError(f"unknown record kind {kind!r}")
            while self._links.orphans:
                trace_id, held = self._links.orphans.pop()
                self._assemble(trace_id, dict(held), linked=True)
        except BaseException:
            self._report_error("engine", traceback.format_exc())
        self._sync_engine_errors()
        self._evict_sessions()

    def end_batch(self) -> None:
        """Send the counts of calls decided since the last batch (one message, not one per call)."""
        if self._decided:
            self._send([rec.OUT_DECISIONS, dict(self._decided)])
            self._decided.clear()

    def shed_sessions(self) -> int:
        """End the least recently active tenth of the sessions held (at least one), and hold at most as many as
        are left from then on, never fewer than :data:`MIN_SESSIONS` (the process's memory is over its bound);
        return how many it holds now."""
        held = len(self._sessions)
        floor = min(MIN_SESSIONS, self._config.max_sessions)
        self._session_cap = max(floor, min(self._session_cap, held - max(1, held // 10)))
        self._evict_sessions()
        return len(self._sessions)

    @property
    def session_cap(self) -> int:
        """The most sessions held: ``max_sessions``, or fewer once :meth:`shed_sessions` lowered it."""
        return self._session_cap

    @property
    def session_count(self) -> int:
        """Sessions held now."""
        return len(self._sessions)

    def close(self) -> None:
        """End every session held (the processor is shutting down)."""
        for session_id in list(self._sessions):
            self._end_session(session_id)

    # -- span records -------------------------------------------------------------------------------

    def _on_end(self, record: list[Any]) -> None:
        span_id = record[rec.E_SPAN]
        session = record[rec.E_SESSION]
        span_record = _read_end_record(record)
        attributes = span_record.attributes
        link = self._links.by_id.get(span_id)
        pending: list[tuple[str, SpanFacts]] | None = None
        if link is not None:
            link.open = False
            link.up = record[rec.E_UP]
            pending, link.pending = link.pending, None
            self._links.touch(span_id, link, self._now)
        if is_tool_span(attributes):
            facts = extract_span_facts(span_record, self._cache)
            if facts.session_key is None:
                facts.session_key = session
            self._end_tool(span_record, facts, link, record[rec.E_UP], pending)
        elif pending:  # a span that looked like a tool span when it started, and no longer does
            self._assemble(span_record.trace_id, dict(pending), linked=True)
        else:
            self._observe_chat(span_record, session)

    def _on_chat_start(self, record: list[Any]) -> None:
        self._observe_chat(_read_start_record(record), record[rec.S_SESSION])

    def _end_tool(
        self,
        record: SpanRecord,
        facts: SpanFacts,
        link: _ToolLink | None,
        up: int,
        pending: list[tuple[str, SpanFacts]] | None,
    ) -> None:
        tool = facts.tool
        assert tool is not None and facts.session_key is not None
        if link is None:
            link = self._links.add(int(facts.span_id, 16), up, facts.session_key, self._now, is_open=False)
        if up and tool is not None:
            # Held until the outermost tool span of the call ends: one logical call, several spans.
            ancestor = self._links.by_id.get(up)
            if ancestor is None:  # not ended yet (its end would have left a link): hold this span for it
                ancestor = self._links.add(up, 0, facts.session_key, self._now, is_open=True)
            if ancestor is not None:
                target = ancestor if ancestor.open else ancestor.deferred_to
                if target is not None and target.open:
                    target.hold(record.trace_id, [(facts.span_id, facts), *(pending or ())])
                    link.tool, link.call_id, link.deferred_to = tool.tool, tool.call_id, target
                    return
        spans = {facts.span_id: facts}
        if pending:
            spans.update(pending)
        # Alone, without a tool span above it, nothing linked can change how it merges: skip the lookups.
        self._assemble(record.trace_id, spans, linked=bool(up) or bool(pending))

    def _assemble(self, trace_id: str, spans: dict[str, SpanFacts], linked: bool) -> None:
        """Merge the spans of one call (as the OTLP reader does) and feed the result to the monitor."""
        assembly = assemble_trace(trace_id, spans, self._links.find if linked else _find_no_link)
        decided: dict[str, str] = {}
        for span_hex, span_link in assembly.links.items():
            own = self._links.by_id.get(int(span_hex, 16))
            if own is not None:
                if span_link.tool is not None:
                    own.tool, own.call_id = span_link.tool, span_link.call_id
                if own.decided is not None and span_link.call_id is not None:
                    decided[span_link.call_id] = own.decided
        trigger = _Trigger(trace_id, next(iter(spans)))  # the span whose end completed the call
        self._feed(assembly.items, trigger, decided)

    def _observe_chat(self, record: SpanRecord, session: str) -> None:
        facts = extract_span_facts(record, self._cache)
        if not facts.user_texts and not facts.tool_lists:
            return
        if facts.session_key is None:
            facts.session_key = session
        facts.parent_id = None  # read alone: its session is settled, and it is no call
        items = assemble_trace(record.trace_id, {facts.span_id: facts}).items
        self._feed(items, _Trigger(record.trace_id, facts.span_id), {})

    # -- the monitor --------------------------------------------------------------------------------

    def _feed(self, items: list[TraceItem], trigger: _Trigger, decided: Mapping[str, str]) -> None:
        by_session: dict[str, list[TraceItem]] = {}
        for item in items:
            by_session.setdefault(item.session_id, []).append(item)
        for session_id, session_items in by_session.items():
            live = self._enter(session_id)
            _feed_session(self.monitor, self._config.trusted_servers, live, session_id, session_items, decided)
            self._collect(live, session_id, trigger)

    def _collect(self, live: _Session, session_id: str, trigger: _Trigger) -> None:
        """Send the decisions made since the last look (as notices, with ``decision_notices``), the session's new
        stamp, if it changed, and the alerts the monitor raised since the last look."""
        decisions = self._fresh_decisions
        if decisions:
            self._fresh_decisions = []
            for decided in decisions if self._config.decision_notices else ():
                self._send([rec.OUT_DECIDED, decided])
        stamp = self._levels.get(session_id, live.stamp)
        if stamp != live.stamp:
            live.stamp = stamp
            self._send([rec.OUT_STAMP, session_id, stamp[0], stamp[1]])
        if not self._fresh and not decisions:
            return
        fresh, self._fresh = self._fresh, []
        for message in _make_alert_messages(trigger, stamp, decisions, fresh, self._policy_id):
            self._send(message)

    # -- the monitor's sink -------------------------------------------------------------------------

    def on_decision(self, notice: CallDecided) -> None:
        """Count the decision (sent in one message per batch)."""
        self._decided[notice.decision.action.value] += 1
        if self._policy_id is not None or self._config.decision_notices:
            self._fresh_decisions.append(notice)
        if self._next_sink is not None:
            self._tell_next(self._next_sink.on_decision, notice)

    def on_alert(self, notice: AlertRaised) -> None:
        """Keep the alert until the span that triggered it is known."""
        self._fresh.append(notice)
        if self._next_sink is not None:
            self._tell_next(self._next_sink.on_alert, notice)

    def on_level(self, notice: LevelChanged) -> None:
        """Keep the session's level and legs, stamped on its next spans."""
        self._levels[notice.session_id] = (notice.level.value, format_legs(notice.legs))
        if self._next_sink is not None:
            self._tell_next(self._next_sink.on_level, notice)

    def _tell_next(self, method: Callable[[Any], object], notice: object) -> None:
        """Hand a notice to the monitor's own sink (the application's); whatever it raises, ``SystemExit`` and
        ``KeyboardInterrupt`` included, is counted as ``sink`` and the engine carries on."""
        try:
            method(notice)
        except BaseException:
            self._report_error("sink", traceback.format_exc())

    # -- requests -----------------------------------------------------------------------------------

    def _on_check(self, record: list[Any]) -> None:
        request = record[rec.K_REQUEST]
        session = record[rec.K_SESSION]
        span_id = record[rec.K_SPAN]
        server, tool, arguments, call_id = (
            record[rec.K_SERVER],
            record[rec.K_TOOL],
            record[rec.K_ARGUMENTS],
            record[rec.K_CALL_ID],
        )
        live = self._enter(session)
        decision = self.monitor.before_call(session, server, tool, arguments, call_id)
        raw = call_id or decision.call_id
        if span_id:
            link = self._links.by_id.get(span_id)
            if link is None:
                link = self._links.add(span_id, record[rec.K_UP], session, self._now, is_open=True)
            link.decided = raw
        else:
            key: Any = call_id if call_id is not None else rec.make_call_key(server, tool, arguments)
            live.decided[key] = raw
            while len(live.decided) > _DECIDED_PER_SESSION:
                live.decided.popitem(last=False)
        trace_hi, trace_lo = record[rec.K_TRACE_HI], record[rec.K_TRACE_LO]
        trigger = _Trigger(f"{trace_hi:016x}{trace_lo:016x}", f"{record[rec.K_TRIGGER]:016x}")
        self._collect(live, session, trigger)
        self.end_batch()
        self._send([rec.OUT_REPLY, request, decision])

    def _on_gap(self, session: str, count: int) -> None:
        """Spans of this session were dropped before they reached the engine: say so in the session."""
        live = self._enter(session)
        live.gaps += count
        self.monitor.report_gap(
            session,
            f"{count} span(s) of this session were not analysed: the queue to the engine was full "
            f"({live.gaps} in all); the session's level may be understated",
        )
        self._collect(live, session, _Trigger("0" * 32, ""))

    def _on_request(self, record: list[Any]) -> None:
        request, what, argument = record[rec.Q_REQUEST], record[rec.Q_WHAT], record[rec.Q_ARGUMENT]
        answer: Any = None
        if what == rec.ASK_SESSION:
            if argument in self._sessions or self.monitor.has_session(argument):
                answer = self.monitor.session(argument)
        elif what == rec.ASK_END:
            if argument in self._sessions or self.monitor.has_session(argument):
                answer = self._end_session(argument)
        elif what == rec.ASK_LIST:
            answer = list(self._sessions)
        elif what == rec.ASK_CLOSE:
            self.close()
        elif what != rec.ASK_FLUSH:
            raise ValueError(f"unknown request {what!r}")
        self.end_batch()
        self._send([rec.OUT_REPLY, request, answer])

    # -- bookkeeping --------------------------------------------------------------------------------

    def _enter(self, session_id: str) -> _Session:
        live = self._sessions.get(session_id)
        if live is None:
            live = self._sessions[session_id] = _Session(self._now)
        else:
            self._sessions.move_to_end(session_id)
            live.touched = self._now
        return live

    def _end_session(self, session_id: str) -> SessionReport:
        live = self._sessions.pop(session_id, None)
        report = self.monitor.end_session(session_id)
        if self._fresh:  # raised as the session ended (its evidence was truncated): reported, not lost
            self._collect(live or _Session(self._now), session_id, _Trigger("0" * 32, ""))
        self._levels.pop(session_id, None)
        self._send([rec.OUT_ENDED, session_id])
        return report

    def _evict_sessions(self) -> None:
        """End the least recently active sessions beyond ``max_sessions`` (or the lower cap :meth:`shed_sessions`
        set), and those idle past ``session_ttl``."""
        sessions, max_sessions, ttl = self._sessions, self._session_cap, self._config.session_ttl
        if len(sessions) <= max_sessions and self._now < self._next_sweep:
            return
        self._next_sweep = self._now + ttl / 16
        cutoff = self._now - ttl
        while sessions:
            session_id, live = next(iter(sessions.items()))
            if len(sessions) <= max_sessions and live.touched >= cutoff:
                return
            self._end_session(session_id)

    def _report_error(self, kind: str, text: str, count: int = 1) -> None:
        first = kind not in self._errors_reported
        self._errors_reported.add(kind)
        self._send([rec.OUT_ERROR, kind, count, text if first else ""])

    def _sync_engine_errors(self) -> None:
        """Report the failures the monitor caught itself (it never raises): how many, and the first one's."""
        new = self.monitor.internal_errors - self._engine_errors_seen
        if new > 0:
            self._engine_errors_seen += new
            failed = self.monitor.take_failures()
            said = f" (in {failed[0].operation}: {failed[0].error})" if failed else ""
            self._report_error("monitor", f"the monitor failed and answered 'confirm'{said}", new)

    @property
    def tracked_spans(self) -> int:
        """Tool-span links held now."""
        return len(self._links.by_id)


class _Trigger:
    """The span an alert is reported against."""

    __slots__ = ("span_hex", "trace_id")

    def __init__(self, trace_id: str, span_hex: str) -> None:
        self.trace_id = trace_id
        self.span_hex = span_hex


def _read_end_record(record: list[Any]) -> SpanRecord:
    """The span record of an ``END`` record."""
    return rec.make_span_record(
        record[rec.E_TRACE_HI],
        record[rec.E_TRACE_LO],
        record[rec.E_SPAN],
        record[rec.E_UP],
        record[rec.E_NAME],
        record[rec.E_START],
        record[rec.E_END_NS],
        record[rec.E_ATTRIBUTES],
        record[rec.E_STATUS],
    )


def _read_start_record(record: list[Any]) -> SpanRecord:
    """The span record of a chat span's ``START`` record (no parent, no end, no status yet)."""
    return rec.make_span_record(
        record[rec.S_TRACE_HI],
        record[rec.S_TRACE_LO],
        record[rec.S_SPAN],
        0,
        record[rec.S_NAME],
        record[rec.S_START],
        None,
        record[rec.S_ATTRIBUTES],
        0,
    )


def _feed_session(
    monitor: SessionMonitor,
    trusted_servers: frozenset[str],
    live: _Session,
    session_id: str,
    items: list[TraceItem],
    decided: Mapping[str, str],
) -> None:
    """Feed one session's items to the monitor: each call once (unless ``check_tool_call`` decided it already),
    then its result; each user text and tool list once."""
    answer_as: dict[int, str] = {}  # id(MergedCall) -> the call id before_call was given
    requested: set[int] = set()
    for item in items:
        payload = item.payload
        if isinstance(payload, MergedCall):
            if id(payload) not in requested:  # a call comes before its result, in time order
                requested.add(id(payload))
                raw = decided.get(payload.call_id) or _pop_predecided(live, payload)
                if raw is None:
                    monitor.before_call(session_id, payload.server, payload.tool, payload.arguments, payload.call_id)
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
                monitor.register_tools(session_id, server, list(tools), server in trusted_servers)


def _pop_predecided(live: _Session, call: MergedCall) -> str | None:
    """The call id ``check_tool_call`` already decided this call under, if it did (and forget it)."""
    if not live.decided:
        return None
    raw = live.decided.pop(call.call_id, None)
    if raw is None:
        raw = live.decided.pop(rec.make_call_key(call.server, call.tool, call.arguments), None)
    return raw


def _make_alert_messages(
    trigger: _Trigger,
    stamp: tuple[str, str],
    decisions: list[CallDecided],
    fresh: list[AlertRaised],
    policy_id: str | None,
) -> Iterator[list[Any]]:
    """The messages for the application side: each decision as guardrail attributes (with a ``policy_id``),
    then each alert, against the span that triggered them."""
    trace_hi, trace_lo = _split_trace(trigger.trace_id)
    span_id = int(trigger.span_hex, 16) if trigger.span_hex else 0
    if policy_id is not None:
        for decided in decisions:
            attributes = make_decision_attributes(decided)
            attributes.update(make_guardrail_attributes(decided.decision, policy_id))
            message = f"{decided.decision.action.value} {decided.server}/{decided.tool}"
            yield [rec.OUT_GUARDRAIL, trace_hi, trace_lo, span_id, attributes, message]
    for notice in fresh:
        attributes = make_alert_attributes(notice, *stamp)
        if policy_id is not None and notice.decision is not None:
            attributes.update(make_guardrail_attributes(notice.decision, policy_id))
        yield [rec.OUT_ALERT, trace_hi, trace_lo, span_id, attributes, notice.alert.message, notice]


def _split_trace(trace_id: str) -> tuple[int, int]:
    return int(trace_id[:16], 16), int(trace_id[16:], 16)


def _find_no_link(_span_hex: str) -> SpanLink | None:
    return None


def _remember(seen: set[Any], key: Any) -> None:
    if len(seen) >= _SEEN_PER_SESSION:
        seen.clear()
    seen.add(key)
