"""Offline analysis: feed a record stream through a :class:`SessionMonitor`, yield finished sessions."""

from __future__ import annotations

import gc
import logging
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from monitor.errors import describe_exception
from monitor.evidence import narrow_text_memos, widen_text_memos
from monitor.models import Event, Level, Record, RecordError, SessionEnd, SessionReport
from monitor.session import SessionMonitor

__all__ = ["AnalysisProgress", "analyze_records", "collect_for_batch"]

_MONITOR_LOGGER = "monitor"
_BATCH_THRESHOLDS = (50_000, 50, 100)
# Batches running at once on threads of one process (a Dask worker with several threads) share the settings.
_batch_lock = threading.Lock()
_batches = [0]
_saved: list[Any] = []


@dataclass
class AnalysisProgress:
    """Counters :func:`analyze_records` keeps up to date as it goes, for a progress display to read at its own pace
    (from another thread: each is a plain integer, written by the analysis only)."""

    records: int = 0
    """Records read (events, session ends and errors)."""
    sessions: int = 0
    """Sessions reported."""
    errors: int = 0
    """Errors yielded (rejected records, unreadable inputs, engine failures)."""


def analyze_records(
    records: Iterable[Record], monitor: SessionMonitor, progress: AnalysisProgress | None = None
) -> Iterator[SessionReport | RecordError]:
    """Replay records through ``monitor``; yield each session's report when it ends, and every error.

    A session is forgotten as soon as it is reported, so memory follows the sessions still open. When
    ``records`` is an :class:`~monitor.ingest.InputStream`, each report's ``source`` is the file its session's
    first record was read from (:attr:`~monitor.ingest.InputStream.current` at that moment). ``progress``, when
    given, is counted up as records are read and sessions and errors yielded.

    A failure of the engine on one session is that session's error, never hidden: a :class:`RecordError`
    naming the input being read (when ``records`` is a :class:`~monitor.ingest.InputStream`), the session,
    the event and the exception in one line, yielded once per session. The monitor answers such a call as
    it always does (``confirm``, reason ``monitor-error``), the session is still reported, and the other
    sessions go on. The monitor gives its failures as values (:meth:`SessionMonitor.take_failures`): this takes
    them, those waiting from before it started included (each was logged and counted when it happened); each
    traceback goes to the ``monitor`` logger's handlers, if any are configured.
    """
    counts = progress if progress is not None else AnalysisProgress()
    monitor.take_failures()  # failures from before this analysis are not its sessions'
    for item in _analyze(records, monitor, _Sources(records), counts):
        if isinstance(item, RecordError):
            counts.errors += 1
        else:
            counts.sessions += 1
        yield item


class _Sources:
    """The file each open session's first record was read from (forgotten when the session is reported)."""

    def __init__(self, records: Iterable[Record]) -> None:
        # An InputStream, or a wrapper of one that passes on its ``current`` file (the HTML report's recorder).
        self._stream = records
        self._first: dict[str, str] = {}

    def see(self, session_id: str) -> None:
        current = getattr(self._stream, "current", None)
        if isinstance(current, str) and current and session_id not in self._first:
            self._first[session_id] = current

    def stamp(self, report: SessionReport) -> SessionReport:
        source = self._first.pop(report.session_id, None)
        if report.source is not None or source is None:
            return report
        return report.model_copy(update={"source": source})


def _analyze(
    records: Iterable[Record],
    monitor: SessionMonitor,
    sources: _Sources,
    counts: AnalysisProgress,
) -> Iterator[SessionReport | RecordError]:
    failed: set[str] = set()
    unreported: set[str] = set()  # sessions whose end failed: reported once, never retried
    for record in records:
        counts.records += 1
        if isinstance(record, SessionEnd):
            sources.see(record.session_id)
            for item in _end(records, monitor, record.session_id, failed, unreported):
                yield item if isinstance(item, RecordError) else sources.stamp(item)
        elif isinstance(record, RecordError):
            yield record
        else:
            sources.see(record.session_id)
            monitor.observe(record)
            for failure in monitor.take_failures():
                if failure.session_id not in failed:
                    failed.add(failure.session_id)
                    yield _failure(record, failure.session_id, _describe(record), failure.error)
    for session_id in monitor.sessions():
        if session_id not in unreported:
            for item in _end(records, monitor, session_id, failed, unreported):
                yield item if isinstance(item, RecordError) else sources.stamp(item)


def _end(
    records: Iterable[Record], monitor: SessionMonitor, session_id: str, failed: set[str], unreported: set[str]
) -> Iterator[SessionReport | RecordError]:
    failed.discard(session_id)
    try:
        # A session the input named but never fed an event (an empty run) is reported empty and clean.
        held = monitor.has_session(session_id)
        report = monitor.end_session(session_id) if held else _empty_report(session_id)
    except Exception as exc:  # the end of a session is not guarded by the monitor itself
        unreported.add(session_id)
        logging.getLogger(_MONITOR_LOGGER).exception("trifecta-monitor internal error in end_session")
        where = getattr(records, "current", None) or "input"
        yield _failure(where, session_id, "its end (the session cannot be reported)", describe_exception(exc))
        return
    yield report


def _empty_report(session_id: str) -> SessionReport:
    return SessionReport(session_id=session_id, level=Level.CLEAN, legs=(), exposed=False, calls=(), alerts=())


def _failure(where: Event | str, session_id: str, what: str, error: str) -> RecordError:
    """The error of a session the engine failed on, named by the record it failed on (its ``source``, as the
    reader stamped it) or by the input being read."""
    source = where if isinstance(where, str) else where.source or "input"
    return RecordError(
        source=f"{source}: session {session_id}",
        message=f"the engine failed on {what}: {error}; judged without it (monitor-error)",
    )


def _describe(event: Event) -> str:
    call_id = getattr(event, "call_id", None)
    return f"its {event.kind} {call_id!r}" if call_id else f"its {event.kind}"


@contextmanager
def collect_for_batch() -> Iterator[None]:
    """Run a batch analysis with the cyclic garbage collector and the evidence memos set for it, and put them
    back afterwards.

    What is alive on entry (the rule packs, compiled patterns, imported modules) is moved out of the collector's
    sight (:func:`gc.freeze`), and a collection starts after 50,000 new container objects instead of 700: a batch
    makes and drops millions of short-lived values, which reference counting frees at once, and the collector's
    frequent passes over the same long-lived objects were a tenth of the run. Nothing an analysis decides depends
    on when the collector runs. The evidence memos keep four times their budget and texts up to 50,000 characters
    (:func:`monitor.evidence.widen_text_memos`): a corpus brings the same files and listings back in run after
    run, more of them than a long-running host's memos are sized for; their answers are the same either way. For
    command-line and worker processes, which own the interpreter; a host that embeds the library keeps its own
    settings.
    """
    with _batch_lock:
        _batches[0] += 1
        if _batches[0] == 1:  # the first batch of the process sets the collector; the last one out restores it
            _saved[:] = [gc.get_threshold(), gc.get_freeze_count()]
            gc.collect()
            gc.freeze()
            gc.set_threshold(*_BATCH_THRESHOLDS)
            widen_text_memos()
    try:
        yield
    finally:
        with _batch_lock:
            _batches[0] -= 1
            if _batches[0] == 0:
                thresholds, frozen = _saved
                narrow_text_memos()
                gc.set_threshold(*thresholds)
                if not frozen:  # what the caller froze itself stays frozen
                    gc.unfreeze()
