"""The native JSONL event format: one :data:`monitor.models.Event` per line."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import orjson
from pydantic import ValidationError

from monitor.ingest.records import RecordError, RecordStream, SessionEnd
from monitor.models.events import EVENT_ADAPTER

DEFAULT_MAX_OPEN_SESSIONS = 1000


def read_jsonl(path: Path, max_open_sessions: int = DEFAULT_MAX_OPEN_SESSIONS) -> RecordStream:
    """Stream the events of a native JSONL file.

    Sessions end at the end of the file, or earlier when more than ``max_open_sessions`` are interleaved
    (the least recently active one ends first). A session that reappears after it ended is reported and its
    later events are analysed as a new session of the same id.
    """
    with path.open("rb") as fh:
        yield from read_jsonl_stream(fh, str(path), max_open_sessions)


def read_jsonl_stream(fh: IO[bytes], name: str, max_open_sessions: int = DEFAULT_MAX_OPEN_SESSIONS) -> RecordStream:
    """Stream the events of native JSONL read from ``fh``; ``name`` names it in errors."""
    open_sessions: OrderedDict[str, int] = OrderedDict()
    ended: set[str] = set()
    for lineno, line in enumerate(fh, start=1):
        if not line.strip():
            continue
        source = f"{name}:{lineno}"
        try:
            event = EVENT_ADAPTER.validate_python(orjson.loads(line))
        except orjson.JSONDecodeError as exc:
            yield RecordError(source=source, message=f"not JSON: {exc}")
            continue
        except ValidationError as exc:
            yield RecordError(source=source, message=f"not a valid event: {_summarize(exc)}")
            continue
        sid = event.session_id
        if sid in ended and sid not in open_sessions:
            ended.discard(sid)
            yield RecordError(
                source=source,
                message=(
                    f"session {sid!r} continues after it was closed (more than {max_open_sessions} sessions "
                    "interleaved); its later events are analysed as a separate session"
                ),
            )
        open_sessions[sid] = lineno
        open_sessions.move_to_end(sid)
        if len(open_sessions) > max_open_sessions:
            oldest, _ = open_sessions.popitem(last=False)
            ended.add(oldest)
            yield SessionEnd(session_id=oldest)
        yield event
    yield from _end_all(open_sessions)


def _end_all(open_sessions: OrderedDict[str, int]) -> Iterator[SessionEnd]:
    for sid in open_sessions:
        yield SessionEnd(session_id=sid)


def _summarize(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        loc = ".".join(str(p) for p in err["loc"])
        parts.append(f"{loc}: {err['msg']}" if loc else err["msg"])
    more = len(exc.errors()) - 3
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")
