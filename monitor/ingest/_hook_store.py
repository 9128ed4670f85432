"""The hook store (:mod:`monitor.store`): the Claude Code hook payloads it holds, read as a hook payload log.

A store is told by its first bytes (a SQLite file) and opened read-only, so hooks may write it while it is
read. Every stored event's payload, in the order the store received them, goes through the Claude Code
reader (:mod:`monitor.ingest._claude_code`) as the lines of a hook payload log would: the same store and
the same payloads in a JSON Lines file give the same events. Each record is named ``<file>#seq=<n>``; a
payload that is not JSON is an error naming it, and the rest is read. A file that cannot be read as a
store (a newer schema, another application's database, a damaged file) is one error naming the file.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson

from monitor.errors import InputError
from monitor.ingest._claude_code import DEFAULT_MAX_OPEN_SESSIONS, _Line, _Reader
from monitor.jsonrecords import LARGE_RECORD, decode_json_record
from monitor.models import RecordStream
from monitor.store import HookStore

SQLITE_HEADER = b"SQLite format 3\x00"


def sniff(head: bytes) -> bool:
    """True when ``head`` (a file's first bytes) is the start of a SQLite database."""
    return head.startswith(SQLITE_HEADER)


def read_hook_store(path: Path, max_open_sessions: int = DEFAULT_MAX_OPEN_SESSIONS) -> RecordStream:
    """Stream the events of the hook payloads stored in the hook store at ``path``.

    Sessions end as in a hook payload log: at the end of the store, or earlier when more than
    ``max_open_sessions`` are interleaved. Nothing is raised: a store that cannot be read is one
    :class:`RecordError` naming it, a payload that cannot be read one naming its ``seq``.
    """
    yield from _Reader(path.stem, max_open_sessions).read(_lines(path))


def _lines(path: Path) -> Iterator[_Line]:
    """The stored payloads as the lines the Claude Code reader takes; a problem with the store is an error
    line naming the file (and the reading stops there)."""
    name = str(path)
    if _is_blank(path):
        yield _Line(name, 0, "", error="empty file: no hook store in it")
        return
    try:
        with HookStore(path, read_only=True) as store:
            empty = True
            for event in store.events():
                empty = False
                seq = event.seq
                source = f"{name}#seq={seq}"
                data = event.payload.encode("utf-8", "surrogatepass")
                raw: bytes | bytearray = data if len(data) < LARGE_RECORD else bytearray(data)
                del data, event  # a large payload is then held by the decoder's buffer, and no other copy
                try:
                    obj, problems = decode_json_record(raw)
                except orjson.JSONDecodeError as exc:
                    yield _Line(source, seq, "", error=f"not JSON: {exc}")
                    continue
                # ``seq`` stands for the line number: it names a call whose payload gives no tool_use_id.
                for problem in problems:
                    yield _Line(source, seq, "", error=f"{problem.where or 'payload'}: {problem.message}", obj=obj)
                yield _Line(source, seq, "", obj)
    except InputError as exc:
        yield _Line(name, 0, "", error=exc.message)
        return
    if empty:
        yield _Line(name, 0, "", error="empty hook store: no hook events in it")


def _is_blank(path: Path) -> bool:
    """True for an existing file of whitespace only (an empty file is reported as such, not as a bad store)."""
    try:
        with path.open("rb") as fh:
            head = fh.read(65_536)
            return not head.strip() and not fh.read(1)
    except OSError:
        return False
