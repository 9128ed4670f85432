"""The engine process's inbox: it reads the pipe as data arrives, up to its bound, and loses nothing."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

from monitor.otel._child import _CHUNK, _Inbox

Waiter = Callable[..., bool]  # the wait_for fixture


def test_inbox_reads_ahead_up_to_its_bound_then_leaves_the_rest_in_the_pipe(wait_for: Waiter) -> None:
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    bound = 64 * 1024
    inbox = _Inbox(read_fd, bound)
    lines = [f"record {n:06d} ".encode() + b"x" * 100 + b"\n" for n in range(5_000)]  # about 570 KB
    data = b"".join(lines)
    # Written as fast as the pipe takes it: the inbox drains it into memory, but only up to its bound.
    written = 0
    deadline = time.monotonic() + 10
    while written < len(data) and time.monotonic() < deadline:
        taken_by_pipe = _write(write_fd, data[written : written + 8192])
        if taken_by_pipe is None:  # the pipe is full
            if inbox.size >= bound:
                break
            time.sleep(0.01)
            continue
        written += taken_by_pipe
    assert wait_for(lambda: inbox.size >= bound)
    time.sleep(0.2)
    assert bound <= inbox.size < bound + _CHUNK  # reading paused at the bound
    assert written < len(data)  # and the rest waits in the pipe (or with the writer)

    taken = bytearray()

    def drain() -> None:
        while (chunk := inbox.take()) is not None:
            taken.extend(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    os.set_blocking(write_fd, True)
    os.write(write_fd, data[written:])
    os.close(write_fd)
    reader.join(10)
    assert not reader.is_alive()  # take() answers None once the input ended and everything was taken
    assert bytes(taken) == data  # in order, nothing lost
    os.close(read_fd)


def test_inbox_hands_over_what_arrived_without_waiting_for_more() -> None:
    read_fd, write_fd = os.pipe()
    inbox = _Inbox(read_fd, 1 << 30)
    os.write(write_fd, b"a\n")
    assert inbox.take() == b"a\n"  # waits for data, then returns it without waiting for more
    os.write(write_fd, b"b\n")
    os.write(write_fd, b"c\n")
    got = b""
    while got != b"b\nc\n":
        chunk = inbox.take()
        assert chunk is not None
        got += chunk
    os.close(write_fd)
    assert inbox.take() is None
    os.close(read_fd)


def _write(fd: int, data: bytes) -> int | None:
    """Write without blocking; the number of bytes the pipe took (None when it took none)."""
    try:
        return os.write(fd, data) if data else 0
    except BlockingIOError:
        return None
