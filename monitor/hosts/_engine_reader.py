"""The Claude Code reader, fed one hook payload at a time.

The hook engine keeps, per session, the state of the Claude Code reader
(:func:`monitor.ingest.read_claude_code_stream`) that turns payloads into events: which calls are open, which
answered, which ids it made up. The reader is a stream: it pulls lines from a file and yields records. Here the
"file" is a queue that each payload is pushed onto, followed by a marker line the reader rejects with a
:class:`~monitor.models.RecordError` naming that line; the records before the marker's error are the payload's,
and the reader stays suspended at that error until the next payload. So the engine reads each payload once,
with exactly the reader that ``trifecta analyze`` uses on the stored events, and never replays the session to
answer a call.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator

from monitor.ingest import read_claude_code_stream
from monitor.models import Record, RecordError

# A JSON object that is neither a transcript line nor a hook payload: the reader answers it with one error.
_MARKER = b'{"trifecta-monitor": "end of payload"}\n'
_NAME = "hook"


class _Lines:
    """The reader's input: the lines pushed so far (iterating an empty queue ends the stream)."""

    def __init__(self) -> None:
        self.queue: deque[bytes] = deque()

    def __iter__(self) -> Iterator[bytes]:
        return self

    def __next__(self) -> bytes:
        if not self.queue:
            raise StopIteration
        return self.queue.popleft()


class PayloadReader:
    """One session's Claude Code reader, fed a payload at a time (not thread-safe: the caller serialises)."""

    def __init__(self) -> None:
        self._lines = _Lines()
        self._stream = read_claude_code_stream(self._lines, _NAME)  # type: ignore[arg-type]
        self._lineno = 0

    def read_payload(self, payload: bytes) -> list[Record]:
        """Return the records of one payload (one JSON object, the bytes a hook received on stdin)."""
        line = payload.replace(b"\r", b" ").replace(b"\n", b" ")  # JSON allows whitespace only between tokens
        self._lines.queue.append(line + b"\n")
        self._lines.queue.append(_MARKER)
        self._lineno += 2
        marker = f"{_NAME}:{self._lineno}"
        records: list[Record] = []
        for record in self._stream:
            if isinstance(record, RecordError) and record.source == marker:
                return records
            records.append(record)
        raise RuntimeError("the Claude Code reader stopped before the end of the payload")  # pragma: no cover
