"""Opening input files: the one wording of a file that cannot be read, and a stream reader run on a path."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Concatenate, ParamSpec

from monitor.jsonrecords import LARGE_RECORD
from monitor.models import RecordError, RecordStream

_P = ParamSpec("_P")


def describe_read_error(exc: OSError) -> str:
    """Return the message of an input that cannot be opened or read: ``cannot read: <reason>``."""
    return f"cannot read: {exc.strerror or exc}"


def iter_lines(fh: IO[bytes]) -> Iterator[tuple[int, bytes | bytearray]]:
    """Yield ``(line number, line)`` for every line of ``fh`` that is not blank. A line of
    :data:`~monitor.jsonrecords.LARGE_RECORD` bytes or more comes as a ``bytearray`` and no other copy of it is kept:
    :func:`~monitor.jsonrecords.decode_json_record` takes it over, so a huge record is in memory once."""
    lineno = 0
    for line in fh:  # not enumerate(): its reused tuple would keep the last line alive
        lineno += 1  # noqa: SIM113
        if len(line) < LARGE_RECORD:
            if line.strip():
                yield lineno, line
        elif not line.isspace():
            buffer = bytearray(line)
            del line
            yield lineno, buffer


def stream_file(
    path: Path,
    read: Callable[Concatenate[IO[bytes], str, _P], RecordStream],
    *args: _P.args,
    **kwargs: _P.kwargs,
) -> RecordStream:
    """Open ``path`` and stream ``read(fh, str(path), *args, **kwargs)`` from it, closing it afterwards.

    A file that cannot be opened is one :class:`RecordError` naming it; nothing is raised.
    """
    try:
        fh = path.open("rb")
    except OSError as exc:
        yield RecordError(source=str(path), message=describe_read_error(exc))
        return
    with fh:
        yield from read(fh, str(path), *args, **kwargs)
