"""The engine process of the span processor: ``python -m monitor.otel._child``, started by the processor.

Reads its configuration (an 8-byte length, then the pickled :class:`~monitor.otel._config.ProcessorConfig`),
then one record per line on standard input; writes the engine's messages, one per line, on standard output
(the alerts, decisions and reports in them as their JSON text); ends when its input ends. Log records of
WARNING and above are sent to the processor, which logs them in the application's process.

A thread reads standard input as soon as records arrive and keeps them here, up to ``max_queue_bytes`` of them,
while the engine works through them: records waiting for the engine wait in this process, not in the
application's; past :data:`SPILL_AFTER_BYTES` of them, in a temporary file rather than in memory.

Every :data:`_MEMORY_CHECK` records, the process's resident memory (the records waiting in memory included) is
compared with ``max_engine_bytes``: when it grew beyond it (and by a thirty-second of it since the engine last shed
sessions), the engine ends its least recently active tenth of sessions and holds no more from then on
(:meth:`~monitor.otel._engine.SpanEngine.shed_sessions`): the memory freed is reused by the sessions that
follow, so the process stays near its bound whatever the sessions hold.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import gc
import logging
import os
import sys
import tempfile
import threading
import traceback
from collections import deque
from collections.abc import Callable
from typing import Any, BinaryIO

import orjson

from monitor.otel import _records as rec
from monitor.otel._config import unpack_config
from monitor.otel._engine import SpanEngine

_CHUNK = 1 << 20
SPILL_AFTER_BYTES = 32 << 20
"""Records waiting for the engine kept in memory (at most an eighth of ``max_engine_bytes``); more wait in a
temporary file (see :class:`_Inbox`: on a ``TMPDIR`` in memory, such as tmpfs, they still take memory, outside the
process)."""
_MEMORY_CHECK = 256  # records handled between two looks at the process's memory
_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


class _ForwardHandler(logging.Handler):
    """Sends log records to the processor as messages."""

    def __init__(self, out: list[list[Any]]) -> None:
        super().__init__(logging.WARNING)
        self.out = out

    def emit(self, record: logging.LogRecord) -> None:
        """Queue the formatted record."""
        try:
            text = record.getMessage()
            if record.exc_info:
                text += "\n" + "".join(traceback.format_exception(*record.exc_info))
            self.out.append([rec.OUT_LOG, record.levelno, text])
        except Exception:  # pragma: no cover - nothing to report to
            pass


class _Inbox:
    """What the processor wrote, read off the pipe as soon as it arrives (so that the application's process
    does not hold it), at most ``max_bytes`` of it; beyond that, reading pauses and the pipe fills.

    The first ``memory_bytes`` wait in memory; past them (a burst the engine is far behind on), what arrives
    waits in an unlinked temporary file until the file is read empty, so the backlog does not count in the
    process's memory. The order is kept: while the file holds records, newer ones go after them. Where no
    temporary file can be made or written, the records wait in memory as before, in order."""

    def __init__(self, fd: int, max_bytes: int, memory_bytes: int = SPILL_AFTER_BYTES) -> None:
        self.fd = fd
        self.max_bytes = max_bytes
        self.memory_bytes = min(memory_bytes, max_bytes)
        self.chunks: deque[bytes] = deque()
        self.size = 0
        """Bytes waiting, in memory and in the file."""
        self.spilled = 0
        """Bytes waiting in the file."""
        self.ended = False
        self.ready = threading.Condition()
        self._file: BinaryIO | None = None
        self._spill_failed = False
        self._failure: str | None = None
        self._read_at = 0
        self._write_at = 0
        threading.Thread(target=self._read, name="trifecta-monitor-inbox", daemon=True).start()

    def _read(self) -> None:
        while True:
            with self.ready:
                while self.size >= self.max_bytes:
                    self.ready.wait()
            try:
                chunk = os.read(self.fd, _CHUNK)
            except OSError:
                chunk = b""
            with self.ready:
                if not chunk:
                    self.ended = True
                else:
                    rest = self._spill(chunk)
                    self.size += len(chunk)
                    if rest:
                        # What the file did not take waits in memory, after what the file still holds: wake the
                        # taker for the file's records first, or both wait for each other.
                        self.ready.notify_all()
                        while self.spilled:
                            self.ready.wait()
                        self.chunks.append(rest)
                self.ready.notify_all()
            if not chunk:
                return

    def _spill(self, chunk: bytes) -> bytes:
        """Write ``chunk`` to the file when it belongs there; return what belongs in memory instead (all of it,
        or the tail a failing file did not take)."""
        if self._spill_failed or (not self.spilled and self.size - self.spilled + len(chunk) <= self.memory_bytes):
            return chunk
        written = 0
        try:
            if self._file is None:
                self._file = tempfile.TemporaryFile(prefix="trifecta-queue-")  # noqa: SIM115 - closed at exit
            while written < len(chunk):
                taken = os.pwrite(self._file.fileno(), memoryview(chunk)[written:], self._write_at + written)
                if taken <= 0:
                    raise OSError("the temporary file took no more bytes")
                written += taken
        except OSError as exc:
            if not self._spill_failed:
                self._failure = str(exc)  # said by the engine's thread: log records go out from there
            self._spill_failed = True
        self._write_at += written
        self.spilled += written
        return chunk[written:]

    def take(self) -> bytes | None:
        """The oldest data read, about one chunk of it (waiting for some); None once the input ended and
        all was taken."""
        with self.ready:
            while not self.chunks and not self.spilled and not self.ended:
                self.ready.wait()
            if self._failure is not None:
                logging.getLogger(__name__).warning(
                    "records waiting for the engine wait in memory: their temporary file failed (%s)", self._failure
                )
                self._failure = None
            if self.chunks:
                taken = [self.chunks.popleft()]
                size = len(taken[0])
                while self.chunks and size < _CHUNK:
                    taken.append(self.chunks.popleft())
                    size += len(taken[-1])
                data = taken[0] if len(taken) == 1 else b"".join(taken)
            elif self.spilled:
                data = self._unspill()
            else:
                return None
            self.size -= len(data)
            self.ready.notify_all()
            return data

    def _unspill(self) -> bytes:
        assert self._file is not None
        fileno = self._file.fileno()
        try:
            data = os.pread(fileno, min(_CHUNK, self.spilled), self._read_at)
        except OSError:
            data = b""
        if not data:  # the file lost what was written to it: say how much, and go on with what follows
            logging.getLogger(__name__).error(
                "%d bytes of records waiting for the engine could not be read back", self.spilled
            )
            self.size -= self.spilled
            self.spilled = 0
        else:
            self.spilled -= len(data)
            self._read_at += len(data)
        if not self.spilled:
            self._read_at = self._write_at = 0
            with contextlib.suppress(OSError):
                os.ftruncate(fileno, 0)  # give the disk back between bursts
        return data


def run_child() -> int:
    """Run the engine on standard input until it ends."""
    fd = sys.stdin.fileno()
    stdout = sys.stdout.buffer
    sys.stdout = sys.stderr  # stray prints must not corrupt the messages
    pending = bytearray()
    while len(pending) < 8 or len(pending) < 8 + int.from_bytes(pending[:8], "big"):
        chunk = os.read(fd, _CHUNK)
        if not chunk:
            return 1  # the processor went away before it configured us
        pending += chunk
    size = int.from_bytes(pending[:8], "big")
    config = unpack_config(bytes(pending[8 : 8 + size]))
    rest = bytes(pending[8 + size :])
    out: list[list[Any]] = []
    root = logging.getLogger()
    root.handlers[:] = [_ForwardHandler(out)]
    root.setLevel(logging.WARNING)
    engine = SpanEngine(config.make_monitor(), out.append, config)
    # Built at the application's priority (the first check_tool_call may wait for it), then lowered for the work.
    _lower_priority(config.engine_niceness)
    inbox = _Inbox(fd, config.max_queue_bytes, min(SPILL_AFTER_BYTES, config.max_engine_bytes // 8))
    memory = _MemoryBound(config.max_engine_bytes)
    while True:
        lines = rest.split(b"\n")
        rest = lines.pop()
        for line in lines:
            if not line:
                continue
            try:
                record = orjson.loads(line)
            except orjson.JSONDecodeError:
                out.append([rec.OUT_ERROR, "record", 1, f"unreadable record: {line[:200]!r}"])
                continue
            engine.handle(record)
            if record[0] != rec.MARK:  # a mark holds nothing: the records of spans and questions count
                memory.count(engine)
        del lines
        engine.end_batch()
        if out:
            try:
                stdout.write(b"".join(orjson.dumps(message, default=rec.encode_value) + b"\n" for message in out))
                stdout.flush()
            except BrokenPipeError:
                return 0  # the processor is gone
            out.clear()
        taken = inbox.take()
        if taken is None:
            break
        rest += taken
    return 0


class _MemoryBound:
    """Holds the process's resident memory near ``max_bytes`` by having the engine shed sessions when it grew
    beyond it (the records waiting in memory count, at most :data:`SPILL_AFTER_BYTES` of them)."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.handled = 0
        self.threshold = max_bytes

    def count(self, engine: SpanEngine) -> None:
        """One more record handled: every :data:`_MEMORY_CHECK` of them, look at the memory."""
        self.handled += 1
        if self.handled % _MEMORY_CHECK:
            return
        used = read_resident_bytes()
        if used > self.threshold and engine.session_count > 1:
            engine.shed_sessions()
            used = release_memory()
            self.threshold = max(self.max_bytes, used + self.max_bytes // 32)


def release_memory() -> int:
    """Hand the memory of ended sessions back to the system where the C library allows it (glibc's
    ``malloc_trim``: freed blocks otherwise stay in the process's heap); return the resident memory then."""
    gc.collect()
    trim = _find_malloc_trim()
    if trim is not None:
        trim(0)
    return read_resident_bytes()


@functools.cache
def _find_malloc_trim() -> Callable[[int], int] | None:
    try:
        return ctypes.CDLL(None).malloc_trim  # the C library the process runs on: no search for it
    except (OSError, AttributeError):  # not glibc: nothing to trim with
        return None


def read_resident_bytes() -> int:
    """This process's resident memory, in bytes (0 where ``/proc`` does not tell it)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE_SIZE
    except (OSError, ValueError, IndexError):
        return 0


def _lower_priority(niceness: int) -> None:
    """Let the application's threads run first when the machine is busy (the engine catches up after)."""
    if niceness:
        with contextlib.suppress(AttributeError, OSError):  # not POSIX, or not allowed: the priority stays
            os.nice(niceness)


if __name__ == "__main__":
    sys.exit(run_child())
