"""How far the engine has got with each session, so that a span is stamped with its session's level only when
that level is known.

Every record queued for a session (a chat span's start, a tool or chat span's end, a ``check_tool_call`` question)
takes the next number of one count, under the queue's lock, so that numbers follow the queue's order; the last
number of each session is kept. The delivery thread ends each batch with a mark (the last number queued), and a
question's reply acknowledges what was queued before it; the engine handles records in order and answers each mark
(:data:`~monitor.otel._records.OUT_ACK`) after the stamps that came of the records before it, so that once the
engine acknowledged a session's last number, the stamp the processor holds for the session is the level a
synchronous engine would give it (the engine analysed every span that ended before).

A span that starts before that is stamped :data:`PENDING` (and no legs). The span is watched while it is
recording: when the engine acknowledges the records it waited for and nothing else of its session was queued
since, the true level and legs replace ``pending`` (an ended span is never changed). A session some of whose
records never reached an engine (dropped from a full queue, or lost with an engine process that died) is
stamped :data:`UNKNOWN` until its engine ends it.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import weakref
from collections.abc import Callable, Iterable

from opentelemetry.attributes import BoundedAttributes
from opentelemetry.sdk.trace import Span

from monitor.otel._names import ATTR_LEGS, ATTR_LEVEL, LEVEL_PENDING, LEVEL_UNKNOWN

PENDING = LEVEL_PENDING
UNKNOWN = LEVEL_UNKNOWN
MAX_WATCHED = 4096
"""Pending spans watched at most at once (beyond that, a span stamped ``pending`` stays so)."""

_Watched = tuple[int, int, str, "weakref.ref[Span]"]


class EngineProgress:
    """The records queued for each session, the engine's acknowledgements, and the spans waiting for them.

    :meth:`note` runs under the delivery's queue lock; :meth:`acknowledge` on the thread that hears the engine;
    :meth:`find_wait` and :meth:`watch` on the application's threads. At most ``2 * max_sessions`` sessions
    are followed: when more are, the quarter seen first is forgotten, and a session not followed
    is known only once the engine acknowledged the last record of every session forgotten.
    """

    __slots__ = ("_floor", "_last", "_lock", "_lost", "_max", "_order", "_watched", "acked")

    def __init__(self, max_sessions: int) -> None:
        self._max = 2 * max_sessions
        self.clear()

    def clear(self) -> None:
        """Forget everything (at start, and in a forked child, where the lock is made anew)."""
        self._lock = threading.Lock()
        self.acked = 0
        """The last number the engine acknowledged: every record numbered up to it was handled."""
        self._last: dict[str, int] = {}
        self._floor = 0
        self._lost: dict[str, None] = {}
        self._watched: list[_Watched] = []
        self._order = itertools.count()

    # -- the queue ----------------------------------------------------------------------------------

    def note(self, session: str, number: int) -> None:
        """A record of the session was queued as ``number`` (under the queue's lock: numbers come in order)."""
        last = self._last
        last[session] = number
        if len(last) > self._max:
            acked = self.acked
            for forgotten, queued in list(itertools.islice(last.items(), len(last) // 4 + 1)):
                del last[forgotten]
                if queued > acked and queued > self._floor:
                    self._floor = queued

    def lose(self, sessions: Iterable[str]) -> None:
        """Records of these sessions never reach the engine: their stamps are unknown from now on."""
        with self._lock:  # called from the application's, the delivery and the reader threads
            lost = self._lost
            for session in sessions:
                lost[session] = None
            while len(lost) > self._max:
                del lost[next(iter(lost))]

    def find_in_flight(self) -> list[str]:
        """The sessions with records the engine has not acknowledged."""
        acked = self.acked
        return [session for session, number in list(self._last.items()) if number > acked]

    def forget_lost(self, session: str) -> None:
        """The engine ended the session: whatever comes of it next starts afresh."""
        with self._lock:
            self._lost.pop(session, None)

    # -- the application's threads --------------------------------------------------------------------

    def find_wait(self, session: str) -> int:
        """0 when the engine has acknowledged every record queued for the session (its stamp is known); else
        the number it must acknowledge first, or -1 when records of the session were lost."""
        acked = self.acked  # read first: the stamps read after it are at least as recent
        if self._lost and session in self._lost:
            return -1
        wait = self._last.get(session, self._floor)
        return 0 if wait <= acked else wait

    def watch(self, wait: int, session: str, span: Span) -> bool:
        """Watch a span stamped ``pending`` until the engine acknowledges ``wait``; False when it did already
        (or too many are watched): the caller decides again now."""
        with self._lock:
            if wait <= self.acked or len(self._watched) >= MAX_WATCHED:
                return False
            heapq.heappush(self._watched, (wait, next(self._order), session, weakref.ref(span)))
            return True

    # -- the engine's side ----------------------------------------------------------------------------

    def acknowledge(self, number: int, read_stamp: Callable[[str], tuple[str, str]]) -> None:
        """The engine handled every record numbered up to ``number`` (the stamps they gave are set): the watched
        spans that waited for it get their session's stamp, from ``read_stamp``, if still exact and recording."""
        ready: list[_Watched] = []
        with self._lock:  # with watch's check of ``acked``: a span is either not pushed or popped here
            if number <= self.acked:
                return
            self.acked = number
            watched = self._watched
            while watched and watched[0][0] <= number:
                ready.append(heapq.heappop(watched))
        for wait, _, session, ref in ready:
            span = ref()
            # Exact only if nothing of the session was queued after the span started (nor lost).
            if span is not None and self._last.get(session, self._floor) == wait and session not in self._lost:
                write_level(span, *read_stamp(session))


def write_level(span: Span, level: str, legs: str) -> None:
    """Replace a recording SDK span's ``pending`` level with ``level`` and ``legs`` (not an ended span, nor
    one without room for the legs)."""
    with span._lock:  # the SDK span's own lock, held by end() as it freezes the span
        if span._end_time is not None:
            return
        attributes = span._attributes
        if not isinstance(attributes, BoundedAttributes) or attributes.get(ATTR_LEVEL) != PENDING:
            return
        if ATTR_LEGS not in attributes and attributes.maxlen is not None and len(attributes) >= attributes.maxlen:
            return  # the legs would push out the span's oldest attribute: it stays pending
        attributes[ATTR_LEVEL] = level
        attributes[ATTR_LEGS] = legs
