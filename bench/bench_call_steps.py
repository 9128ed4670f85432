"""Benchmark: the cost model of one call, step by step, in the analysis of the AgentDojo dev runs.

Analyses the archive as ``trifecta analyze --format json --jobs 1`` does (as ``bench_analyze.py`` does), with a
CPU-time counter around each step of the engine, and prints each step's CPU time per call (µs), its share of the
whole, and how often it ran. Steps nest: an indented step is counted only while the step above it runs (the
same function called from elsewhere is left out of that row), and a step's time includes what it calls. Beside
them: the bare parse of the same archive (``orjson.loads`` of every run file), the yardstick of
``bench_analyze.py``, and the hits and misses of each evidence memo. The counters themselves
cost about a microsecond each time a step runs, which the total includes.

Usage::

    python bench/bench_call_steps.py [ARCHIVE] [--limit N]
"""

from __future__ import annotations

import argparse
import functools
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_analyze import DEFAULT_ARCHIVE, analyze, bare_parse, measure_cpu, warm_up

from monitor import Posture
from monitor.evidence import _index, clear_text_memos, count_memo_hits
from monitor.ingest import iter_run_files
from monitor.ingest._inputs import InputStream
from monitor.session import SessionMonitor, _calls

# (depth, label, owner, attribute): the owner's attribute is wrapped with a counter for the run.
STEPS: list[tuple[int, str, Any, str]] = [
    (0, "read the input (archive, JSON, events)", InputStream, "__next__"),
    (0, "the user's words (observe_user_message)", SessionMonitor, "observe_user_message"),
    (0, "decide a call (before_call)", SessionMonitor, "before_call"),
    (1, "classify it (rules, annotations, defaults)", _calls.Classifier, "classify"),
    (1, "evidence of a send made while armed", _calls, "gather_send_evidence"),
    (2, "private content in its arguments (find_private)", _index.ContentIndex, "find_private"),
    (3, "private content indexed when first searched", _index.ContentIndex, "_flush_private"),
    (1, "record it (its arguments indexed, alerts)", _calls, "record_call"),
    (0, "read a result (after_call)", SessionMonitor, "after_call"),
    (1, "index it (add_result)", _index.ContentIndex, "add_result"),
    (2, "read it into a digest (from the memo, or parsed and walked)", _index, "digest_result"),
]


def find_parent(i: int) -> int | None:
    """The index of the step that step ``i`` is part of (the nearest step above it one level up), or None."""
    depth = STEPS[i][0]
    return next((j for j in range(i - 1, -1, -1) if STEPS[j][0] == depth - 1), None) if depth else None


class StepClock:
    """CPU time and calls of each step, counted by wrappers around the step's function."""

    def __init__(self) -> None:
        self.seconds = [0.0] * len(STEPS)
        self.calls = [0] * len(STEPS)
        self.running = [0] * len(STEPS)
        self.parents = [find_parent(i) for i in range(len(STEPS))]
        self._saved: list[tuple[Any, str, Any]] = []

    def install(self) -> None:
        """Wrap every step's function."""
        for i, (_, _, owner, name) in enumerate(STEPS):
            original = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
            self._saved.append((owner, name, original))
            setattr(owner, name, self._wrap(i, original))

    def remove(self) -> None:
        """Put every step's function back."""
        for owner, name, original in reversed(self._saved):
            setattr(owner, name, original)
        self._saved.clear()

    def _wrap(self, i: int, function: Callable[..., Any]) -> Callable[..., Any]:
        clock = time.process_time
        seconds, calls, running, parent = self.seconds, self.calls, self.running, self.parents[i]

        @functools.wraps(function)
        def counted(*args: Any, **kwargs: Any) -> Any:
            if parent is not None and not running[parent]:
                return function(*args, **kwargs)
            start = clock()
            running[i] += 1
            try:
                return function(*args, **kwargs)
            finally:
                running[i] -= 1
                seconds[i] += clock() - start
                calls[i] += 1

        return counted


def main() -> None:
    """Analyse the archive with the step counters and print the cost model."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("archive", nargs="?", type=Path, default=DEFAULT_ARCHIVE)
    parser.add_argument("--limit", type=int, default=0, help="only the first N run files (0: all)")
    args = parser.parse_args()
    if not args.archive.exists():
        raise SystemExit(f"no such archive: {args.archive}")
    with tempfile.TemporaryDirectory() as folder:
        archive = args.archive
        if args.limit:
            for i, (_, data) in enumerate(iter_run_files(args.archive)):
                if i == args.limit:
                    break
                (Path(folder) / f"run{i}.json").write_bytes(data)
            archive = Path(folder)
        run(archive)


def run(archive: Path) -> None:
    """Measure and print."""
    posture = Posture.BALANCED
    warm_up(archive, posture)
    load_before = os.getloadavg()
    parse_s, _ = measure_cpu(lambda: bare_parse(archive))
    clear_text_memos()
    clock = StepClock()
    clock.install()
    try:
        total_s, summary = measure_cpu(lambda: analyze(archive, posture, fresh_memos=False))
    finally:
        clock.remove()
    calls = max(summary.calls, 1)
    print(
        f"machine load (1, 5, 15 min): {' '.join(f'{x:.2f}' for x in load_before)} before, "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} after; CPU time of this process"
    )
    print(f"{summary.sessions} sessions, {summary.calls} calls; per call: CPU time of the analysis / calls\n")
    print("| step | µs per call | share | times run |\n|---|---|---|---|")
    print(f"| the whole analysis | {total_s / calls * 1e6:.0f} | 100 % | |")
    for (depth, label, _, _), seconds, count in zip(STEPS, clock.seconds, clock.calls, strict=True):
        indent = "· " * depth
        print(f"| {indent}{label} | {seconds / calls * 1e6:.0f} | {100 * seconds / total_s:.0f} % | {count} |")
    parse_us, parse_share = parse_s / calls * 1e6, 100 * parse_s / total_s
    print(f"| for scale: the bare parse of the archive | {parse_us:.0f} | {parse_share:.0f} % | |")
    print("\n| memo | hits | misses |\n|---|---|---|")
    for name, (hits, misses) in sorted(count_memo_hits().items()):
        if hits or misses:
            print(f"| {name.removeprefix('monitor.evidence.')} | {hits} | {misses} |")


if __name__ == "__main__":
    main()
