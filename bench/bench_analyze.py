"""Benchmark: ``trifecta analyze`` over the AgentDojo dev runs against a bare JSON parse of the same files, and
against a peer (trifectaguard) replaying the same runs.

All are measured as CPU time (user + system) of this one process, one after the other, and the ratios are
printed, so the figures hold on a shared, noisy machine (the load average is printed beside them):

- the bare parse (``orjson.loads`` of every run file);
- the peer, trifectaguard, when it is installed (``pip install trifectaguard==0.1.5``): one ``Guard`` per run,
  told the user's prompt, asked before each call and told each result, as its own replay of Claude Code
  transcripts does, with a policy per suite written from our reviewed AgentDojo packs (a tool's private-data and
  untrusted-content legs are what it ``reads``, its external-communication leg ``writes: external`` with the
  pack's destination arguments), so that it classifies the calls as the monitor does;
- the analysis as ``trifecta analyze --format json`` runs it (one process), the evidence memos at work: a
  result text seen in an earlier session costs a lookup;
- the same analysis with the memos cleared after every session, so no session gains from another's texts: the
  figure for inputs whose every session brings new content.

The runs of one benchmark share their environments, so many result texts come back from run to run; the
benchmark prints how many of them are distinct, to say how much the first figure owes to that. Usage::

    python bench/bench_analyze.py [ARCHIVE] [--posture balanced|strict] [--no-fresh] [--compare-collector] [--floor]

``--compare-collector`` also analyses once with the interpreter's default settings (collector and memos), and
prints what the batch settings (``monitor.analysis.collect_for_batch``) save. ``--floor`` analyses twice more with
memos that keep every text, and times the second pass, in which every text has been read before: what no memo
can save, the work of each call itself.
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from monitor import Leg, Posture, SessionMonitor
from monitor.analysis import analyze_records, collect_for_batch
from monitor.classify import load_builtin_rules
from monitor.evidence import clear_text_memos, count_memo_hits, widen_text_memos
from monitor.ingest import RecordError, iter_run_files, read_inputs
from monitor.models import AnalysisSummary
from monitor.report import JsonDocumentWriter, hash_ruleset

DEFAULT_ARCHIVE = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "agentdojo" / "dev-runs.tar.gz"


class _Discard(io.RawIOBase):
    def write(self, b: bytes) -> int:  # type: ignore[override]
        return len(b)


def measure_cpu(work: Callable[[], Any]) -> tuple[float, Any]:
    """Return the CPU time (user + system, seconds) ``work`` took in this process, and what it returned."""
    start = time.process_time()
    result = work()
    return time.process_time() - start, result


def bare_parse(archive: Path) -> int:
    """Read every run file from the archive and parse it with orjson; nothing else."""
    n = 0
    for _, data in iter_run_files(archive):
        orjson.loads(data)
        n += 1
    return n


def write_peer_policies() -> dict[str, dict[str, Any]]:
    """The peer's policy of each AgentDojo suite, from the reviewed packs (a tool's first entry)."""
    policies: dict[str, dict[str, Any]] = {}
    for loaded in load_builtin_rules().rules:
        suite = loaded.rule.server.removeprefix("agentdojo-")
        if suite == loaded.rule.server:
            continue
        tools = policies.setdefault(suite, {"tools": {}})["tools"]
        for entry in loaded.rule.tools:
            if entry.match in tools:
                continue
            reads = [name for leg, name in _PEER_READS.items() if leg in entry.legs]
            policy: dict[str, Any] = {"reads": reads} if reads else {}
            if Leg.EXTERNAL_COMMUNICATION in entry.legs:
                policy.update(writes="external", destination=list(entry.destinations))
            tools[entry.match] = policy
    return policies


_PEER_READS = {Leg.PRIVATE_DATA: "private", Leg.UNTRUSTED_CONTENT: "untrusted"}


def replay_peer(archive: Path) -> int | None:
    """Replay every run through trifectaguard (None when it is not installed); the calls it was asked about."""
    try:
        from trifectaguard import Guard
    except ImportError:
        return None
    policies = write_peer_policies()
    calls = 0
    for name, data in iter_run_files(archive):
        run = orjson.loads(data)
        suite = next((part for part in name.split("/") if part in policies), None)
        guard = Guard(policies[suite] if suite else {"tools": {}})
        args_of: dict[str, dict[str, Any]] = {}
        for message in run.get("messages") or ():
            if not isinstance(message, dict):
                continue
            role, content = message.get("role"), _peer_text(message.get("content"))
            if role == "user":
                guard.user_message(content)
            elif role == "assistant":
                for call in message.get("tool_calls") or ():
                    args = call.get("args") if isinstance(call.get("args"), dict) else {}
                    guard.before(call.get("function", ""), args)
                    args_of[str(call.get("id"))] = (call.get("function", ""), args)
                    calls += 1
            elif role == "tool":
                function, args = args_of.get(str(message.get("tool_call_id")), ("", {}))
                guard.after(function, args, content or _peer_text(message.get("error")))
    return calls


def _peer_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("content", b.get("text", ""))) if isinstance(b, dict) else str(b) for b in content)
    return "" if content is None else str(content)


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


def warm_up(archive: Path, posture: Posture, runs: int = 50) -> None:
    """Analyse the first runs of the archive once, not timed: the rule packs loaded and the patterns compiled, so
    that no measured step pays for them."""
    with tempfile.TemporaryDirectory() as folder:
        for i, (_, data) in enumerate(iter_run_files(archive)):
            if i == runs:
                break
            (Path(folder) / f"run{i}.json").write_bytes(data)
        analyze(Path(folder), posture, fresh_memos=False)
    clear_text_memos()


def analyze(archive: Path, posture: Posture, *, fresh_memos: bool, batch: bool = True) -> AnalysisSummary:
    """Analyse the archive exactly as ``trifecta analyze --format json --jobs 1`` does, writing to nowhere (with
    ``fresh_memos``, the evidence memos are cleared after every session; ``batch=False``: with the collector's
    default settings instead of the command's)."""
    summary = AnalysisSummary()
    if not batch:
        return _write_analysis(archive, posture, summary, fresh_memos=fresh_memos)
    with collect_for_batch():  # as the command runs it
        return _write_analysis(archive, posture, summary, fresh_memos=fresh_memos)


def measure_floor(archive: Path, posture: Posture) -> tuple[float, int]:
    """The CPU time of an analysis in which every text has been read before, and the texts it still worked out
    (none, unless a memo refused one): memos that keep every text are filled by one pass, and the second is
    timed."""
    clear_text_memos()
    with collect_for_batch():  # the passes inside keep these bounds: only the outermost batch sets them
        widen_text_memos(scale=1_000_000, chars=1_000_000_000)
        analyze(archive, posture, fresh_memos=False)
        before = sum(misses for _, misses in count_memo_hits().values())
        floor_s, _ = measure_cpu(lambda: analyze(archive, posture, fresh_memos=False))
        worked_out = sum(misses for _, misses in count_memo_hits().values()) - before
    clear_text_memos()
    return floor_s, worked_out


def _write_analysis(archive: Path, posture: Posture, summary: AnalysisSummary, *, fresh_memos: bool) -> AnalysisSummary:
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
    return summary


def main() -> None:
    """Run the measurements and print the ratios."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("archive", nargs="?", type=Path, default=DEFAULT_ARCHIVE)
    parser.add_argument("--posture", choices=[p.value for p in Posture], default="balanced")
    parser.add_argument("--no-fresh", action="store_true", help="skip the run with the memos cleared every session")
    parser.add_argument(
        "--compare-collector", action="store_true", help="also analyse with the default collector and memo settings"
    )
    parser.add_argument(
        "--floor", action="store_true", help="also analyse with every text read before (memos that keep all)"
    )
    args = parser.parse_args()
    if not args.archive.exists():
        raise SystemExit(f"no such archive: {args.archive}")
    posture = Posture(args.posture)
    warm_up(args.archive, posture)
    load_before = os.getloadavg()
    parse_s, files = measure_cpu(lambda: bare_parse(args.archive))
    rss_after_parse = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    clear_text_memos()
    analyze_s, summary = measure_cpu(lambda: analyze(args.archive, posture, fresh_memos=False))
    rss_after_analyze = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    peer_s, peer_calls = measure_cpu(lambda: replay_peer(args.archive))
    texts, distinct = count_results(args.archive)
    calls = max(summary.calls, 1)
    print(
        f"machine load (1, 5, 15 min): {' '.join(f'{x:.2f}' for x in load_before)} before, "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} after; CPU time of this process throughout"
    )
    print(f"run files:          {files}  ({texts} tool results, {distinct} distinct: {distinct / max(texts, 1):.0%})")
    print(f"bare parse:         {parse_s:8.2f} s CPU  ({parse_s / calls * 1e6:6.0f} µs per call)")
    print(
        f"analyze ({args.posture}): {analyze_s:8.2f} s CPU  ({analyze_s / calls * 1e6:6.0f} µs per call; "
        f"{summary.sessions} sessions, {summary.calls} calls, {summary.errors} errors)"
    )
    if peer_calls is None:
        print("peer:               not installed (pip install trifectaguard==0.1.5)")
    else:
        print(
            f"peer (trifectaguard): {peer_s:6.2f} s CPU  ({peer_s / max(peer_calls, 1) * 1e6:6.0f} µs per call; "
            f"{peer_calls} calls)"
        )
    if not args.no_fresh:
        clear_text_memos()
        fresh_s, fresh = measure_cpu(lambda: analyze(args.archive, posture, fresh_memos=True))
        assert fresh.by_level == summary.by_level and fresh.by_action == summary.by_action
        print(f"analyze, memos cleared after every session: {fresh_s:8.2f} s CPU")
    if args.compare_collector:
        clear_text_memos()
        default_s, default = measure_cpu(lambda: analyze(args.archive, posture, fresh_memos=False, batch=False))
        assert default.by_level == summary.by_level and default.by_action == summary.by_action
        print(f"analyze, default collector and memo settings: {default_s:8.2f} s CPU")
        print(f"ratio default/batch settings: {default_s / analyze_s:.2f}")
    if args.floor:
        floor_s, worked_out = measure_floor(args.archive, posture)
        print(
            f"analyze, every text read before: {floor_s:8.2f} s CPU  ({floor_s / calls * 1e6:6.0f} µs per call; "
            f"{worked_out} texts worked out again)"
        )
        if peer_calls is not None:
            print(f"ratio floor/peer:    {floor_s / peer_s:.2f}")
    print(f"ratio analyze/parse: {analyze_s / parse_s:.1f}")
    if peer_calls is not None:
        print(f"ratio analyze/peer:  {analyze_s / peer_s:.2f}")
    print(
        f"peak RSS:           {rss_after_parse / 1024:.0f} MiB after parse, {rss_after_analyze / 1024:.0f} MiB "
        "after analyze"
    )
    print(f"sessions by level:  {dict(sorted(summary.by_level.items()))}")
    print(f"calls by action:    {dict(sorted(summary.by_action.items()))}")


if __name__ == "__main__":
    main()
