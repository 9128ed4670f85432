"""``analyze --jobs N``: the parts analysed by N worker processes of this machine, merged in input order.

Each worker holds one part at a time; the parent splits the input as the workers ask for more (at most
:data:`WINDOW_PER_WORKER` parts per worker are split and not yet passed on, so memory stays bounded whatever the
input's size), and passes each part's results on when every earlier part's are. A worker that dies is one
error naming its part; a new worker takes its place and the run goes on. On an interrupt the workers are
stopped before the interrupt goes on.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
from collections.abc import Iterable, Iterator
from multiprocessing.connection import Connection, wait
from multiprocessing.context import BaseContext
from multiprocessing.process import BaseProcess
from pathlib import Path

from monitor.analysis import AnalysisProgress, collect_for_batch
from monitor.errors import describe_exception
from monitor.ingest import InputFormat, InputPart, partition_inputs
from monitor.models import RecordError, SessionReport
from monitor.scale._engine import EngineSpec, Merger, PartResult, analyze_part, fail_part

WINDOW_PER_WORKER = 4
"""Parts split ahead per worker: enough to keep every worker busy while one slow part holds up the merge."""
_STOP_SECONDS = 2.0
_PRELOAD = ["monitor.scale"]


def analyze_in_processes(
    paths: Iterable[Path],
    input_format: InputFormat,
    spec: EngineSpec,
    jobs: int,
    progress: AnalysisProgress | None = None,
    *,
    start_method: str = "forkserver",
) -> Iterator[SessionReport | RecordError]:
    """Yield what :func:`~monitor.analysis.analyze_records` yields for ``read_inputs(paths, input_format)``,
    in the same order, with the parts analysed by ``jobs`` worker processes.

    Parts that need no reading (errors found while splitting) and standard input are analysed here.
    """
    merger = Merger(progress)
    parts = partition_inputs(paths, input_format)
    first = list(_take(parts, 2))
    if len(first) < 2 or jobs < 2:  # nothing to share out: no workers to start
        for part in [*first, *parts]:
            yield from merger.emit(analyze_part(part, spec))
        return
    pool = _Pool(_context(start_method), spec, jobs)
    try:
        yield from pool.run(_chain(first, parts), merger)
    finally:
        pool.stop()


def _context(start_method: str) -> BaseContext:
    context = multiprocessing.get_context(start_method)
    if start_method == "forkserver":
        context.set_forkserver_preload(_PRELOAD)
    return context


def _take(parts: Iterator[InputPart], n: int) -> Iterator[InputPart]:
    for _ in range(n):
        part = next(parts, None)
        if part is None:
            return
        yield part


def _chain(first: list[InputPart], rest: Iterator[InputPart]) -> Iterator[InputPart]:
    yield from first
    yield from rest


def _serve(conn: Connection, spec: EngineSpec) -> None:
    """A worker: analyse each part received, send back its result; stop at None or when the parent goes.

    The worker is one batch from start to end (:func:`collect_for_batch`), so its memos keep what earlier parts
    read: a part alone would put them back to a live host's bounds when it ends."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # an interrupt is the parent's to handle: it stops the workers
    with collect_for_batch():
        _serve_parts(conn, spec)


def _serve_parts(conn: Connection, spec: EngineSpec) -> None:
    while True:
        try:
            part = conn.recv()
        except (EOFError, OSError):
            return
        if part is None:
            return
        try:
            result = analyze_part(part, spec)
        except Exception as exc:  # a bug outside the engine's own guard: the part's error, the worker goes on
            result = fail_part(part, f"the analysis failed: {describe_exception(exc)}")
        try:
            conn.send(result)
        except Exception as exc:  # a result that cannot be sent (pickling) is the part's error too
            conn.send(fail_part(part, f"its result could not be passed on: {describe_exception(exc)}"))


class _Worker:
    def __init__(self, context: BaseContext, spec: EngineSpec) -> None:
        self.conn, theirs = context.Pipe()
        self.process: BaseProcess = context.Process(  # type: ignore[attr-defined]
            target=_serve, args=(theirs, spec), daemon=True, name="trifecta-worker"
        )
        with _interrupt_deferred():
            self.process.start()
        theirs.close()
        self.part: InputPart | None = None

    def stop(self, *, now: bool) -> None:
        if not now:
            with contextlib.suppress(OSError):
                self.conn.send(None)
            self.process.join(_STOP_SECONDS)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(_STOP_SECONDS)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.conn.close()


class _Pool:
    def __init__(self, context: BaseContext, spec: EngineSpec, jobs: int) -> None:
        self._context = context
        self._spec = spec
        self._jobs = jobs
        self._workers: list[_Worker] = []  # started as parts come: a short input starts no more than it needs
        self._window = WINDOW_PER_WORKER * jobs
        self._finished = False

    def run(self, parts: Iterator[InputPart], merger: Merger) -> Iterator[SessionReport | RecordError]:
        results: dict[int, PartResult] = {}
        local: dict[int, InputPart] = {}
        split = 0  # parts taken from the splitter
        emitted = 0  # parts passed on
        exhausted = False
        while True:
            self._collect(results, block=False)
            while not exhausted and split - emitted < self._window:
                idle = next((w for w in self._workers if w.part is None), None)
                if idle is None and len(self._workers) < self._jobs:
                    idle = _Worker(self._context, self._spec)
                    self._workers.append(idle)
                if idle is None:
                    break
                part = next(parts, None)
                if part is None:
                    exhausted = True
                    break
                split += 1
                if part.local:
                    local[part.index] = part
                elif not part.work:
                    results[part.index] = analyze_part(part, self._spec)
                else:
                    idle.part = part
                    idle.conn.send(part)
            if emitted in local:
                yield from merger.emit(analyze_part(local.pop(emitted), self._spec))
                emitted += 1
            elif emitted in results:
                yield from merger.emit(results.pop(emitted))
                emitted += 1
            elif exhausted and emitted == split:
                self._finished = True
                return
            else:
                self._collect(results, block=True)

    def _collect(self, results: dict[int, PartResult], *, block: bool) -> None:
        busy = [w for w in self._workers if w.part is not None]
        if not busy:
            return
        waitables: list[Connection | int] = [w.conn for w in busy] + [w.process.sentinel for w in busy]
        ready = wait(waitables, timeout=None if block else 0)
        for worker in busy:
            part = worker.part
            assert part is not None
            if worker.conn in ready or worker.process.sentinel in ready:
                try:
                    result = worker.conn.recv() if worker.conn.poll() else None
                except (EOFError, OSError):
                    result = None
                if isinstance(result, PartResult):
                    results[part.index] = result
                    worker.part = None
                else:
                    results[part.index] = fail_part(part, _died(worker.process))
                    self._replace(worker)

    def _replace(self, worker: _Worker) -> None:
        worker.stop(now=True)
        self._workers[self._workers.index(worker)] = _Worker(self._context, self._spec)

    def stop(self) -> None:
        for worker in self._workers:
            worker.stop(now=not self._finished)


@contextlib.contextmanager
def _interrupt_deferred() -> Iterator[None]:
    """Hold an interrupt until the block is done, then give it to the handler it was meant for: a worker whose
    start is cut off mid-way gets a truncated process object and prints a traceback. Only the main thread can hold
    it; elsewhere, nothing. An interrupt that was ignored (``nohup``, a background job) stays ignored."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is None:
        yield  # elsewhere, or a handler Python did not install (an embedding host's): left alone
        return
    held: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, _frame: held.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous if previous is not None else signal.SIG_DFL)
    if held:
        if callable(previous):
            previous(signal.SIGINT, None)  # Python's own handler raises KeyboardInterrupt; a host's does its part
        else:
            os.kill(os.getpid(), signal.SIGINT)  # as if it came now: the default action, or ignored again


def _died(process: BaseProcess) -> str:
    process.join(_STOP_SECONDS)
    code = process.exitcode
    if code is None:
        how = "stopped answering"
    elif code < 0:
        how = f"was killed by signal {-code}"
    else:
        how = f"exited with status {code}"
    return f"the worker process analysing it {how}"
