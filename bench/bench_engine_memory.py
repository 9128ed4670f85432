"""Benchmark: the memory of a monitor that keeps a few sessions open while many come and go.

AgentDojo runs of ``../shared/data`` are fed, one session after another, into one ``SessionMonitor`` (their
user task, tool calls, arguments and results); ``--held`` sessions stay open and every older one is ended, as a
host ends a conversation. The resident memory is printed every ``--every`` sessions: it must level off (the
monitor frees what an ended session held; the evidence memos are bounded), not grow with the sessions seen.
Usage::

    python bench/bench_engine_memory.py [--sessions 5000] [--held 50] [--every 1000]
"""

from __future__ import annotations

import argparse
import gc
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from monitor import SessionMonitor
from monitor.analysis import analyze_records
from monitor.ingest import read_inputs

ARCHIVE = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "agentdojo" / "dev-runs.tar.gz"


def read_rss_mib() -> int:
    """This process's resident memory now, MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS"):
            return int(line.split()[1]) // 1024
    return 0


class HoldingMonitor(SessionMonitor):
    """Ends a session only once ``held`` newer ones are open (the analysis ends each at its last record)."""

    def __init__(self, held: int) -> None:
        super().__init__()
        self.held = held
        self.waiting: list[str] = []

    def end_session(self, session_id: str):  # type: ignore[no-untyped-def]
        self.waiting.append(session_id)
        if len(self.waiting) > self.held:
            return super().end_session(self.waiting.pop(0))
        return self.session(session_id)


def main() -> None:
    """Feed the sessions and print the curve."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=5000)
    parser.add_argument("--held", type=int, default=50)
    parser.add_argument("--every", type=int, default=1000)
    args = parser.parse_args()
    monitor = HoldingMonitor(args.held)
    print(f"{'sessions seen':>14} {'held':>5} {'RSS MiB':>8}")
    for n, _ in enumerate(analyze_records(read_inputs([ARCHIVE]), monitor), 1):
        if n % args.every == 0:
            gc.collect()
            print(f"{n:>14,} {len(monitor.sessions()):>5} {read_rss_mib():>8}")
        if n >= args.sessions:
            break


if __name__ == "__main__":
    main()
