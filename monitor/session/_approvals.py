"""Approvals on record for the ``reviewed-only`` policy: per session, keyed by server, tool and arguments hash.

A host records an approval when the user approved a write (:meth:`monitor.SessionMonitor.approve`); the next
call of that tool with the same arguments uses it. An approval is single use unless recorded as reusable. The
store is bounded (the oldest approvals go first) and safe to share between threads. Approvals never lower a
session's level: they only answer the ``approval-required`` rule.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import threading
from collections import OrderedDict
from typing import Any

_UNHASHABLE = itertools.count()

MAX_APPROVALS = 1024
"""The most approvals one session keeps; recording one more forgets the oldest."""


def hash_arguments(arguments: Any) -> str:
    """Return the sha256 of the arguments' canonical JSON (keys sorted, no spaces, UTF-8). Values JSON cannot
    hold are written as their ``str``; arguments too deep to write get a hash that matches nothing else."""
    try:
        text = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    except (ValueError, TypeError, RecursionError):
        return f"unhashable:{next(_UNHASHABLE)}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class ApprovalStore:
    """The approvals on record in one session (thread-safe, bounded by ``limit``)."""

    def __init__(self, limit: int = MAX_APPROVALS) -> None:
        self.limit = max(1, limit)
        self._lock = threading.Lock()
        # (server, tool, arguments hash) -> reusable
        self._approvals: OrderedDict[tuple[str, str, str], bool] = OrderedDict()

    def add(self, server: str, tool: str, arguments: Any, reusable: bool = False) -> None:
        """Record an approval of ``tool`` on ``server`` with exactly these arguments."""
        key = (server, tool, hash_arguments(arguments))
        with self._lock:
            self._approvals[key] = bool(reusable) or self._approvals.get(key, False)
            self._approvals.move_to_end(key)
            while len(self._approvals) > self.limit:
                self._approvals.popitem(last=False)

    def covers(self, server: str, tool: str, arguments_hash: str) -> bool:
        """Return whether an approval of this call is on record (it stays: :meth:`use` uses it)."""
        with self._lock:
            return (server, tool, arguments_hash) in self._approvals

    def use(self, server: str, tool: str, arguments_hash: str) -> bool:
        """Use the approval of this call if one is on record (a single-use one is then gone); return whether
        there was one."""
        key = (server, tool, arguments_hash)
        with self._lock:
            reusable = self._approvals.get(key)
            if reusable is None:
                return False
            if not reusable:
                del self._approvals[key]
            return True

    def __len__(self) -> int:
        """Return how many approvals are on record."""
        with self._lock:
            return len(self._approvals)
