"""The table of sessions a monitor or a host holds: each session with its own lock, and a short registry lock that
guards only the table, so a session busy with a costly result never holds up another."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Generic, TypeVar

_V = TypeVar("_V")


@dataclass(eq=False)
class SessionSlot(Generic[_V]):
    """One session of a :class:`SessionTable`: its value, the lock that orders the operations on it, and whether
    it was taken out of the table (an operation that waited for the lock then works on the session made anew)."""

    session_id: str
    value: _V
    lock: threading.RLock = field(default_factory=threading.RLock)
    ended: bool = False


class SessionTable(Generic[_V]):
    """Sessions by id, each made by ``make`` on first use. Thread-safe: the registry lock is held only to look a
    session up, add or remove it; work on a session holds that session's lock (:meth:`hold`)."""

    def __init__(self, make: Callable[[str], _V]) -> None:
        self._make = make
        self._slots: dict[str, SessionSlot[_V]] = {}
        self._registry = threading.Lock()

    @contextmanager
    def hold(self, session_id: str) -> Iterator[SessionSlot[_V]]:
        """Hold the session's lock (the session made if the table has none) and give its slot; a session taken
        out while this waited is passed over for the one that replaces it."""
        while True:
            slot = self._slot(session_id)
            with slot.lock:
                if slot.ended:
                    continue
                yield slot
                return

    def find(self, session_id: str) -> SessionSlot[_V] | None:
        """Return the session's slot if the table holds it (nothing is made)."""
        with self._registry:
            return self._slots.get(session_id)

    def take(self, session_id: str) -> SessionSlot[_V] | None:
        """Take the session out of the table and mark it ended; return its slot (None when not held). Callers
        that work on its value afterwards hold its lock."""
        with self._registry:
            slot = self._slots.pop(session_id, None)
        if slot is not None:
            with slot.lock:
                slot.ended = True
        return slot

    def discard(self, slot: SessionSlot[_V]) -> None:
        """Take ``slot`` out of the table, if it is still the one held for its session, and mark it ended (the
        caller holds its lock)."""
        slot.ended = True
        with self._registry:
            if self._slots.get(slot.session_id) is slot:
                del self._slots[slot.session_id]

    def ids(self) -> list[str]:
        """Return the ids of the sessions held now."""
        with self._registry:
            return list(self._slots)

    def slots(self) -> list[SessionSlot[_V]]:
        """Return the slots of the sessions held now."""
        with self._registry:
            return list(self._slots.values())

    def __contains__(self, session_id: object) -> bool:
        with self._registry:
            return session_id in self._slots

    def __len__(self) -> int:
        with self._registry:
            return len(self._slots)

    def _slot(self, session_id: str) -> SessionSlot[_V]:
        with self._registry:
            slot = self._slots.get(session_id)
            if slot is None:
                slot = self._slots[session_id] = SessionSlot(session_id, self._make(session_id))
            return slot
