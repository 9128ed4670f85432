"""Benchmark: the share of ``trifecta analyze`` spent on what the capability graph adds to a session report.

Analyses the AgentDojo dev runs once, timing (in this one process) the alert path searches and the bounding of
reported arguments against the whole analysis, and prints the shares, so the figure holds on a shared, noisy
machine. Usage::

    python bench/bench_graph_path.py [ARCHIVE]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from machine_load import describe_load

import monitor.session._state as state_module
from monitor import SessionMonitor
from monitor.analysis import analyze_records
from monitor.ingest import RecordError, read_inputs

DEFAULT_ARCHIVE = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "agentdojo" / "dev-runs.tar.gz"


def main() -> None:
    """Analyse the archive with the path search and argument bounding timed; print their shares."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("archive", nargs="?", type=Path, default=DEFAULT_ARCHIVE)
    args = parser.parse_args()
    spent = {"search": 0.0, "bound": 0.0}
    counts = {"search": 0, "bound": 0}

    def timed(name: str, work: Any) -> Any:
        def run(*a: Any, **k: Any) -> Any:
            start = time.process_time()
            try:
                return work(*a, **k)
            finally:
                spent[name] += time.process_time() - start
                counts[name] += 1

        return run

    state_module.find_path_steps = timed("search", state_module.find_path_steps)
    state_module.bound_arguments = timed("bound", state_module.bound_arguments)
    start = time.process_time()
    sessions = steps = 0
    for item in analyze_records(read_inputs([args.archive]), SessionMonitor()):
        if not isinstance(item, RecordError):
            sessions += 1
            steps += sum(len(alert.steps) for alert in item.alerts)
    total = time.process_time() - start
    print(describe_load())
    print(f"sessions:       {sessions} ({steps} path steps)")
    print(f"analysis:       {total:8.2f} s")
    for name in spent:
        share = 100 * spent[name] / total
        print(f"{name:15s} {spent[name]:8.3f} s in {counts[name]} calls ({share:.2f} % of analysis)")


if __name__ == "__main__":
    main()
