"""Delivery: the queue of records for the engine, the thread that hands it over, and the engine's supervision.

On the application's threads, each record is written as one line (:mod:`monitor.otel._records`) and appended
to a list under a lock, in one step (a bytearray grown and emptied instead reallocates, and faults in fresh
pages, as it goes), until ``max_queue_bytes`` wait: beyond that a span is dropped, counted, and its session
told (a ``monitoring-gap`` alert). While spans come apart (the delivery thread found at most
:data:`_PROMPT_BATCH` records the last time it looked), a record queued while the thread waits wakes it, so
that a call's decision comes back, and is stamped on the session's next spans, as soon as the engine made it;
during a burst it looks every :data:`_BUSY_WAIT` seconds instead, so that it takes the interpreter's lock from
the application's threads once per batch, not once per span. The delivery thread takes the whole list and
hands it, in order, to the worker (:mod:`monitor.otel._workers`): the engine process, started with the first batch
and again when it dies, or, after repeated deaths or when no process can be started, the engine on the
delivery thread itself.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, Protocol

from monitor.otel import _records as rec
from monitor.otel._config import ProcessorConfig, WorkerKind
from monitor.otel._exporters import MetricsExporter
from monitor.otel._failures import Failures
from monitor.otel._progress import EngineProgress
from monitor.otel._workers import ProcessWorker, ThreadWorker, Worker
from monitor.session import SessionMonitor

logger = logging.getLogger("monitor.otel")

_BUSY_WAIT = 0.05  # seconds between deliveries while spans flow (each wakes a thread that needs the GIL)
_IDLE_WAIT = 0.25  # seconds between looks when nothing flowed for a while
_IDLE_AFTER = 50  # empty looks before the delivery thread slows down
_PROMPT_BATCH = 16  # records found at most in one look for the next record queued to wake the thread at once
_MAX_RESTARTS = 3  # engine processes started again after one died, before falling back to a thread
_GAPS_KEPT = 10_000  # sessions with dropped spans remembered until the engine is told


class Numbered(Protocol):
    """What takes the number of a request as it is queued (before the engine can answer it)."""

    number: int


class Listener(Protocol):
    """What the delivery tells the rest of the processor (on its own threads)."""

    def on_output(self, message: list[Any]) -> None:
        """A message of the engine (on the reader or delivery thread)."""
        ...

    def on_tick(self, now: float) -> None:
        """A pass of the delivery thread, at ``now`` (the processor's clock)."""
        ...

    def on_lost(self, lines: list[bytes]) -> None:
        """Records that could not be delivered."""
        ...

    def on_exit(self) -> list[str]:
        """The engine process died; the sessions it held (each gets a ``monitoring-gap`` alert)."""
        ...


class Delivery:
    """The bounded queue to the engine, the delivery thread, and the worker it feeds.

    Nothing is delivered until :meth:`start` names the :class:`Listener` that hears what comes back. What
    fails on the delivery thread is counted (``deliver``, ``start_worker``, ``worker_exit``), never raised.
    ``monitor`` is the one an engine on a thread feeds (None: one is made from ``config`` when needed).
    Each record is numbered as it is queued, and ``progress`` told (:mod:`~monitor.otel._progress`: the one the
    session links stamp spans from); each batch ends with a mark the engine acknowledges.
    """

    def __init__(
        self,
        config: ProcessorConfig,
        clock: Callable[[], float],
        failures: Failures,
        metrics: MetricsExporter | None,
        monitor: SessionMonitor | None,
        worker_kind: WorkerKind,
        progress: EngineProgress,
    ) -> None:
        self._config = config
        self._progress = progress
        self._clock = clock
        self._failures = failures
        self._metrics = metrics
        self.monitor = monitor
        """The monitor an engine on a thread feeds (None while the engine runs in its process)."""
        self.worker_kind = worker_kind
        """Where the engine runs (a process falls back to a thread when none can be started)."""
        self.dropped = 0
        """Spans not analysed because the queue to the engine was full."""
        self.own_threads: set[int] = set()
        """The threads of the delivery and of its worker, on which spans are not processed."""
        self._restarts = 0
        self._listener: Listener | None = None
        self._reset()

    def start(self, listener: Listener) -> None:
        """Start the delivery thread; ``listener`` hears the engine's messages and the delivery's news."""
        self._listener = listener
        self._thread.start()

    def _reset(self) -> None:
        """A fresh queue and delivery thread, not started yet (at start, and in a forked child)."""
        self._queue_lock = threading.Lock()
        self._queued: list[bytes] = []
        self._queued_bytes = 0
        self._number = 0  # the last record numbered (the engine acknowledges numbers, see _progress)
        self._marked = 0  # the last number a mark was sent for
        self._gaps_lock = threading.Lock()
        self._gaps: dict[str, int] = {}
        self.own_threads.clear()
        self._wake = threading.Event()
        self._idle = False
        self._asleep = False  # the delivery thread waits (or is about to) with nothing queued
        self._prompt = True  # spans come apart: a record queued wakes the delivery thread at once
        self._worker: Worker | None = None
        self._worker_lock = threading.Lock()
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._pump, name="trifecta-monitor-delivery", daemon=True)

    # -- the application's side ---------------------------------------------------------------------

    @property
    def worker(self) -> Worker | None:
        """The worker running the engine now (None before the first batch, and after a death)."""
        return self._worker

    @property
    def active(self) -> bool:
        """True once an engine was started or records wait for one."""
        return self._worker is not None or bool(self._queued)

    def put(self, record: tuple[Any, ...], session: str) -> None:
        """Queue a span's record; when ``max_queue_bytes`` wait already, drop it (counted, its session told)."""
        if self._queued_bytes >= self._config.max_queue_bytes:
            self._drop(session)
            return
        line = rec.dump_record(record)
        with self._queue_lock:
            self._queued.append(line)
            self._queued_bytes += len(line)
            self._number += 1
            self._progress.note(session, self._number)
        if self._asleep and (self._prompt or self._idle):
            self._asleep = False
            self._idle = False
            self._wake.set()

    def put_request(self, record: tuple[Any, ...], reply: Numbered | None = None, session: str | None = None) -> None:
        """Queue a request (never dropped) and hand the queue over at once. ``reply`` takes the request's number
        (its answer acknowledges every record up to it); ``session`` is the one it is about, if any."""
        line = rec.dump_record(record)
        with self._queue_lock:
            self._number += 1
            self._queued.append(line)
            self._queued_bytes += len(line)
            if reply is not None:
                reply.number = self._number
            if session is not None:
                self._progress.note(session, self._number)
        self._idle = False
        self._wake.set()

    def close(self) -> None:
        """Stop the delivery thread (waiting up to 30 s) and the engine (up to 10 s)."""
        self._stopped.set()
        self._wake.set()
        self._thread.join(30.0)
        with self._worker_lock:
            worker, self._worker = self._worker, None
        if worker is not None:
            try:
                worker.close(10.0)
            except Exception:
                self._failures.fail("shutdown")

    def after_fork(self) -> None:
        """In a forked child: let go of the parent's engine process, start a fresh queue and thread."""
        worker = self._worker
        if isinstance(worker, ProcessWorker):
            worker.abandon()  # the parent's engine: let go of our copies of its pipes
        self._reset()
        self._thread.start()

    def _drop(self, session: str) -> None:
        first = self.dropped == 0
        self.dropped += 1
        self._progress.lose((session,))
        with self._gaps_lock:
            if session in self._gaps or len(self._gaps) < _GAPS_KEPT:
                self._gaps[session] = self._gaps.get(session, 0) + 1
        if self._metrics is not None:
            self._metrics.count_dropped()
        if first:
            logger.warning(
                "trifecta-monitor: the queue to the engine is full: spans are dropped, counted, and their "
                "sessions get a monitoring-gap alert"
            )

    # -- the delivery thread ------------------------------------------------------------------------

    def _pump(self) -> None:
        """The delivery thread: hands the queue to the engine, in order, until the processor stops."""
        listener = self._listener
        assert listener is not None  # set by start()
        self.own_threads.add(threading.get_ident())
        empty = 0
        while True:
            self._asleep = True
            if not self._queued:  # a record queued from here on sets the event: the wait ends at once
                self._wake.wait(_IDLE_WAIT if self._idle else _BUSY_WAIT)
            self._asleep = False
            self._wake.clear()
            with self._queue_lock:
                lines, self._queued = self._queued, []
                self._queued_bytes = 0
                number = self._number
            self._prompt = len(lines) <= _PROMPT_BATCH
            with self._gaps_lock:
                gaps, self._gaps = self._gaps, {}
            now = self._clock()
            listener.on_tick(now)
            lines.extend(rec.dump_record((rec.GAP, now, session, count)) for session, count in gaps.items())
            if lines and number > self._marked:
                lines.append(rec.dump_record((rec.MARK, number)))
                self._marked = number
            worker = self._worker
            if lines:
                empty = 0
                try:
                    self._deliver(lines)
                except BaseException:  # the engine on this thread runs a user's sink: nothing ends this thread
                    self._failures.fail("deliver")
                    listener.on_lost(lines)
            elif worker is not None and not self._flush_worker(worker):
                empty = 0  # written batches wait for the engine process: look again soon
            elif self._stopped.is_set():
                return
            else:
                empty += 1
                if empty >= _IDLE_AFTER:
                    self._idle = True

    def _deliver(self, batch: list[bytes]) -> None:
        """Hand a batch of written records (one line each) to the engine."""
        # A process that cannot be started falls back to a thread: the second attempt makes that.
        worker = self._worker or self._start_worker() or self._start_worker()
        if worker is None:
            self._drop_batch(batch)
            return
        if not worker.deliver(batch):
            # The engine is that far behind: its spans are dropped (their sessions told), requests still go.
            kept = self._drop_batch(batch)
            if kept:
                worker.deliver(kept, force=True)

    def _drop_batch(self, batch: list[bytes]) -> list[bytes]:
        """Drop the spans of a batch, counted and told to their sessions; return the rest (requests, gaps)."""
        kept = []
        for line in batch:
            session = rec.read_span_session(line)
            if session is None:
                kept.append(line)
            else:
                self._drop(session)
        return kept

    def _flush_worker(self, worker: Worker) -> bool:
        try:
            return worker.flush()
        except BaseException:
            self._failures.fail("deliver")
            return True

    # -- the worker ---------------------------------------------------------------------------------

    def _start_worker(self) -> Worker | None:
        with self._worker_lock:
            if self._worker is not None:
                return self._worker
            kind, listener = self.worker_kind, self._listener
            assert listener is not None  # workers are started on the delivery thread, after start()
            try:
                if kind is WorkerKind.PROCESS and self._restarts <= _MAX_RESTARTS:
                    self._worker = ProcessWorker(
                        self._config, listener.on_output, self._on_worker_exit, self._register_thread
                    )
                else:
                    if self.monitor is None:
                        self.monitor = self._config.make_monitor()
                    self._worker = ThreadWorker(self.monitor, listener.on_output, self._config)
            except Exception:
                self._failures.fail("start_worker")
                if kind is WorkerKind.PROCESS:
                    self.worker_kind = WorkerKind.THREAD  # no process here: run in this one
                return None
            return self._worker

    def _register_thread(self) -> None:
        self.own_threads.add(threading.get_ident())

    def _on_worker_exit(self, worker: ProcessWorker) -> None:
        """The engine process died: start another on the next batch; its sessions are told on the way."""
        self._failures.fail("worker_exit")
        with self._worker_lock:
            if self._worker is worker:
                self._worker = None
            self._restarts += 1
        sessions = self._listener.on_exit() if self._listener is not None else []
        with self._gaps_lock:
            for session in sessions[-_GAPS_KEPT:]:
                self._gaps[session] = self._gaps.get(session, 0)
        self._wake.set()
