"""Analyse traces piped on standard input from Python, as ``trifecta analyze -`` does, and keep count.

    cat samples/mcp/calendar-invite.jsonl | python analyze_stdin.py [--level armed]

Prints one line per session at or above the level (its level, id and the file it came from, ``<stdin>`` here),
then how many records, sessions and errors the analysis counted.
"""

from __future__ import annotations

import sys
from pathlib import Path

from monitor import SessionMonitor
from monitor.analysis import AnalysisProgress, analyze_records
from monitor.ingest import read_inputs
from monitor.models import Level, SessionReport


def main(argv: list[str]) -> int:
    """Analyse standard input; print the sessions at or above ``--level`` and the counts; return the exit status."""
    level = Level(argv[argv.index("--level") + 1]) if "--level" in argv else Level.CLEAN
    progress = AnalysisProgress()  # plain counters: read them from any thread, at any pace
    for item in analyze_records(read_inputs([Path("-")]), SessionMonitor(), progress):
        if isinstance(item, SessionReport):
            if item.level.rank >= level.rank:
                print(f"{item.level.value:<12} {item.session_id}  ({item.source})")
        else:
            print(f"error: {item.source}: {item.message}", file=sys.stderr)
    print(f"{progress.records} records, {progress.sessions} sessions, {progress.errors} errors")
    return 2 if progress.errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
