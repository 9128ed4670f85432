"""Offline analysis: feed a record stream through a :class:`SessionMonitor`, yield finished sessions."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Iterator

from monitor.ingest import InputStream
from monitor.models import Event, Level, Record, RecordError, SessionEnd, SessionReport
from monitor.session import SessionMonitor

__all__ = ["analyze_records"]

_MONITOR_LOGGER = "monitor"


def analyze_records(records: Iterable[Record], monitor: SessionMonitor) -> Iterator[SessionReport | RecordError]:
    """Replay records through ``monitor``; yield each session's report when it ends, and every error.

    A session is forgotten as soon as it is reported, so memory follows the sessions still open.

    A failure of the engine on one session is that session's error, never hidden: a :class:`RecordError`
    naming the input being read (when ``records`` is a :class:`~monitor.ingest.InputStream`), the session,
    the event and the exception in one line, yielded once per session. The monitor answers such a call as
    it always does (``confirm``, reason ``monitor-error``), the session is still reported, and the other
    sessions go on. The traceback goes to the ``monitor`` logger's handlers, if any are configured; while
    this runs, a failure is not printed by Python's last-resort handler.
    """
    capture = _LastFailure()
    logger = logging.getLogger(_MONITOR_LOGGER)
    logger.addHandler(capture)
    try:
        yield from _analyze(records, monitor, capture)
    finally:
        logger.removeHandler(capture)


def _analyze(
    records: Iterable[Record], monitor: SessionMonitor, capture: _LastFailure
) -> Iterator[SessionReport | RecordError]:
    failed: set[str] = set()
    unreported: set[str] = set()  # sessions whose end failed: reported once, never retried
    for record in records:
        if isinstance(record, SessionEnd):
            yield from _end(records, monitor, record.session_id, failed, unreported)
        elif isinstance(record, RecordError):
            yield record
        else:
            before = monitor.internal_errors
            capture.last = None
            monitor.observe(record)
            if monitor.internal_errors > before and record.session_id not in failed:
                failed.add(record.session_id)
                yield _failure(records, record.session_id, _describe(record), capture.last)
    for session_id in monitor.sessions():
        if session_id not in unreported:
            yield from _end(records, monitor, session_id, failed, unreported)


def _end(
    records: Iterable[Record], monitor: SessionMonitor, session_id: str, failed: set[str], unreported: set[str]
) -> Iterator[SessionReport | RecordError]:
    failed.discard(session_id)
    try:
        # A session the input named but never fed an event (an empty run) is reported empty and clean.
        held = monitor.has_session(session_id)
        report = monitor.end_session(session_id) if held else _empty_report(session_id)
    except Exception as exc:  # the end of a session is not guarded by the monitor itself
        monitor.internal_errors += 1
        unreported.add(session_id)
        logging.getLogger(_MONITOR_LOGGER).exception("trifecta-monitor internal error in end_session")
        yield _failure(records, session_id, "its end (the session cannot be reported)", _one_line(exc))
        return
    yield report


def _empty_report(session_id: str) -> SessionReport:
    return SessionReport(session_id=session_id, level=Level.CLEAN, legs=(), exposed=False, calls=(), alerts=())


def _failure(records: Iterable[Record], session_id: str, what: str, error: str | None) -> RecordError:
    where = records.current if isinstance(records, InputStream) and records.current else "input"
    return RecordError(
        source=f"{where}: session {session_id}",
        message=f"the engine failed on {what}: {error or 'an internal error'}; judged without it (monitor-error)",
    )


def _describe(event: Event) -> str:
    call_id = getattr(event, "call_id", None)
    return f"its {event.kind} {call_id!r}" if call_id else f"its {event.kind}"


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    text = text if len(text) <= 200 else text[:199] + "…"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class _LastFailure(logging.Handler):
    """Keeps the exception of the last failure the monitor logged on this thread, in one line."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.thread = threading.get_ident()
        self.last: str | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread == self.thread and record.exc_info and record.exc_info[1] is not None:
            self.last = _one_line(record.exc_info[1])
