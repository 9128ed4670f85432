"""Input adapters: every format becomes the same stream of events, rejected records and session ends."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from pathlib import Path

from monitor.ingest.agentdojo import is_archive, read_agentdojo
from monitor.ingest.jsonl import read_jsonl
from monitor.ingest.records import Record, RecordError, RecordStream, SessionEnd

__all__ = [
    "InputFormat",
    "Record",
    "RecordError",
    "RecordStream",
    "SessionEnd",
    "detect_format",
    "read_inputs",
]

_SNIFF_BYTES = 65536
_DATA_SUFFIXES = (".json", ".jsonl", ".ndjson")


class InputFormat(StrEnum):
    """Input formats ``analyze`` reads."""

    AUTO = "auto"
    JSONL = "jsonl"
    AGENTDOJO = "agentdojo"


def detect_format(path: Path) -> InputFormat | None:
    """Tell a file's format from its content (and, for archives, its name); None when it cannot."""
    if is_archive(path):
        return InputFormat.AGENTDOJO
    try:
        with path.open("rb") as fh:
            head = fh.read(_SNIFF_BYTES)
    except OSError:
        return None
    first_line = head.lstrip().split(b"\n", 1)[0]
    if first_line.startswith(b"{") and b'"kind"' in first_line and b'"session_id"' in first_line:
        return InputFormat.JSONL
    if b'"messages"' in head and (b'"suite_name"' in head or b'"pipeline_name"' in head):
        return InputFormat.AGENTDOJO
    return None


def read_inputs(paths: Iterable[Path], input_format: InputFormat = InputFormat.AUTO) -> RecordStream:
    """Stream records from every path, in order. Unreadable paths become :class:`RecordError` records."""
    for path in paths:
        if not path.exists():
            yield RecordError(source=str(path), message="no such file or folder")
        elif path.is_dir() and not is_archive(path):
            yield from _read_folder(path, input_format)
        else:
            yield from _read_file(path, input_format, path.parent)


def _read_folder(folder: Path, input_format: InputFormat) -> RecordStream:
    if input_format is InputFormat.AGENTDOJO:
        yield from read_agentdojo(folder)
        return
    for file in sorted(p for p in folder.rglob("*") if p.is_file()):
        if file.name.endswith(_DATA_SUFFIXES) or is_archive(file):
            yield from _read_file(file, input_format, folder)


def _read_file(path: Path, input_format: InputFormat, root: Path) -> RecordStream:
    fmt = input_format if input_format is not InputFormat.AUTO else detect_format(path)
    if fmt is InputFormat.JSONL:
        yield from read_jsonl(path)
    elif fmt is InputFormat.AGENTDOJO:
        yield from read_agentdojo(path, root)
    else:
        yield RecordError(
            source=str(path), message=("cannot tell the input format from the content; name it with --input-format")
        )
