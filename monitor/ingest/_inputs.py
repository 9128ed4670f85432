"""Reading inputs: each path's format, told from its content or named, and the records of every path in order."""

from __future__ import annotations

import io
import re
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import IO

from monitor.ingest._agentdojo import is_archive, read_agentdojo
from monitor.ingest._claude_code import is_subagent_transcript, read_claude_code
from monitor.ingest._claude_code import sniff as sniff_claude_code
from monitor.ingest._hook_store import read_hook_store
from monitor.ingest._hook_store import sniff as sniff_hook_store
from monitor.ingest._jsonl import read_jsonl, read_jsonl_stream
from monitor.ingest._mcp import read_mcp
from monitor.ingest._mcp import sniff as sniff_mcp
from monitor.ingest._otlp import read_otlp
from monitor.ingest._otlp import sniff as sniff_otlp
from monitor.models import Record, RecordError, RecordStream

_SNIFF_BYTES = 65536
# The start of a span as ConsoleSpanExporter prints it: its name, then its context with 0x-prefixed hex ids.
_CONSOLE_SPAN = re.compile(rb'^\{\s*"name":[^\n]*\n\s*"context":\s*\{\s*"trace_id":\s*"0x[0-9a-f]{32}"')
STDIN_PATH = "-"
STDIN_NAME = "<stdin>"
# Standard input in a format other than native JSONL is buffered in a temporary file (the readers of those
# formats need a file: SQLite, archives, whole-file JSON); this bounds that file.
MAX_STDIN_BYTES = 2 * 1024**3
_COPY_BLOCK = 1 << 20
_DATA_SUFFIXES = (".json", ".jsonl", ".ndjson", ".sqlite3")


class InputFormat(StrEnum):
    """Input formats ``analyze`` reads."""

    AUTO = "auto"
    JSONL = "jsonl"
    OTLP = "otlp"
    MCP = "mcp"
    CLAUDE_CODE = "claude-code"
    AGENTDOJO = "agentdojo"
    HOOK_STORE = "hook-store"


@dataclass(frozen=True)
class _Reader:
    sniff: Callable[[bytes], bool]
    read: Callable[[Path, Path], RecordStream]


def _sniff_jsonl(head: bytes) -> bool:
    first_line = head.lstrip().split(b"\n", 1)[0]
    return first_line.startswith(b"{") and b'"kind"' in first_line and b'"session_id"' in first_line


def _sniff_agentdojo(head: bytes) -> bool:
    return b'"messages"' in head and (b'"suite_name"' in head or b'"pipeline_name"' in head)


# Tried in this order when the format is told from the content.
_READERS: dict[InputFormat, _Reader] = {
    InputFormat.HOOK_STORE: _Reader(sniff_hook_store, lambda path, root: read_hook_store(path)),
    InputFormat.JSONL: _Reader(_sniff_jsonl, lambda path, root: read_jsonl(path)),
    InputFormat.OTLP: _Reader(sniff_otlp, lambda path, root: read_otlp(path)),
    InputFormat.MCP: _Reader(sniff_mcp, lambda path, root: read_mcp(path, root)),
    InputFormat.CLAUDE_CODE: _Reader(sniff_claude_code, lambda path, root: read_claude_code(path)),
    InputFormat.AGENTDOJO: _Reader(_sniff_agentdojo, lambda path, root: read_agentdojo(path, root)),
}


def detect_format(path: Path) -> InputFormat | None:
    """Tell a file's format from its content (and, for archives, its name); None when it cannot."""
    if is_archive(path):
        return InputFormat.AGENTDOJO
    try:
        with path.open("rb") as fh:
            head = fh.read(_SNIFF_BYTES)
    except OSError:
        return None
    return next((fmt for fmt, reader in _READERS.items() if reader.sniff(head)), None)


class InputStream(Iterator[Record]):
    """The records of :func:`read_inputs`, in order, and :attr:`current`: the file (or folder) read now."""

    def __init__(self, paths: Iterable[Path], input_format: InputFormat) -> None:
        self.current = ""
        self._records = self._read(paths, input_format)

    def __iter__(self) -> InputStream:
        return self

    def __next__(self) -> Record:
        return next(self._records)

    def _read(self, paths: Iterable[Path], input_format: InputFormat) -> RecordStream:
        for path in paths:
            self.current = str(path)
            if str(path) == STDIN_PATH:
                self.current = STDIN_NAME
                yield from _read_stdin(sys.stdin.buffer, input_format)
            elif not path.exists():
                yield RecordError(source=str(path), message="no such file or folder")
            elif path.is_dir() and not is_archive(path):
                yield from self._read_folder(path, input_format)
            else:
                yield from _read_file(path, input_format, path.parent)

    def _read_folder(self, folder: Path, input_format: InputFormat) -> RecordStream:
        if input_format is InputFormat.AGENTDOJO:
            yield from read_agentdojo(folder)
            return
        for file in sorted(p for p in folder.rglob("*") if p.is_file()):
            # A Claude Code sub-agent transcript is read with its parent session's file.
            if is_subagent_transcript(file):
                continue
            if file.name.endswith(_DATA_SUFFIXES) or is_archive(file):
                self.current = str(file)
                yield from _read_file(file, input_format, folder)


def read_inputs(paths: Iterable[Path], input_format: InputFormat = InputFormat.AUTO) -> InputStream:
    """Stream records from every path, in order. Unreadable paths become :class:`RecordError` records.

    The path ``-`` is standard input, named ``<stdin>`` in errors and sources, its format told from its content
    like a file's. Native JSONL is streamed as it arrives; any other format is first copied to a temporary file
    (deleted afterwards) of at most :data:`MAX_STDIN_BYTES` bytes: larger input is one error, give it as a file.

    The stream's :attr:`InputStream.current` names the file being read, for errors found downstream.
    """
    return InputStream(paths, input_format)


def _read_file(path: Path, input_format: InputFormat, root: Path) -> RecordStream:
    fmt = input_format if input_format is not InputFormat.AUTO else detect_format(path)
    if fmt is None:
        try:
            with path.open("rb") as fh:
                head = fh.read(_SNIFF_BYTES)
        except OSError:
            head = b"?"
        yield _undetected(str(path), head)
        return
    yield from _READERS[fmt].read(path, root)


def _undetected(source: str, head: bytes) -> RecordError:
    """The error for input whose format the content does not tell: empty input says so."""
    if not head.strip():
        return RecordError(source=source, message="empty file: nothing to read")
    if _CONSOLE_SPAN.search(head):
        return RecordError(
            source=source,
            message="this is the OpenTelemetry SDK's ConsoleSpanExporter output (spans printed for reading), which "
            "analyze does not read: export with monitor.otel.OtlpJsonFileExporter (OTLP JSON lines) instead",
        )
    return RecordError(
        source=source, message="cannot tell the input format from the content; name it with --input-format"
    )


def _read_stdin(stdin: IO[bytes], input_format: InputFormat) -> RecordStream:
    try:
        head = stdin.read(_SNIFF_BYTES)
    except OSError as exc:
        yield RecordError(source=STDIN_NAME, message=f"cannot read standard input: {exc.strerror or exc}")
        return
    fmt = input_format if input_format is not InputFormat.AUTO else _sniff_head(head)
    if fmt is None:
        yield _undetected(STDIN_NAME, head)
        return
    if fmt is InputFormat.JSONL:  # streamed: a pipe of any length, nothing buffered
        yield from read_jsonl_stream(io.BufferedReader(_Rejoined(head, stdin)), STDIN_NAME)
        return
    with tempfile.TemporaryDirectory(prefix="trifecta-stdin-") as folder:
        spooled = Path(folder) / ("stdin" + _stdin_suffix(head))
        try:
            complete = _spool(head, stdin, spooled)
        except OSError as exc:
            yield RecordError(source=STDIN_NAME, message=f"cannot buffer standard input: {exc.strerror or exc}")
            return
        if not complete:
            yield RecordError(
                source=STDIN_NAME,
                message=f"standard input ({fmt.value}) is over {MAX_STDIN_BYTES} bytes; give it as a file",
            )
            return
        yield from _renamed(_READERS[fmt].read(spooled, Path(folder)), str(spooled))


def _sniff_head(head: bytes) -> InputFormat | None:
    if _stdin_suffix(head) != ".json":
        return InputFormat.AGENTDOJO
    return next((fmt for fmt, reader in _READERS.items() if reader.sniff(head)), None)


def _stdin_suffix(head: bytes) -> str:
    if head.startswith(b"\x1f\x8b"):
        return ".tar.gz"
    if head[257:262] == b"ustar":
        return ".tar"
    return ".json"


def _spool(head: bytes, stdin: IO[bytes], path: Path) -> bool:
    """Copy standard input to ``path``; False (and nothing more is read) when it exceeds the bound."""
    size = len(head)
    if size > MAX_STDIN_BYTES:
        return False
    with path.open("wb") as out:
        out.write(head)
        while block := stdin.read(_COPY_BLOCK):
            size += len(block)
            if size > MAX_STDIN_BYTES:
                return False
            out.write(block)
    return True


def _renamed(records: RecordStream, spooled: str) -> RecordStream:
    """Name the temporary copy of standard input ``<stdin>`` wherever a record names where it was read."""
    for record in records:
        source = getattr(record, "source", None)
        if isinstance(source, str) and source.startswith(spooled):
            record = record.model_copy(update={"source": STDIN_NAME + source[len(spooled) :]})
        yield record


class _Rejoined(io.RawIOBase):
    """The bytes already read from a stream (its head), then the rest of the stream."""

    def __init__(self, head: bytes, rest: IO[bytes]) -> None:
        self._head = memoryview(head)
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        read = getattr(self._rest, "read1", self._rest.read)
        data: bytes = read(len(buffer))
        buffer[: len(data)] = data
        return len(data)
