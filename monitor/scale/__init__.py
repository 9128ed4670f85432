"""Scale-out: one analysis split into parts (by file, and by runs of an archive's run files) that worker processes
of this machine (``analyze --jobs N``) or a Dask cluster (``analyze --dask``) analyse, merged back in input order.

The output is the single-process run's: the same sessions and errors, in the same order, with the same wording.
A worker needs the package installed, nothing else: the engine spec (posture, policy, the rule packs already
loaded) is shipped to it, and so are an archive's run files; a part that is a file is read by the worker, so a
cluster's workers need the input files at the same paths (docs/scale.md).
"""

from monitor.scale._dask import analyze_with_dask, find_dask, parse_scheduler
from monitor.scale._engine import CaughtWarning, EngineSpec, PartResult, analyze_part, count_cores
from monitor.scale._processes import analyze_in_processes
from monitor.scale._run import analyze_paths

__all__ = [
    "CaughtWarning",
    "EngineSpec",
    "PartResult",
    "analyze_in_processes",
    "analyze_part",
    "analyze_paths",
    "analyze_with_dask",
    "count_cores",
    "find_dask",
    "parse_scheduler",
]
