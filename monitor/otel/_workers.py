"""Where the span processor's engine runs: on a thread of this process, or in a process of its own.

Both take batches of records (lists of lines, each one record as a JSON array; see
:mod:`monitor.otel._records`) in order and hand every message the engine sends back to ``on_output``, in
order. :class:`ProcessWorker` runs ``python -m monitor.otel._child`` with pipes to and from it, so that the
engine's work does not compete with the application's threads for this interpreter's lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import logging
import os
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import IO, Any, Protocol

import orjson

from monitor.otel._config import ProcessorConfig, pack_config
from monitor.otel._engine import SpanEngine
from monitor.session import SessionMonitor

logger = logging.getLogger("monitor.otel")

Output = Callable[[list[Any]], None]

_ABANDONED: list[ProcessWorker] = []  # workers of the parent, in a forked child: never to be closed
_PIPE_SIZE = 1 << 20  # bytes; Linux raises a pipe's buffer to this when allowed
_F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)


def _read_iov_max() -> int:
    """How many buffers one ``writev`` takes here (at most 1,024; POSIX promises 16)."""
    try:
        return max(16, min(os.sysconf("SC_IOV_MAX"), 1024))
    except (AttributeError, ValueError, OSError):
        return 16


_IOV_MAX = _read_iov_max()


class Worker(Protocol):
    """Runs the engine on batches of records."""

    def deliver(self, batch: list[bytes], force: bool = False) -> bool:
        """Hand over a batch of records (lines); False when it was refused (the engine is too far behind, and
        ``force`` is not set)."""
        ...

    def flush(self) -> bool:
        """Hand over what waits, without blocking; True when nothing is left."""
        ...

    def close(self, timeout: float) -> None:
        """Stop the engine, waiting at most ``timeout`` seconds."""
        ...

    @property
    def alive(self) -> bool:
        """False once the engine stopped for good."""
        ...


class ThreadWorker:
    """The engine on the calling thread (the processor's delivery thread): no process, no copies."""

    def __init__(self, monitor: SessionMonitor, on_output: Output, config: ProcessorConfig) -> None:
        self.engine = SpanEngine(monitor, on_output, config)

    def deliver(self, batch: list[bytes], force: bool = False) -> bool:
        """Handle each record now."""
        handle = self.engine.handle
        for line in batch:
            handle(orjson.loads(line))
        self.engine.end_batch()
        return True

    def flush(self) -> bool:
        """Nothing waits."""
        return True

    def close(self, timeout: float) -> None:
        """Nothing runs in the background."""

    @property
    def alive(self) -> bool:
        """Always."""
        return True


class ProcessWorker:
    """The engine in a child process (``python -m monitor.otel._child``), fed through its standard input.

    The child reads ``config`` first (pickled, :func:`~monitor.otel._config.pack_config`; raises ValueError
    when its rules cannot be). Batches are written without blocking, as far as the pipe takes them; the rest
    waits in memory, at most ``config.max_queue_bytes`` of it, for the next :meth:`flush`; the lines are
    written as they are, many in one system call, never joined. A reader thread passes each message the child
    writes to ``on_output`` and calls ``on_exit`` when the child's output ends while the worker was not
    closing.
    """

    def __init__(
        self,
        config: ProcessorConfig,
        on_output: Output,
        on_exit: Callable[[ProcessWorker], None],
        on_thread: Callable[[], None],
    ) -> None:
        packed = pack_config(config)
        self._on_output = on_output
        self._on_exit = on_exit
        self._on_thread = on_thread
        self._max_bytes = config.max_queue_bytes
        self._closing = False
        self._waiting: deque[bytes | memoryview] = deque()
        self._waiting_bytes = 0
        self.process = subprocess.Popen(
            [sys.executable, "-m", "monitor.otel._child"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            close_fds=True,
            env=make_child_environment(os.environ),
        )
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        self._stdin: IO[bytes] = stdin
        self._stdout: IO[bytes] = stdout
        self._fd = stdin.fileno()
        for stream in (stdin, stdout):
            with contextlib.suppress(OSError):  # not Linux, or above the system's limit: keep the default
                fcntl.fcntl(stream.fileno(), _F_SETPIPE_SZ, _PIPE_SIZE)
        os.set_blocking(self._fd, False)
        self._queue([len(packed).to_bytes(8, "big") + packed])
        self._reader = threading.Thread(target=self._read, name="trifecta-monitor-reader", daemon=True)
        self._reader.start()
        self.flush()

    def deliver(self, batch: list[bytes], force: bool = False) -> bool:
        """Write the batch as far as the pipe takes it; False (nothing kept) if ``max_bytes`` already wait,
        unless ``force`` (for requests, which are small and must not be lost)."""
        if not force and self._waiting and self._waiting_bytes + sum(map(len, batch)) > self._max_bytes:
            self.flush()
            return False
        self._queue(batch)
        self.flush()
        return True

    def flush(self) -> bool:
        """Write what waits, without blocking; True when nothing is left (raises OSError once the child is gone)."""
        waiting = self._waiting
        while waiting:
            try:
                written = os.writev(self._fd, list(itertools.islice(waiting, _IOV_MAX)))
            except BlockingIOError:
                return False
            self._waiting_bytes -= written
            while written:
                first = waiting[0]
                if written < len(first):  # the pipe is full: the rest of this line goes next time
                    waiting[0] = memoryview(first)[written:]
                    return False
                written -= len(first)
                waiting.popleft()
        return True

    def close(self, timeout: float) -> None:
        """Write what waits (blocking, at most ``timeout``), close the child's input, wait for it to finish."""
        self._closing = True
        deadline = time.monotonic() + timeout
        try:
            while not self.flush() and time.monotonic() < deadline:
                time.sleep(0.005)
        except OSError:
            pass
        with contextlib.suppress(OSError):
            self._stdin.close()
        try:
            self.process.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._reader.join(timeout)

    def abandon(self) -> None:
        """In a forked copy of the application: close this copy's ends of the pipes, leave the child alone.

        The file objects may be locked by the parent's reader thread, which did not survive the fork: their
        descriptors are closed directly, and the objects kept for good, so that they never close a number
        reused since.
        """
        self._closing = True
        for stream in (self._stdin, self._stdout):
            with contextlib.suppress(OSError, ValueError):
                os.close(stream.fileno())
        _ABANDONED.append(self)

    @property
    def alive(self) -> bool:
        """True while the child runs."""
        return self.process.poll() is None

    @property
    def backlog(self) -> bool:
        """True while written batches wait for room in the pipe."""
        return bool(self._waiting)

    def _queue(self, lines: list[bytes]) -> None:
        self._waiting.extend(lines)
        self._waiting_bytes += sum(map(len, lines))

    def _read(self) -> None:
        # Whatever the pipe holds is read at once, and its messages handled in one go: fewer wake-ups, each
        # of which takes the interpreter's lock from the application's threads.
        self._on_thread()
        fd = self._stdout.fileno()
        rest = b""
        try:
            while True:
                chunk = os.read(fd, _PIPE_SIZE)
                if not chunk:
                    break
                lines = (rest + chunk if rest else chunk).split(b"\n")
                rest = lines.pop()
                for line in lines:
                    try:
                        message = orjson.loads(line)
                    except orjson.JSONDecodeError:
                        logger.warning("trifecta-monitor: unreadable line from the engine process: %.200r", line)
                        continue
                    self._on_output(message)
        except (OSError, ValueError):
            pass
        finally:
            if not self._closing:
                self._on_exit(self)


_AUTO_INSTRUMENTATION = os.path.join("opentelemetry", "instrumentation", "auto_instrumentation")


def make_child_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The engine process's environment: this one's, without what ``opentelemetry-instrument`` adds to
    instrument a program (its ``sitecustomize`` folder on ``PYTHONPATH``), so that the engine process is not
    instrumented itself (its exporters would write into the pipe, and its processor start another engine)."""
    env = dict(environ)
    path = env.get("PYTHONPATH")
    if path is not None:
        kept = [part for part in path.split(os.pathsep) if not os.path.normpath(part).endswith(_AUTO_INSTRUMENTATION)]
        if kept:
            env["PYTHONPATH"] = os.pathsep.join(kept)
        else:
            del env["PYTHONPATH"]
    return env
