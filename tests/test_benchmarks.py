"""The benchmarks run end to end on a small workload and report what they promise (not their figures)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run_bench(*arguments: str) -> str:
    """Run a benchmark script; its standard output (fails on a non-zero exit)."""
    done = subprocess.run(
        [sys.executable, *arguments], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("ablation", [[], ["--hooks-only"], ["--stamps-only"]])
def test_bench_otel_takes_turns_and_reports_ratio_alerts_and_losses(ablation: list[str]) -> None:
    out = run_bench(
        "bench/bench_otel.py",
        "--workload",
        "synthetic",
        "--spans",
        "400",
        "--calls",
        "20",
        "--repeats",
        "2",
        "--turn",
        "3",
        *ablation,
    )
    assert "the sides take turns every 3 sessions" in out
    assert len(re.findall(r"pass \d: without .* ratio \d+\.\d{3}", out)) == 2
    assert re.search(r"ratio \(median of 2\): \d+\.\d{3}", out)
    alerts = int(re.search(r"alerts logged: ([\d,]+)", out).group(1).replace(",", ""))  # type: ignore[union-attr]
    # The synthetic sessions get armed and send mail: the engine fed means alerts, the ablations none.
    assert (alerts > 0) == (not ablation)
    assert "spans dropped: 0; internal errors: 0" in out


def test_bench_hook_reports_percentiles_and_ratio() -> None:
    out = run_bench("bench/bench_hook.py", "--prior", "10,50", "--samples", "5", "--cold", "1")
    assert re.search(r"\| warm, 10 prior calls \| 5 \| [\d.]+ \| [\d.]+ \|", out)
    assert re.search(r"\| warm, 50 prior calls \| 5 \|", out) and "| cold, new session | 1 |" in out
    assert re.search(r"ratio p95\(50\)/p95\(10\): \d+\.\d\d", out)


@pytest.mark.parametrize("batch", [False, True], ids=["usual", "batch"])
def test_bench_memo_memory_fills_every_memo_to_its_budget_and_prints_the_memory(batch: bool) -> None:
    from monitor.evidence import BATCH_SCALE, read_memo_bounds

    usual_budgets = {budget for _, budget in read_memo_bounds().values()}
    out = run_bench("bench/bench_memo_memory.py", *(["--batch"] if batch else []))
    lines = out.splitlines()
    assert re.fullmatch(r"all memos: \d+\.\d MiB", lines[-1])
    rows = {line.split()[0]: line for line in lines[1:-1] if line.strip()}
    assert set(rows) == {"fingerprints", "k-grams", "salient", "lookup", "addresses", "documents", "digests"}
    budgets = []
    for line in rows.values():
        units, budget = (int(n.replace(",", "")) for n in re.findall(r"([\d,]+) units of\s+([\d,]+)", line)[0])
        # Filled: what is left once an entry went is most of the budget (a batch's entries are larger).
        assert (0.6 if batch else 0.9) * budget < units <= budget and line.endswith("MiB")
        budgets.append(budget)
    # The bounds filled were the batch's with --batch, the usual ones without.
    assert set(budgets) == ({budget * BATCH_SCALE for budget in usual_budgets} if batch else usual_budgets)


def test_bench_evidence_steps_times_every_step_against_the_target() -> None:
    out = run_bench("bench/bench_evidence_steps.py", "--texts", "20")
    rows = re.findall(r"^(.+?)\s+(\d+\.\d)\s+(\d+\.\d\d)$", out, re.MULTILINE)
    steps = {name.strip(): (float(us), float(ratio)) for name, us, ratio in rows}
    assert len(steps) == 6 and "one private text read, one search" in steps
    for us, ratio in steps.values():
        assert us > 0 and abs(ratio - us / 50) < 0.01
    parts = sum(us for name, (us, _) in steps.items() if name != "one private text read, one search")
    # Six figures each printed to 0.1 µs: the parts and the whole differ by at most six times 0.05 from rounding.
    assert abs(parts - steps["one private text read, one search"][0]) < 0.3 + 1e-6


def test_bench_analyze_prints_cpu_time_ratios_in_one_run() -> None:
    out = run_bench("bench/bench_analyze.py", "tests/data/agentdojo-sample.tar.gz", "--no-fresh")
    assert "CPU time of this process throughout" in out and re.search(r"machine load \(1, 5, 15 min\): [\d.]+", out)
    assert re.search(r"analyze \(balanced\): +[\d.]+ s CPU +\( *\d+ µs per call; \d+ sessions, [1-9]\d* calls", out)
    assert re.search(r"ratio analyze/parse: \d+\.\d", out)
    # The peer is measured when it is installed, and said to be missing otherwise: never silently left out.
    assert re.search(r"ratio analyze/peer: +\d+\.\d\d", out) or "peer:               not installed" in out


def test_bench_analyze_times_the_floor_every_text_read_before() -> None:
    out = run_bench("bench/bench_analyze.py", "tests/data/agentdojo-sample.tar.gz", "--no-fresh", "--floor")
    floor = re.search(r"analyze, every text read before: +([\d.]+) s CPU +\( *(\d+) µs per call; (\d+) texts", out)
    assert floor is not None and float(floor[1]) > 0
    assert floor[3] == "0"  # the timed pass read no text for the first time
    assert re.search(r"ratio floor/peer: +\d+\.\d\d", out) or "peer:               not installed" in out


def test_bench_instructions_counts_the_analysis_of_a_sample_less_its_fixed_cost() -> None:
    out = run_bench(
        "bench/bench_instructions.py", "tests/data/agentdojo-sample.tar.gz", "--every", "4", "--warm-runs", "2"
    )
    assert re.search(r"sample: every 4th run, [1-9]\d* runs", out)
    (line,) = [line for line in out.splitlines() if line.startswith(str(ROOT))]
    total, fixed, calls, per_call = re.findall(
        r"([\d,]+) in all, ([\d,]+) fixed .*, (\d+) calls: ([\d,]+) per call", line
    )[0]
    assert int(total.replace(",", "")) > int(fixed.replace(",", "")) > 0 and int(calls) > 0
    assert int(per_call.replace(",", "")) > 0 and line.endswith("ratio to the first tree 1.000")


def test_bench_call_steps_prints_the_cost_of_each_step_per_call() -> None:
    out = run_bench("bench/bench_call_steps.py", "tests/data/agentdojo-sample.tar.gz")
    rows = re.findall(r"^\| ((?:· )*)(.+?) \| (\d+) \| (\d+) % \|\s*(\d*)\s*\|$", out, re.MULTILINE)
    steps = {name: (len(depth) // 2, int(us), int(count or 0)) for depth, name, us, _, count in rows}
    whole = steps.pop("the whole analysis")[1]
    assert steps.pop("for scale: the bare parse of the archive")[1] < whole
    assert whole > 0 and "decide a call (before_call)" in steps and "read a result (after_call)" in steps
    assert steps["decide a call (before_call)"][2] > 0  # every step ran and was counted
    # A step nested under another is part of it: never more than its parent.
    parents: list[int] = []
    for depth, us, _ in steps.values():
        parents = parents[:depth]
        assert all(us <= parent + 1 for parent in parents[-1:])
        parents.append(us)
    assert sum(us for depth, us, _ in steps.values() if depth == 0) <= whole + 1
    assert "| _digest._digest_text_now |" in out  # the memos' hits and misses


def test_a_nested_step_is_counted_only_while_its_parent_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    import bench_call_steps

    class Work:
        def outer(self) -> None:
            self.inner()

        def inner(self) -> None:
            pass

    monkeypatch.setattr(bench_call_steps, "STEPS", [(0, "outer", Work, "outer"), (1, "inner", Work, "inner")])
    clock = bench_call_steps.StepClock()
    clock.install()
    try:
        work = Work()
        work.outer()
        work.inner()  # called from elsewhere: not part of "outer", so not in its row
        work.outer()
    finally:
        clock.remove()
    assert clock.calls == [2, 2]
    assert Work.__dict__["inner"].__name__ == "inner" and not hasattr(Work.__dict__["inner"], "__wrapped__")


def test_a_turn_gives_up_clearly_when_the_delivery_thread_never_hands_over(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    import threading
    from types import SimpleNamespace

    import bench_otel

    stuck = SimpleNamespace(worker=SimpleNamespace(), _wake=threading.Event(), _queued=[b"{}"], _asleep=False)
    monkeypatch.setattr(bench_otel, "DRAIN_LIMIT_S", 0.05)
    pause = bench_otel.EnginePause(SimpleNamespace(_delivery=stuck, worker_kind="thread"), drains=True)
    with pytest.raises(SystemExit, match="did not hand over its queue"):
        pause.drain()
    stuck._queued.clear()
    stuck._asleep = True
    pause.drain()  # an idle thread: the turn ends at once


@pytest.mark.parametrize(
    "arguments",
    [
        ["bench/bench_before_call.py", "--sizes", "10", "--probes", "6"],
        ["bench/bench_evidence_steps.py", "--texts", "20"],
        ["bench/bench_bounds.py", "--skip-large"],
        ["bench/bench_fingerprints.py", "--mb", "0.2", "--time-mb", "0.05"],
        ["bench/bench_graph_path.py", "tests/data/agentdojo-sample.tar.gz"],
        ["bench/bench_paraphrase.py", "--repeat", "1"],
    ],
    ids=lambda arguments: Path(arguments[0]).stem,
)
def test_a_timing_benchmark_states_the_machines_load_and_that_it_times_cpu(arguments: list[str]) -> None:
    out = run_bench(*arguments)
    first = out.splitlines()[0]
    assert re.fullmatch(r"machine load \(1, 5, 15 min\): [\d.]+ [\d.]+ [\d.]+; times are CPU time .+", first), first
