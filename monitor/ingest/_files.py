"""Opening input files: the one wording of a file that cannot be read, and a stream reader run on a path."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import IO, Concatenate, ParamSpec

from monitor.models import RecordError, RecordStream

_P = ParamSpec("_P")


def describe_read_error(exc: OSError) -> str:
    """Return the message of an input that cannot be opened or read: ``cannot read: <reason>``."""
    return f"cannot read: {exc.strerror or exc}"


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
