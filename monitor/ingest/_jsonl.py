"""The native JSONL event format: one :data:`monitor.models.Event` per line."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import orjson
from pydantic import ValidationError

from monitor.ingest._files import iter_lines, stream_file
from monitor.jsonrecords import decode_json_record
from monitor.models import EVENT_ADAPTER, RecordError, RecordStream, SessionEnd, ToolCall, ToolResult

DEFAULT_MAX_OPEN_SESSIONS = 1000


def read_jsonl(path: Path, max_open_sessions: int = DEFAULT_MAX_OPEN_SESSIONS) -> RecordStream:
    """Stream the events of a native JSONL file.

    Sessions end at the end of the file, or earlier when more than ``max_open_sessions`` are interleaved
    (the least recently active one ends first). A session that reappears after it ended is reported and its
    later events are analysed as a new session of the same id.
    """
    yield from stream_file(path, read_jsonl_stream, max_open_sessions)


def read_jsonl_stream(fh: IO[bytes], name: str, max_open_sessions: int = DEFAULT_MAX_OPEN_SESSIONS) -> RecordStream:
    """Stream the events of native JSONL read from ``fh``; ``name`` names it in errors."""
    # Open sessions in order of last activity (the eviction order), and recently closed ones (bounded).
    open_sessions: OrderedDict[str, _OpenSession] = OrderedDict()
    closed: OrderedDict[str, None] = OrderedDict()
    empty = True
    for lineno, line in iter_lines(fh):
        empty = False
        source = f"{name}:{lineno}"
        try:
            value, problems = decode_json_record(line)
        except orjson.JSONDecodeError as exc:
            yield RecordError(source=source, message=f"not JSON: {exc}")
            continue
        for problem in problems:
            yield RecordError(source=source, message=f"{problem.where or 'line'}: {problem.message}")
        if isinstance(value, dict):
            value["source"] = source  # where the line is, whatever the line says about itself
        try:
            event = EVENT_ADAPTER.validate_python(value)
        except ValidationError as exc:
            yield RecordError(source=source, message=f"not a valid event: {_summarize(exc)}")
            continue
        sid = event.session_id
        session = open_sessions.get(sid)
        if session is None:
            if sid in closed:
                del closed[sid]
                yield RecordError(
                    source=source,
                    message=(
                        f"session {sid!r} continues after it was closed (more than {max_open_sessions} sessions "
                        "interleaved); its later events are analysed as a separate session"
                    ),
                )
            session = open_sessions[sid] = _OpenSession(lineno)
            if len(open_sessions) > max_open_sessions:
                oldest, _ = open_sessions.popitem(last=False)
                closed[oldest] = None
                if len(closed) > _CLOSED_REMEMBERED_FACTOR * max_open_sessions:
                    closed.popitem(last=False)
                yield SessionEnd(session_id=oldest, source=source)
        open_sessions.move_to_end(sid)
        if isinstance(event, ToolCall) and event.call_id:
            session.call_ids.add(event.call_id)
        elif isinstance(event, ToolResult) and event.call_id not in session.call_ids:
            yield RecordError(
                source=source,
                message=f"result for call {event.call_id!r}, which no earlier "
                "tool_call of this session requested; ignored",
            )
            continue
        yield event
    if empty:
        yield RecordError(source=name, message="empty file: no events in it")
    for sid in sorted(open_sessions, key=lambda s: open_sessions[s].first_line):
        yield SessionEnd(session_id=sid, source=name)


_CLOSED_REMEMBERED_FACTOR = 10


@dataclass
class _OpenSession:
    first_line: int
    call_ids: set[str] = field(default_factory=set)


def _summarize(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        loc = ".".join(str(p) for p in err["loc"])
        parts.append(f"{loc}: {err['msg']}" if loc else err["msg"])
    more = len(exc.errors()) - 3
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")
