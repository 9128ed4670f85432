"""``analyze --dask``: the parts analysed on the workers of a Dask cluster, merged in input order.

The client (this process) splits the input, sends each part with the engine spec (scattered to every worker
once) as a task, keeps at most :data:`WINDOW_PER_WORKER` tasks per worker thread in flight, and passes each
part's results on in input order. A part whose task fails (a worker dies on it more often than the scheduler
allows, or an exception) is one error naming the part; the other parts go on.
"""

from __future__ import annotations

import importlib.util
import logging
from collections import deque
from collections.abc import Iterable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from monitor.analysis import AnalysisProgress
from monitor.errors import InputError, describe_exception
from monitor.ingest import InputFormat, InputPart, partition_inputs
from monitor.models import RecordError, SessionReport
from monitor.scale._engine import (
    EngineSpec,
    Merger,
    PartResult,
    analyze_part,
    count_cores,
    fail_part,
)

WINDOW_PER_WORKER = 4
"""Parts in flight per worker thread of the cluster."""
LOCAL = "local"


def parse_scheduler(value: str) -> tuple[str | None, int]:
    """Split ``--dask``'s value: ``(None, workers)`` for ``local`` or ``local:N`` (a cluster of N worker
    processes on this machine; the number of cores when N is left out), else ``(address, 0)``."""
    if value == LOCAL or value.startswith(LOCAL + ":"):
        count = value[len(LOCAL) + 1 :]
        if not count:
            return None, count_cores()
        if not count.isdigit() or int(count) < 1:
            raise InputError("--dask", f"local:N takes a number of workers of at least 1, not {count!r}")
        return None, int(count)
    if not value.strip():
        raise InputError("--dask", "give a scheduler address (tcp://host:8786) or local[:N]")
    return value, 0


def find_dask() -> bool:
    """Return whether Dask's distributed scheduler is installed (the ``dask`` extra)."""
    return importlib.util.find_spec("distributed") is not None


def analyze_with_dask(
    paths: Iterable[Path],
    input_format: InputFormat,
    spec: EngineSpec,
    scheduler: str,
    progress: AnalysisProgress | None = None,
) -> Iterator[SessionReport | RecordError]:
    """Yield what :func:`~monitor.analysis.analyze_records` yields for ``read_inputs(paths, input_format)``,
    in the same order, with the parts analysed on a Dask cluster: ``scheduler`` is an address
    (``tcp://host:8786``) or ``local[:N]``. Standard input and parts that need no reading are analysed here.
    A scheduler that cannot be reached is one error naming it."""
    from distributed import Client, LocalCluster

    address, workers = parse_scheduler(scheduler)
    merger = Merger(progress)
    with ExitStack() as stack:
        if address is None:
            cluster = stack.enter_context(
                LocalCluster(  # type: ignore[no-untyped-call]
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=":0",  # no fixed port: never in the way of another cluster
                    silence_logs=logging.ERROR,
                )
            )
            client = stack.enter_context(Client(cluster))  # type: ignore[no-untyped-call]
        else:
            try:
                client = stack.enter_context(Client(address))  # type: ignore[no-untyped-call]
            except (OSError, ValueError) as exc:  # unreachable or not a scheduler: the one error, nothing analysed
                yield RecordError(source=address, message=f"cannot reach the Dask scheduler: {describe_exception(exc)}")
                return
        threads = sum(client.nthreads().values()) or 1
        shared = client.scatter(spec, broadcast=True)
        in_flight: deque[tuple[InputPart, Any]] = deque()
        for part in partition_inputs(paths, input_format):
            if part.local or not part.work:
                in_flight.append((part, None))
            else:
                in_flight.append((part, client.submit(analyze_part, part, shared, pure=False)))
            while len(in_flight) > WINDOW_PER_WORKER * threads or (in_flight and in_flight[0][1] is None):
                yield from merger.emit(_result(*in_flight.popleft(), spec))
        while in_flight:
            yield from merger.emit(_result(*in_flight.popleft(), spec))


def _result(part: InputPart, future: Any, spec: EngineSpec) -> PartResult:
    if future is None:
        return analyze_part(part, spec)
    try:
        result = future.result()
    except Exception as exc:  # the task failed on the cluster: the part's error, the others go on
        return fail_part(part, f"the Dask task analysing it failed: {describe_exception(exc)}")
    finally:
        future.release()
    if not isinstance(result, PartResult):
        return fail_part(part, "the Dask task analysing it gave no result")
    return result
