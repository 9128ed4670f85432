"""The stdio plumbing of the proxy: the client's lines on standard input, and the server's process.

Standard input is read by a daemon thread, not an anyio worker thread: when the server exits first, the proxy
must end at once, and a worker thread blocked in ``readline`` would hold the process open until the client
wrote another line. The server's process is the one the ``mcp`` SDK's ``stdio_client`` starts; the proxy
notes it as it is created, to exit with its code.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

_QUEUED_LINES = 16
_READ_SIZE = 65536
# The function of mcp.client.stdio that starts the server's process (its process is not exposed otherwise).
_SPAWN = "_create_platform_compatible_process"


class StdinLines:
    """The lines of an input file descriptor as text (UTF-8, undecodable bytes replaced), as an async iterator.

    A daemon thread reads the descriptor with ``os.read`` (no buffered file object, whose lock a thread blocked
    in a read would hold at interpreter exit); :meth:`start` must be called inside the event loop. The
    iterator ends at the end of the input.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        send, receive = anyio.create_memory_object_stream[str](_QUEUED_LINES)
        self._send: MemoryObjectSendStream[str] = send
        self._receive: MemoryObjectReceiveStream[str] = receive

    def start(self) -> None:
        """Start the reading thread (from inside the event loop)."""
        token = anyio.lowlevel.current_token()
        thread = threading.Thread(target=self._pump, args=(token,), name="trifecta-proxy-stdin", daemon=True)
        thread.start()

    def _pump(self, token: Any) -> None:
        pending = b""
        try:
            while chunk := os.read(self._fd, _READ_SIZE):
                pending += chunk
                while b"\n" in pending:
                    line, pending = pending.split(b"\n", 1)
                    self._deliver(line + b"\n", token)
            if pending:
                self._deliver(pending, token)
        except (RuntimeError, OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass  # the loop is gone, or the input was closed under the read: either way reading is over
        with contextlib.suppress(RuntimeError):
            anyio.from_thread.run_sync(self._send.close, token=token)

    def _deliver(self, line: bytes, token: Any) -> None:
        anyio.from_thread.run(self._send.send, line.decode("utf-8", errors="replace"), token=token)

    def __aiter__(self) -> StdinLines:
        return self

    async def __anext__(self) -> str:
        try:
            return await self._receive.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None


class ProcessWatch:
    """Notes the process that ``mcp.client.stdio.stdio_client`` starts, to read its exit code afterwards.

    Use :meth:`watching` around the ``stdio_client`` call. When the SDK starts processes some other way, no
    process is noted and :attr:`returncode` stays None.
    """

    def __init__(self) -> None:
        self.process: Any = None

    @property
    def returncode(self) -> int | None:
        """The exit code of the noted process (negative: killed by that signal); None while it runs."""
        code = getattr(self.process, "returncode", None)
        return code if isinstance(code, int) else None

    @contextlib.contextmanager
    def watching(self) -> Iterator[None]:
        """Note the next process the SDK's stdio client creates."""
        from mcp.client import stdio

        create: Callable[..., Awaitable[Any]] | None = getattr(stdio, _SPAWN, None)
        if create is None:
            yield
            return

        async def noted(*args: Any, **kwargs: Any) -> Any:
            process = await create(*args, **kwargs)
            self.process = process
            return process

        setattr(stdio, _SPAWN, noted)
        try:
            yield
        finally:
            setattr(stdio, _SPAWN, create)


def exit_status(returncode: int | None) -> int:
    """Return the proxy's exit status for the server's exit code: the code itself, 128 + N for a process
    killed by signal N (as shells report it), 1 when it is unknown."""
    if returncode is None:
        return 1
    if returncode < 0:
        return 128 - returncode
    return returncode
