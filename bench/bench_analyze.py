"""Benchmark: ``trifecta analyze`` over the AgentDojo dev runs against a bare JSON parse of the same files.

All are measured one after the other in this one process, and the ratios are printed, so the figures hold
on a shared, noisy machine:

- the bare parse (``orjson.loads`` of every run file);
- the analysis as ``trifecta analyze --format json`` runs it (one process), the evidence memos at work: a
  result text seen in an earlier session costs a lookup;
- the same analysis with the memos cleared after every session, so no session gains from another's texts: the
  figure for inputs whose every session brings new content.

The runs of one benchmark share their environments, so many result texts come back from run to run; the
benchmark prints how many of them are distinct, to say how much the first figure owes to that. Usage::

    python bench/bench_analyze.py [ARCHIVE] [--posture balanced|strict]
"""

from __future__ import annotations

import argparse
import io
import resource
import time
from pathlib import Path

import orjson

from monitor import Posture, SessionMonitor
from monitor.analysis import analyze_records
from monitor.evidence import clear_text_memos
from monitor.ingest import RecordError, iter_run_files, read_inputs
from monitor.models import AnalysisSummary
from monitor.report import JsonDocumentWriter, hash_ruleset

DEFAULT_ARCHIVE = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "agentdojo" / "dev-runs.tar.gz"


class _Discard(io.RawIOBase):
    def write(self, b: bytes) -> int:  # type: ignore[override]
        return len(b)


def bare_parse(archive: Path) -> tuple[float, int]:
    """Read every run file from the archive and parse it with orjson; nothing else."""
    start = time.perf_counter()
    n = 0
    for _, data in iter_run_files(archive):
        orjson.loads(data)
        n += 1
    return time.perf_counter() - start, n


def count_results(archive: Path) -> tuple[int, int]:
    """Count the tool results of the runs, and the distinct ones (not timed)."""
    seen: set[int] = set()
    total = 0
    for _, data in iter_run_files(archive):
        for message in orjson.loads(data).get("messages") or ():
            if isinstance(message, dict) and message.get("role") == "tool":
                total += 1
                seen.add(hash(str(message.get("content"))))
    return total, len(seen)


def analyze(archive: Path, posture: Posture, *, fresh_memos: bool) -> tuple[float, AnalysisSummary]:
    """Analyse the archive exactly as ``trifecta analyze --format json`` does, writing to nowhere (with
    ``fresh_memos``, the evidence memos are cleared after every session)."""
    clear_text_memos()
    start = time.perf_counter()
    summary = AnalysisSummary()
    writer = JsonDocumentWriter(_Discard(), tool_version="bench", ruleset_sha256=hash_ruleset([]), posture=posture)
    for item in analyze_records(read_inputs([archive]), SessionMonitor(posture=posture)):
        if isinstance(item, RecordError):
            summary.errors += 1
        else:
            summary.add(item)
            writer.write_session(item)
        if fresh_memos:
            clear_text_memos()
    writer.close(summary)
    return time.perf_counter() - start, summary


def main() -> None:
    """Run both measurements and print the ratio."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("archive", nargs="?", type=Path, default=DEFAULT_ARCHIVE)
    parser.add_argument("--posture", choices=[p.value for p in Posture], default="balanced")
    args = parser.parse_args()
    if not args.archive.exists():
        raise SystemExit(f"no such archive: {args.archive}")
    parse_s, files = bare_parse(args.archive)
    rss_after_parse = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    analyze_s, summary = analyze(args.archive, Posture(args.posture), fresh_memos=False)
    rss_after_analyze = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    fresh_s, fresh = analyze(args.archive, Posture(args.posture), fresh_memos=True)
    texts, distinct = count_results(args.archive)
    assert fresh.by_level == summary.by_level and fresh.by_action == summary.by_action
    print(f"run files:          {files}  ({texts} tool results, {distinct} distinct: {distinct / max(texts, 1):.0%})")
    print(f"bare parse:         {parse_s:8.2f} s")
    print(
        f"analyze ({args.posture}): {analyze_s:8.2f} s  ({summary.sessions} sessions, {summary.calls} calls, "
        f"{summary.errors} errors)"
    )
    print(f"analyze, memos cleared after every session: {fresh_s:8.2f} s")
    print(f"ratio analyze/parse: {analyze_s / parse_s:.1f}  (memos cleared every session: {fresh_s / parse_s:.1f})")
    print(
        f"peak RSS:           {rss_after_parse / 1024:.0f} MiB after parse, {rss_after_analyze / 1024:.0f} MiB "
        "after analyze"
    )
    print(f"sessions by level:  {dict(sorted(summary.by_level.items()))}")
    print(f"calls by action:    {dict(sorted(summary.by_action.items()))}")


if __name__ == "__main__":
    main()
