"""Analyse inputs on a Dask cluster from Python, as ``trifecta analyze --dask`` does, and write JSON Lines.

    python analyze_on_dask.py SCHEDULER PATH... > sessions.jsonl

SCHEDULER is a scheduler's address (``tcp://scheduler.internal:8786``) or ``local:N`` (a cluster of N worker
processes on this machine, for this run). Writes one JSON line per session, in input order, exactly as
``trifecta analyze PATH... --format jsonl`` does; errors go to standard error. The rule packs are loaded here
once and shipped to the workers.
"""

from __future__ import annotations

import sys
from pathlib import Path

from monitor.ingest import InputFormat
from monitor import MonitorConfig, Posture, load_rules
from monitor.models import RecordError
from monitor.report import JsonLinesWriter
from monitor.scale import EngineSpec, analyze_paths


def main(argv: list[str]) -> int:
    """Analyse ``argv[1:]`` on the cluster ``argv[0]``; return 2 if any input error, else 0."""
    scheduler, paths = argv[0], [Path(p) for p in argv[1:]]
    spec = EngineSpec(MonitorConfig(posture=Posture.BALANCED, rules=load_rules((), builtin=True)))
    writer = JsonLinesWriter(sys.stdout.buffer)
    errors = 0
    for item in analyze_paths(paths, InputFormat.AUTO, spec, scheduler=scheduler):
        if isinstance(item, RecordError):
            errors += 1
            print(f"error: {item.source}: {item.message}", file=sys.stderr)
        else:
            writer.write_session(item)
    return 2 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
