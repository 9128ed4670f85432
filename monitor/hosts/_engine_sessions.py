"""The hook engine's sessions: per Claude Code session, the reader's state, a :class:`SessionMonitor` session,
and what the engine answers for each event, with the store kept in step.

Per event, under the session's lock: the payload is read (incrementally, by the session's own reader), its
events go to :meth:`SessionMonitor.observe`, and the event, the decision of its call and the session's level are
appended to the store in one transaction; only then is the answer given. A session the engine has not held
since it started is first rebuilt from the store: its processed events replayed (no store writes), then its
unprocessed ones (appended by a hook that could not reach the engine) processed in order and marked. If the
store cannot be written, the in-memory session is dropped (rebuilt from the store on its next event) and the
call is asked about. ``SessionEnd`` forgets the in-memory session.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field

import orjson

from monitor.hosts._engine_files import follow_private_files
from monitor.hosts._engine_reader import PayloadReader
from monitor.models import (
    AlertRaised,
    CallDecided,
    Decision,
    LevelChanged,
    RecordError,
    SessionEnd,
    ToolCall,
)
from monitor.session import MonitorConfig, SessionMonitor, SessionSlot, SessionTable
from monitor.store import HookStore, StoredDecision

logger = logging.getLogger("monitor.hook")

PRE_TOOL_USE = "PreToolUse"
_SESSION_END = "SessionEnd"


@dataclass(frozen=True)
class Answer:
    """What the engine tells the client: the action for a ``PreToolUse`` (None for other events), its one-line
    reason, and whether the event is in the store now."""

    action: str | None
    message: str
    committed: bool

    def to_json(self) -> bytes:
        """The reply on the socket."""
        return orjson.dumps({"action": self.action, "message": self.message, "committed": self.committed})


@dataclass
class _Outcome:
    """What processing one payload gave: the decision of its call, and the answer."""

    decision: StoredDecision | None
    answer_action: str | None
    message: str


@dataclass
class _HookSession:
    """One session as the engine holds it (in a :class:`~monitor.session.SessionTable`, under its lock)."""

    session_id: str
    reader: PayloadReader = field(default_factory=PayloadReader)
    ready: bool = False
    tools: dict[str, str] = field(default_factory=dict)
    """The Claude Code tool name of each call (for the wording of evidence)."""
    decisions: dict[str, _Outcome] = field(default_factory=dict)
    """The outcome of each call, by call id (a repeated ``PreToolUse`` gets the same answer)."""


class _LevelSink:
    """Keeps the latest level of each session, as the monitor pushes it."""

    def __init__(self) -> None:
        self.levels: dict[str, str] = {}

    def on_decision(self, notice: CallDecided) -> None:
        """Decisions are read from ``observe`` itself."""

    def on_alert(self, notice: AlertRaised) -> None:
        """Alerts are in the stored events (``trifecta analyze`` reports them)."""

    def on_level(self, notice: LevelChanged) -> None:
        """Remember the session's level."""
        self.levels[notice.session_id] = notice.level.value


def payload_fields(payload: bytes) -> tuple[str | None, str]:
    """The payload's session id (None when it names none) and event name (``""`` when unreadable)."""
    try:
        obj = orjson.loads(payload)
    except orjson.JSONDecodeError:
        return None, ""
    if not isinstance(obj, dict):
        return None, ""
    sid = obj.get("session_id")
    event = obj.get("hook_event_name")
    return (sid if isinstance(sid, str) and sid else None), (event if isinstance(event, str) else "")


def looks_like_pre_tool_use(payload: bytes, event: str) -> bool:
    """Whether an answer is due: the event is a ``PreToolUse``, or an unreadable payload mentions one."""
    return event == PRE_TOOL_USE or (not event and b"PreToolUse" in payload)


class HookSessions:
    """The sessions of one engine; :meth:`handle` answers one event (thread-safe: each session has its lock)."""

    def __init__(self, monitor: SessionMonitor, sink: _LevelSink) -> None:
        self.monitor = monitor
        self.sink = sink
        self._sessions: SessionTable[_HookSession] = SessionTable(_HookSession)

    @classmethod
    def create(cls, config: MonitorConfig | None = None) -> HookSessions:
        """Sessions decided by a new :class:`SessionMonitor` made with ``config`` (the defaults when None)."""
        sink = _LevelSink()
        return cls(SessionMonitor(config, sink=sink), sink)

    def held(self) -> list[str]:
        """The sessions held in memory now."""
        return self._sessions.ids()

    def handle(self, store: HookStore, payload: bytes, received: float) -> Answer:
        """Process one hook payload and return the answer (never raises for what the payload holds)."""
        sid, event = payload_fields(payload)
        asks = looks_like_pre_tool_use(payload, event)
        if sid is None:
            logger.warning("a payload without a session_id (%d bytes) was not stored", len(payload))
            message = "trifecta-monitor could not check this call: the hook payload names no session"
            return Answer("confirm" if asks else None, message, committed=False)
        with self._sessions.hold(sid) as held:  # a session dropped while this waited is made anew
            return self._handle_in_slot(store, held, payload, event, received, asks)

    def _handle_in_slot(
        self, store: HookStore, held: SessionSlot[_HookSession], payload: bytes, event: str, received: float, asks: bool
    ) -> Answer:
        slot = held.value
        try:
            if not slot.ready:
                self._recover(store, slot)
            else:
                self._catch_up(store, slot)
        except Exception as exc:
            logger.exception("session %r could not be rebuilt from the store", slot.session_id)
            self._drop(held)
            message = (
                f"trifecta-monitor could not check this call: the session could not be read from the store ({exc})"
            )
            return Answer("confirm" if asks else None, message, committed=False)
        try:
            outcome = self._process(slot, payload, event)
            if event == PRE_TOOL_USE:
                follow_private_files(self.monitor, store, slot.session_id, payload)
            store.append(
                slot.session_id,
                event,
                payload.decode("utf-8", "replace"),
                received=received,
                processed=True,
                decision=outcome.decision,
                level=self._level(slot),
                ended=event == _SESSION_END,
            )
        except Exception as exc:
            logger.exception("an event of session %r could not be processed and stored", slot.session_id)
            self._drop(held)
            message = f"trifecta-monitor could not record this call, so it asks: {type(exc).__name__}: {exc}"
            return Answer("confirm" if asks else None, message, committed=False)
        if event == _SESSION_END:
            self._drop(held)
        action = outcome.answer_action if event == PRE_TOOL_USE else ("confirm" if asks else None)
        return Answer(action, outcome.message, committed=True)

    # -- the state of a session --------------------------------------------------------------------------

    def _drop(self, held: SessionSlot[_HookSession]) -> None:
        """Forget the session in memory (it is rebuilt from the store on its next event). Holds its lock."""
        self._sessions.discard(held)
        slot = held.value
        if self.monitor.has_session(slot.session_id):
            self.monitor.end_session(slot.session_id)
        self.sink.levels.pop(slot.session_id, None)

    def _level(self, slot: _HookSession) -> str:
        return self.sink.levels.get(slot.session_id, "clean")

    def _recover(self, store: HookStore, slot: _HookSession) -> None:
        """Rebuild the session from its stored events, then process those no engine processed yet."""
        if self.monitor.has_session(slot.session_id):
            self.monitor.end_session(slot.session_id)
        self.sink.levels.pop(slot.session_id, None)
        replayed = 0
        for stored in store.events(slot.session_id):
            if stored.processed:
                self._process(slot, stored.payload.encode("utf-8"), stored.event)
                replayed += 1
        if replayed:
            logger.info("session %r rebuilt from %d stored events", slot.session_id, replayed)
        slot.ready = True
        self._catch_up(store, slot)

    def _catch_up(self, store: HookStore, slot: _HookSession) -> None:
        """Process, in order, the session's events that a hook stored without the engine, and mark them."""
        pending = store.unprocessed(slot.session_id)
        if not pending:
            return
        decisions: list[StoredDecision] = []
        for stored in pending:
            outcome = self._process(slot, stored.payload.encode("utf-8"), stored.event)
            if outcome.decision is not None:
                decisions.append(dataclasses.replace(outcome.decision, seq=stored.seq))
        store.mark_processed([s.seq for s in pending], decisions, self._level(slot))
        logger.info("session %r: %d events stored without the engine processed", slot.session_id, len(pending))

    def _process(self, slot: _HookSession, payload: bytes, event: str) -> _Outcome:
        """Read one payload into the session and decide its call (no store access)."""
        records = slot.reader.read_payload(payload)
        decision: StoredDecision | None = None
        answer: tuple[str, str] | None = None
        problems: list[str] = []
        wanted = _tool_use_id(payload) if event == PRE_TOOL_USE else None
        for record in records:
            if isinstance(record, RecordError):
                problems.append(record.message)
                logger.warning("session %r: %s", slot.session_id, record.message)
                continue
            if isinstance(record, SessionEnd):
                continue
            result = self.monitor.observe(record)
            if isinstance(record, ToolCall) and result is not None:
                name = _claude_code_name(record)
                slot.tools[result.call_id] = name
                message = result.describe(name, slot.tools)
                decision = _stored(slot.session_id, result, name, message)
                outcome = _Outcome(decision, _answer_action(result), message)
                slot.decisions.setdefault(record.call_id or result.call_id, outcome)
                if wanted is None or record.call_id == wanted:
                    answer = (_answer_action(result), message)
        if answer is not None:
            return _Outcome(decision, *answer)
        if event == PRE_TOOL_USE and wanted is not None and wanted in slot.decisions:
            earlier = slot.decisions[wanted]  # the same call asked again: the same answer
            return _Outcome(None, earlier.answer_action, earlier.message)
        reason = "; ".join(problems) or "the payload holds no call"
        message = f"trifecta-monitor could not check this call: {reason}"
        return _Outcome(decision, "confirm", message)


def _answer_action(decision: Decision) -> str:
    """The action the client and the store are given: ``review`` is asked about as ``confirm`` is (its reason,
    ``tool-unreviewed``, stays in the decision's reasons)."""
    return decision.action.asked_as.value


def _tool_use_id(payload: bytes) -> str | None:
    try:
        obj = orjson.loads(payload)
    except orjson.JSONDecodeError:
        return None
    given = obj.get("tool_use_id") if isinstance(obj, dict) else None
    return given if isinstance(given, str) and given else None


def _claude_code_name(call: ToolCall) -> str:
    from monitor.models import CLAUDE_CODE_SERVER

    return call.tool if call.server == CLAUDE_CODE_SERVER else f"mcp__{call.server}__{call.tool}"


def _stored(sid: str, decision: Decision, tool: str, message: str) -> StoredDecision:
    return StoredDecision(
        seq=0,
        session_id=sid,
        call_id=decision.call_id,
        tool=tool,
        action=_answer_action(decision),
        level=decision.level.value,
        reasons=tuple(r.value for r in decision.reasons),
        message=message,
    )
