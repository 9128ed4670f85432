"""The span processor's internal failures: counted by kind, logged once per kind, never raised.

A failure is any exception, ``BaseException`` included: ``SystemExit`` or ``KeyboardInterrupt`` raised by a
user's callback on one of the processor's threads is counted like the rest, and the thread carries on.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections import Counter
from collections.abc import Callable

logger = logging.getLogger("monitor.otel")

CountMetric = Callable[[str, int], None]


class Failures:
    """Counts of internal failures by kind (``on_start``, ``on_end``, ``engine``, …), each kind logged the
    first time it happens; ``count_metric`` (the ``trifecta.internal_errors`` counter) is told every one."""

    def __init__(self, count_metric: CountMetric | None = None) -> None:
        self._counts: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._count_metric = count_metric

    def fail(self, kind: str) -> None:
        """Count a failure of this process; log it, with the traceback being handled, the first time this kind
        happens. Never raises."""
        try:
            if self._count(kind, 1):
                logger.exception("trifecta-monitor: internal error in %s (further ones are only counted)", kind)
        except BaseException:  # pragma: no cover - logging or metrics failing: nothing more to do
            pass

    def add(self, kind: str, count: int, text: str) -> None:
        """Count failures the engine caught; log ``text`` (their first traceback) the first time this kind
        happens. Never raises."""
        try:
            if self._count(kind, count) and text:
                logger.error(
                    "trifecta-monitor: internal error in the %s (further ones are only counted)\n%s", kind, text
                )
        except BaseException:  # pragma: no cover - logging or metrics failing: nothing more to do
            pass

    def read(self) -> dict[str, int]:
        """The failures so far, by kind."""
        with self._lock:
            return dict(self._counts)

    def after_fork(self) -> None:
        """In a forked child: a fresh lock (another thread of the parent may have held this one)."""
        self._lock = threading.Lock()

    def _count(self, kind: str, count: int) -> bool:
        with self._lock:
            first = kind not in self._counts
            self._counts[kind] += count
        if self._count_metric is not None:
            # The application's meter provider: its failure is not ours to count again.
            with contextlib.suppress(BaseException):
                self._count_metric(kind, count)
        return first
