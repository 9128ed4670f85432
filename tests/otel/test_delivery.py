"""The delivery: the bounded queue to the engine, its thread, and the engine's restarts and fallback."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import orjson
import pytest

from monitor.otel import WorkerKind
from monitor.otel import _delivery as delivery_module
from monitor.otel import _records as rec
from monitor.otel._config import ProcessorConfig
from monitor.otel._delivery import Delivery
from monitor.otel._failures import Failures
from monitor.otel._progress import EngineProgress
from monitor.otel._workers import ThreadWorker
from monitor.session import SessionMonitor

Waiter = Callable[..., bool]  # the wait_for fixture


class Listener:
    """Keeps what the delivery tells; the engine's sessions are ``held``."""

    def __init__(self, held: list[str] | None = None) -> None:
        self.messages: list[list[Any]] = []
        self.lost: list[bytes] = []
        self.exits = 0
        self.held = held or []

    def on_output(self, message: list[Any]) -> None:
        self.messages.append(message)

    def on_tick(self, now: float) -> None:
        pass

    def on_lost(self, lines: list[bytes]) -> None:
        self.lost.extend(lines)

    def on_exit(self) -> list[str]:
        self.exits += 1
        return list(self.held)


def progress() -> EngineProgress:
    """The progress the session links would share with the delivery."""
    return EngineProgress(ProcessorConfig().max_sessions)


def make_end(span: int, session: str) -> tuple[Any, ...]:
    """The record of an ended ``execute_tool`` span."""
    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "mcp__web__fetch"}
    return rec.make_end(1.0, span, 7, 0, session, "execute_tool", 1, 2, 0, attributes)


def test_spans_beyond_the_bound_are_dropped_counted_and_their_session_told(wait_for: Waiter) -> None:
    failures = Failures()
    delivery = Delivery(
        ProcessorConfig(max_queue_bytes=1_000), time.monotonic, failures, None, None, WorkerKind.THREAD, progress()
    )
    entered, released = threading.Event(), threading.Event()
    delivered: list[bytes] = []

    def deliver(batch: list[bytes]) -> None:  # the engine, held with the first batch
        entered.set()
        released.wait(10)
        delivered.extend(batch)

    delivery._deliver = deliver  # type: ignore[method-assign]
    delivery.start(Listener())
    delivery.put(make_end(1, "s"), "s")
    assert entered.wait(5)
    for span in range(2, 40):
        delivery.put(make_end(span, "s"), "s")
    delivery.put_request((rec.REQUEST, 1, rec.ASK_FLUSH, None))  # a request is never dropped
    kept = 38 - delivery.dropped
    assert 0 < kept < 38 and failures.read() == {}
    released.set()
    assert wait_for(lambda: any(line.startswith(b'["g"') for line in delivered))
    records = [orjson.loads(line) for line in delivered]
    # Each batch ends with a mark: every record numbered up to it (the spans kept and the request) came before.
    marks = [r[rec.M_NUMBER] for r in records if r[0] == rec.MARK]
    assert marks == [1, 1 + kept + 1] and records[-1][0] == rec.MARK
    records = [r for r in records if r[0] != rec.MARK]
    delivered = [line for line in delivered if not line.startswith(b'["m"')]
    assert [r[0] for r in records] == [rec.END] * (1 + kept) + [rec.REQUEST, rec.GAP]  # in order, the gap last
    waited = sum(len(line) for line in delivered[1 : 1 + kept])  # the spans that waited behind the first
    assert 1_000 <= waited < 1_000 + len(delivered[1])  # records are taken until max_queue_bytes wait
    assert records[-1][rec.G_SESSION] == "s" and records[-1][rec.G_COUNT] == delivery.dropped
    delivery.close()


class DyingWorker:
    """An engine process that dies with each batch it is given."""

    started = 0

    def __init__(self, config: ProcessorConfig, on_output: Any, on_exit: Any, on_thread: Any) -> None:
        DyingWorker.started += 1
        self.on_exit = on_exit

    def deliver(self, batch: list[bytes], force: bool = False) -> bool:
        self.on_exit(self)
        return True

    def flush(self) -> bool:
        return True

    def close(self, timeout: float) -> None:
        pass


def test_a_dying_engine_process_is_restarted_then_the_engine_runs_on_a_thread(
    monkeypatch: pytest.MonkeyPatch, wait_for: Waiter
) -> None:
    monkeypatch.setattr(delivery_module, "ProcessWorker", DyingWorker)
    DyingWorker.started = 0
    failures = Failures()
    delivery = Delivery(ProcessorConfig(), time.monotonic, failures, None, None, WorkerKind.PROCESS, progress())
    listener = Listener(held=["s"])  # each death tells session "s", which makes the next batch
    delivery.start(listener)
    delivery.put(make_end(1, "s"), "s")
    assert wait_for(lambda: isinstance(delivery.worker, ThreadWorker))
    assert DyingWorker.started == 4 and listener.exits == 4  # the first and three restarts
    assert failures.read() == {"worker_exit": 4} and isinstance(delivery.monitor, SessionMonitor)
    assert wait_for(lambda: any(m[0] == rec.OUT_ALERT for m in listener.messages))  # the gap, told by the thread
    gap = next(m for m in listener.messages if m[0] == rec.OUT_ALERT)[-1]
    assert gap.session_id == "s" and gap.alert.kind.value == "monitoring-gap"
    delivery.close()


def test_a_batch_that_cannot_be_delivered_is_lost_and_counted(wait_for: Waiter) -> None:
    failures = Failures()
    delivery = Delivery(
        ProcessorConfig(), time.monotonic, failures, None, SessionMonitor(), WorkerKind.THREAD, progress()
    )

    def refuse(batch: list[bytes]) -> None:
        raise OSError("injected")

    delivery._deliver = refuse  # type: ignore[method-assign]
    listener = Listener()
    delivery.start(listener)
    delivery.put_request((rec.REQUEST, 3, rec.ASK_FLUSH, None))
    assert wait_for(lambda: bool(listener.lost))
    assert orjson.loads(listener.lost[0]) == [rec.REQUEST, 3, rec.ASK_FLUSH, None]
    assert failures.read() == {"deliver": 1}
    delivery.close()
