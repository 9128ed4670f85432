"""The engine process of the span processor: ``python -m monitor.otel.child``, started by the processor.

Reads its configuration (an 8-byte length, then a pickle), then one record per line on standard input; writes
the engine's messages, one per line, on standard output; ends when its input ends. Log records of WARNING and
above are sent to the processor, which logs them in the application's process.
"""

from __future__ import annotations

import logging
import os
import pickle
import sys
import traceback
from typing import Any

import orjson

from monitor.otel import records as rec
from monitor.otel.engine import SpanEngine
from monitor.session.monitor import SessionMonitor

__all__ = ["run_child"]

_CHUNK = 1 << 20


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
    config = pickle.loads(bytes(pending[8 : 8 + size]))
    rest = bytes(pending[8 + size :])
    out: list[list[Any]] = []
    root = logging.getLogger()
    root.handlers[:] = [_ForwardHandler(out)]
    root.setLevel(logging.WARNING)
    engine = SpanEngine(SessionMonitor(**config["monitor"]), out.append, **config["engine"])
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
        engine.end_batch()
        if out:
            try:
                stdout.write(b"".join(orjson.dumps(message, default=str) + b"\n" for message in out))
                stdout.flush()
            except BrokenPipeError:
                return 0  # the processor is gone
            out.clear()
        chunk = os.read(fd, _CHUNK)
        if not chunk:
            break
        rest += chunk
    return 0


if __name__ == "__main__":
    sys.exit(run_child())
