"""One entry for every way of running an analysis: in this process, in N processes, or on a Dask cluster."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from monitor.analysis import AnalysisProgress, analyze_records
from monitor.ingest import InputFormat, read_inputs
from monitor.models import RecordError, SessionReport
from monitor.scale._dask import analyze_with_dask
from monitor.scale._engine import EngineSpec
from monitor.scale._processes import analyze_in_processes

_STDIN = "-"  # the path read_inputs reads standard input from


def analyze_paths(
    paths: Sequence[Path],
    input_format: InputFormat,
    spec: EngineSpec,
    *,
    jobs: int = 1,
    scheduler: str | None = None,
    progress: AnalysisProgress | None = None,
) -> Iterator[SessionReport | RecordError]:
    """Analyse the inputs at ``paths``; yield each session's report and every error, in input order.

    With ``scheduler`` (an address or ``local[:N]``) the parts go to a Dask cluster; else with ``jobs`` above 1
    to that many worker processes; else everything runs here, as :func:`~monitor.analysis.analyze_records` over
    :func:`~monitor.ingest.read_inputs`. The output is the same either way. Standard input is read in this
    process; with it among the inputs everything is.
    """
    if any(str(p) == _STDIN for p in paths):
        jobs, scheduler = 1, None
    if scheduler is not None:
        return analyze_with_dask(paths, input_format, spec, scheduler, progress)
    if jobs > 1:
        return analyze_in_processes(paths, input_format, spec, jobs, progress)
    return analyze_records(read_inputs(paths, input_format), spec.build_monitor(), progress)
