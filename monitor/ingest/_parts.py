"""Reading inputs in parts: the pieces of what :func:`read_inputs` reads that can be analysed apart, in order.

A part is one input file, or a run of consecutive run files of an AgentDojo archive or folder. A session never
spans two parts: every reader ends the sessions of a file when the file ends, and an AgentDojo run file is one
session. Reading the parts one after the other with :func:`read_part` gives the records :func:`read_inputs`
gives, in the same order, with the same :attr:`InputStream.current` while each record is read.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import count
from pathlib import Path

from monitor.ingest._agentdojo import AgentDojoRun, _archive_files, _parse_run, _RunFile, is_archive, read_agentdojo
from monitor.ingest._claude_code import is_subagent_transcript
from monitor.ingest._inputs import _DATA_SUFFIXES, STDIN_PATH, InputFormat, InputStream, _read_file, _read_stdin
from monitor.models import RecordError, RecordStream

MAX_PART_RUNS = 64
"""At most this many AgentDojo run files in one part."""
MAX_PART_BYTES = 8 * 1024**2
"""An archive's part is closed once its run files hold this many bytes (a larger single run is one part)."""


@dataclass(frozen=True, slots=True)
class InputPart:
    """One piece of the input, read on its own by :func:`read_part` (in this process or another one).

    ``index`` counts the parts from 0 in input order; ``name`` says which piece it is, for errors about the
    part as a whole; ``current`` is what :attr:`InputStream.current` says while it is read. A part is one of: a
    file (``path``, read in ``input_format``, session ids below ``root``); run files of an AgentDojo folder
    (``files``, below ``root``); run files already read from an archive (``runs``, their bytes included, so the
    reader needs no access to the archive); errors found while splitting (``errors``); or standard input
    (``stdin``), which only the process that splits the input can read.
    """

    index: int
    name: str
    current: str
    path: str | None = None
    input_format: InputFormat = InputFormat.AUTO
    root: str | None = None
    files: tuple[str, ...] = ()
    runs: tuple[_RunFile | RecordError, ...] = ()
    errors: tuple[RecordError, ...] = ()
    stdin: bool = False

    @property
    def local(self) -> bool:
        """Return True when the part can only be read in the process that split the input (standard input)."""
        return self.stdin

    @property
    def work(self) -> bool:
        """Return True when reading the part means reading a file or decoding runs (not only errors to pass on)."""
        return bool(self.path or self.files or self.runs or self.stdin)


def partition_inputs(
    paths: Iterable[Path],
    input_format: InputFormat = InputFormat.AUTO,
    *,
    max_runs: int = MAX_PART_RUNS,
    max_bytes: int = MAX_PART_BYTES,
) -> Iterator[InputPart]:
    """Split what :func:`read_inputs` reads from ``paths`` into parts, lazily and in order.

    Archives are read here, a part at a time (a part holds the bytes of its run files, at most ``max_runs``
    of them or about ``max_bytes``); other files are named, not read. Standard input is one part that only
    this process can read.
    """
    return _Splitter(input_format, max_runs, max_bytes).split(paths)


def read_part(part: InputPart) -> InputStream:
    """Stream the records of one part, as :func:`read_inputs` yields them for that piece of the input."""
    return _PartStream(part)


class _PartStream(InputStream):
    """The records of one part; :attr:`current` is the part's."""

    def __init__(self, part: InputPart) -> None:  # no paths to read: the part says what to read
        self.current = part.current
        self._records = _read(part)


def _read(part: InputPart) -> RecordStream:
    yield from part.errors
    if part.stdin:
        yield from _read_stdin(sys.stdin.buffer, part.input_format)
    if part.path is not None:
        yield from _read_file(Path(part.path), part.input_format, Path(part.root or Path(part.path).parent))
    for file in part.files:
        yield from read_agentdojo(Path(file), Path(part.root) if part.root else None)
    for item in part.runs:
        if isinstance(item, RecordError):
            yield item
            continue
        run = _parse_run(item)
        if isinstance(run, AgentDojoRun):
            yield from run.records
        else:
            yield run


class _Splitter:
    def __init__(self, input_format: InputFormat, max_runs: int, max_bytes: int) -> None:
        self._format = input_format
        self._max_runs = max(1, max_runs)
        self._max_bytes = max_bytes
        self._index = count()

    def split(self, paths: Iterable[Path]) -> Iterator[InputPart]:
        fmt = self._format
        for path in paths:
            name = str(path)
            if name == STDIN_PATH:
                yield InputPart(next(self._index), "<stdin>", "<stdin>", input_format=fmt, stdin=True)
            elif not path.exists():
                error = RecordError(source=name, message="no such file or folder")
                yield InputPart(next(self._index), name, name, errors=(error,))
            elif path.is_dir() and not is_archive(path):
                yield from self._folder(path)
            elif is_archive(path) and fmt in (InputFormat.AUTO, InputFormat.AGENTDOJO):
                yield from self._archive(path, name)
            else:
                yield InputPart(next(self._index), name, name, path=name, input_format=fmt, root=str(path.parent))

    def _folder(self, folder: Path) -> Iterator[InputPart]:
        current = str(folder)
        if self._format is InputFormat.AGENTDOJO:  # as read_agentdojo walks a folder: runs and archives
            found = sorted(p for p in folder.rglob("*") if p.is_file() and (p.suffix == ".json" or is_archive(p)))
            batch: list[str] = []
            for file in found:
                if is_archive(file):
                    yield from self._files(batch, folder, current)
                    batch = []
                    yield from self._archive(file, current)
                    continue
                batch.append(str(file))
                if len(batch) >= self._max_runs:
                    yield from self._files(batch, folder, current)
                    batch = []
            yield from self._files(batch, folder, current)
            return
        for file in sorted(p for p in folder.rglob("*") if p.is_file()):
            if is_subagent_transcript(file) or not (file.name.endswith(_DATA_SUFFIXES) or is_archive(file)):
                continue
            name = str(file)
            if is_archive(file) and self._format is InputFormat.AUTO:
                yield from self._archive(file, name)
            else:
                yield InputPart(next(self._index), name, name, path=name, input_format=self._format, root=current)

    def _files(self, batch: list[str], folder: Path, current: str) -> Iterator[InputPart]:
        if batch:
            name = batch[0] if len(batch) == 1 else f"{batch[0]} … {batch[-1]}"
            yield InputPart(next(self._index), name, current, files=tuple(batch), root=str(folder))

    def _archive(self, path: Path, current: str) -> Iterator[InputPart]:
        batch: list[_RunFile | RecordError] = []
        size = 0
        first = 1
        seen = 0
        for item in _archive_files(path):
            batch.append(item)
            if isinstance(item, _RunFile):
                seen += 1
                size += len(item.data)
            if len(batch) >= self._max_runs or size >= self._max_bytes:
                yield self._archive_part(path, current, batch, first, seen)
                batch, size, first = [], 0, seen + 1
        if batch:
            yield self._archive_part(path, current, batch, first, seen)

    def _archive_part(
        self, path: Path, current: str, batch: list[_RunFile | RecordError], first: int, last: int
    ) -> InputPart:
        name = f"{path} (run files {first} to {last})" if last >= first else str(path)
        return InputPart(next(self._index), name, current, runs=tuple(batch))
