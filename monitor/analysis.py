"""Offline analysis: feed a record stream through a :class:`SessionMonitor`, yield finished sessions."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from monitor.models import Record, RecordError, SessionEnd, SessionReport
from monitor.session import SessionMonitor

__all__ = ["analyze_records"]


def analyze_records(records: Iterable[Record], monitor: SessionMonitor) -> Iterator[SessionReport | RecordError]:
    """Replay records through ``monitor``; yield each session's report when it ends, and every error.

    A session is forgotten as soon as it is reported, so memory follows the sessions still open.
    """
    for record in records:
        if isinstance(record, SessionEnd):
            yield monitor.end_session(record.session_id)
        elif isinstance(record, RecordError):
            yield record
        else:
            monitor.observe(record)
    for session_id in monitor.sessions():
        yield monitor.end_session(session_id)
