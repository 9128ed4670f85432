"""The engine process's inbox: it reads the pipe as data arrives, up to its bound, and loses nothing; a backlog
past its memory share waits in a temporary file, in order."""

from __future__ import annotations

import logging
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from monitor.otel import _child
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


def _lines(count: int, width: int = 200) -> bytes:
    return b"".join(f"record {n:07d} ".encode() + b"x" * width + b"\n" for n in range(count))


def _drain(inbox: _Inbox) -> bytes:
    taken = bytearray()
    while (chunk := inbox.take()) is not None:
        taken.extend(chunk)
    return bytes(taken)


def _feed(write_fd: int, data: bytes) -> threading.Thread:
    def write() -> None:
        os.write(write_fd, data)
        os.close(write_fd)

    writer = threading.Thread(target=write)
    writer.start()
    return writer


def test_a_backlog_past_the_memory_share_waits_in_a_file_and_comes_back_in_order(wait_for: Waiter) -> None:
    read_fd, write_fd = os.pipe()
    memory = 64 * 1024
    inbox = _Inbox(read_fd, 16 << 20, memory_bytes=memory)
    data = _lines(20_000)  # about 4 MB, 60 times the memory share
    writer = _feed(write_fd, data)
    assert wait_for(lambda: inbox.ended)
    writer.join(10)
    assert inbox.size == len(data)  # all of it read off the pipe, so the processor's side holds none
    assert inbox.spilled >= len(data) - memory - _CHUNK  # and nearly all of it waits on disk, not in memory
    assert inbox.size - inbox.spilled <= memory
    assert _drain(inbox) == data
    assert inbox.size == inbox.spilled == 0
    os.close(read_fd)


def test_records_keep_their_order_while_the_backlog_moves_between_memory_and_file(wait_for: Waiter) -> None:
    read_fd, write_fd = os.pipe()
    inbox = _Inbox(read_fd, 1 << 30, memory_bytes=3000)
    rng = random.Random(7)
    data = _lines(3_000, width=40)
    sent = 0
    got = bytearray()
    # Bursts and pauses: the reader takes some, more arrives, the file empties and fills again.
    while sent < len(data):
        step = rng.randrange(1, 6_000)
        os.write(write_fd, data[sent : sent + step])
        sent += step
        # Read off the pipe at once, also while the file holds older records (they are not taken meanwhile).
        expected = min(sent, len(data))
        assert wait_for(lambda: inbox.size + len(got) == expected, timeout=5)  # noqa: B023 - used at once
        for _ in range(rng.randrange(0, 3)):
            if inbox.size:
                chunk = inbox.take()
                assert chunk is not None
                got.extend(chunk)
    os.close(write_fd)
    got.extend(_drain(inbox))
    assert bytes(got) == data
    os.close(read_fd)


def test_without_a_temporary_file_the_backlog_waits_in_memory_and_says_so(
    wait_for: Waiter, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tempfile, "TemporaryFile", refuse)
    read_fd, write_fd = os.pipe()
    inbox = _Inbox(read_fd, 16 << 20, memory_bytes=8 * 1024)
    data = _lines(5_000)
    writer = _feed(write_fd, data)
    assert wait_for(lambda: inbox.ended)
    writer.join(10)
    assert inbox.spilled == 0 and inbox.size == len(data)
    # Said once, on the thread that takes the records (log records go out from the engine's thread).
    with caplog.at_level(logging.WARNING, logger=_child.__name__):
        assert _drain(inbox) == data
    warned = [r for r in caplog.records if "temporary file failed" in r.getMessage()]
    assert len(warned) == 1 and "No space left" in warned[0].getMessage()
    assert warned[0].threadName == threading.current_thread().name
    os.close(read_fd)


def test_a_file_that_stops_taking_writes_keeps_the_order_nothing_lost(
    wait_for: Waiter, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = os.pwrite
    writes = {"n": 0}

    def fail_after_three(fd: int, data: bytes, offset: int) -> int:
        writes["n"] += 1
        if writes["n"] > 3:
            raise OSError(28, "No space left on device")
        return real(fd, data, offset)

    monkeypatch.setattr(os, "pwrite", fail_after_three)
    read_fd, write_fd = os.pipe()
    inbox = _Inbox(read_fd, 1 << 30, memory_bytes=4 * 1024)
    data = _lines(20_000)
    writer = _feed(write_fd, data)
    # The file took three chunks, then failed: newer records wait until it is read empty, then go to memory.
    assert wait_for(lambda: writes["n"] > 3)
    time.sleep(0.2)
    assert inbox.spilled > 0
    got = _drain(inbox)
    writer.join(10)
    assert got == data
    assert writes["n"] > 3
    os.close(read_fd)


def _write(fd: int, data: bytes) -> int | None:
    """Write without blocking; the number of bytes the pipe took (None when it took none)."""
    try:
        return os.write(fd, data) if data else 0
    except BlockingIOError:
        return None


class _Engine:
    session_count = 10

    def __init__(self) -> None:
        self.shed = 0

    def shed_sessions(self) -> int:
        self.shed += 1
        return 1


def test_the_memory_bound_counts_the_whole_resident_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    resident = {"bytes": 999}
    monkeypatch.setattr(_child, "read_resident_bytes", lambda: resident["bytes"])
    engine = _Engine()
    bound = _child._MemoryBound(1_000)

    def look() -> None:
        for _ in range(_child._MEMORY_CHECK):
            bound.count(engine)  # type: ignore[arg-type]

    look()
    assert engine.shed == 0  # under the bound
    resident["bytes"] = 1_001
    look()
    assert engine.shed == 1  # over it: the least recently active sessions go
    look()
    assert engine.shed == 1  # and not again until the memory grew by a thirty-second of the bound since
    resident["bytes"] = 1_001 + 1_000 // 32 + 1
    look()
    assert engine.shed == 2


def _limit_file(monkeypatch: pytest.MonkeyPatch, room: int) -> None:
    """The temporary file takes ``room`` bytes in all, as under a file-size limit or on a full disk: a short
    write, then an error."""
    real = os.pwrite
    left = {"bytes": room}

    def short(fd: int, data: Any, offset: int) -> int:
        if left["bytes"] <= 0:
            raise OSError(28, "No space left on device")
        part = bytes(data[: left["bytes"]])
        left["bytes"] -= len(part)
        return real(fd, part, offset)

    monkeypatch.setattr(os, "pwrite", short)


def _start_taking(inbox: _Inbox) -> tuple[threading.Thread, list[bytes]]:
    """Take everything from ``inbox`` on a thread (the engine's side); its list gets all it took at the end."""
    got: list[bytes] = []
    taker = threading.Thread(target=lambda: got.append(_drain(inbox)), daemon=True)
    taker.start()
    return taker, got


def _check_handed_over(taker: threading.Thread, got: list[bytes], writer: threading.Thread, data: bytes) -> None:
    """The taker got everything written, in order, and ended (bounded: a deadlock fails, not hangs)."""
    taker.join(60)
    assert not taker.is_alive(), "the records were never all handed over"
    writer.join(10)
    assert got == [data]


def test_a_file_that_fills_up_part_way_through_a_write_loses_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    _limit_file(monkeypatch, 300_000)
    read_fd, write_fd = os.pipe()
    inbox = _Inbox(read_fd, 1 << 30, memory_bytes=4 * 1024)
    data = _lines(6_000)  # about 1.3 MB, four times what the file takes
    writer = _feed(write_fd, data)
    taker, got = _start_taking(inbox)
    _check_handed_over(taker, got, writer, data)
    os.close(read_fd)


def test_a_short_write_while_the_engine_waits_for_records_hands_them_over(
    wait_for: Waiter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine already waits for records when a burst reaches the file and the file takes only part of it:
    the part in the file is handed over first, then the rest (neither side waits for the other)."""
    _limit_file(monkeypatch, 5_000)
    read_fd, write_fd = os.pipe()
    inbox = _Inbox(read_fd, 1 << 30, memory_bytes=4 * 1024)
    taker, got = _start_taking(inbox)
    assert wait_for(lambda: len(inbox.ready._waiters) == 1)  # type: ignore[attr-defined]  # the taker waits
    data = _lines(45)  # about 10 kB in one write: past the memory share, twice what the file takes
    writer = _feed(write_fd, data)
    _check_handed_over(taker, got, writer, data)
    os.close(read_fd)


def test_records_the_file_cannot_give_back_are_reported_and_the_rest_still_read(
    wait_for: Waiter, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    read_fd, write_fd = os.pipe()
    inbox = _Inbox(read_fd, 16 << 20, memory_bytes=1024)
    first = _lines(2_000)
    os.write(write_fd, first)
    assert wait_for(lambda: inbox.size == len(first))
    spilled = inbox.spilled
    assert spilled > 0

    def broken(*_args: Any) -> bytes:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "pread", broken)
    with caplog.at_level(logging.ERROR, logger=_child.__name__):
        got = bytearray()
        while inbox.size:
            chunk = inbox.take()
            assert chunk is not None
            got.extend(chunk)
    lost = f"{spilled} bytes of records waiting for the engine could not be read back"
    assert [r.getMessage() for r in caplog.records] == [lost]
    assert len(got) == len(first) - spilled
    monkeypatch.undo()
    second = _lines(10)
    writer = _feed(write_fd, second)
    assert _drain(inbox) == second  # what came after is read as usual
    writer.join(10)
    os.close(read_fd)


def test_the_memory_of_ended_sessions_goes_back_to_the_system() -> None:
    # In a process of its own: 200 MiB freed below a block still in use stays in the C heap until trimmed.
    script = """
from monitor.otel._child import read_resident_bytes, release_memory
blocks = [bytes(2048) + str(i).encode() for i in range(100_000)]
pins = [bytes(2048) for _ in range(100)]
before = read_resident_bytes()
del blocks
print(before, release_memory())
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    before, after = map(int, done.stdout.split())
    assert before - after > 150 << 20, (before >> 20, after >> 20)
