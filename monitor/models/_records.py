"""What input adapters yield besides events: rejected records and the end of a session."""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import BaseModel, ConfigDict

from monitor.models._events import Event


class RecordError(BaseModel):
    """A record that could not be read, named by ``file:line`` or ``archive!entry``. The rest goes on."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str
    message: str


class SessionEnd(BaseModel):
    """No more events will come for this session from this input."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    session_id: str
    source: str | None = None
    """Where the reader ended the session, set by the reader: the input's name when the input ended, or the record
    (``file:line``, ``file#…``) whose arrival closed it (a bound on open sessions, an idle session); None for
    ends made in memory."""


Record = Event | RecordError | SessionEnd
"""One item of an adapter's stream."""

RecordStream = Iterator[Record]
