"""Benchmark: the instructions the analysis of the AgentDojo dev runs executes, counted by valgrind, for one tree or
several side by side.

CPU time moves with the machine's load by tens of percent; the count of instructions a process executes does not
(two runs of the same tree differ only by what the hash seed changes, a small fraction), so two trees compared
this way differ by what their code does. Valgrind runs the interpreter about fifty times slower, so the benchmark
analyses a sample: every ``--every``-th run file of the archive (1,138 of the 18,198 dev runs with the default 16),
written to a temporary archive. For each tree it counts, in fresh processes under ``valgrind --tool=callgrind``:

- the analysis as ``bench_analyze.py`` times it (rule packs loaded and patterns compiled by a warm-up on the
  sample's first runs, then the whole sample under ``collect_for_batch``);
- the same process without the timed analysis (imports, rule packs, warm-up): the fixed cost, taken off.

It prints the instructions per call of the analysis and, for each tree after the first, their ratio to the first.
The sample has fewer runs of each environment than the archive, so fewer result texts come back: the memos save
less than on the whole archive, and the figure weighs first readings more. Usage::

    python bench/bench_instructions.py [ARCHIVE] [--every 16] [--tree PATH ...] [--warm-runs 50]

Each ``--tree`` is a checkout whose ``monitor`` package is analysed (by default this one).
"""

from __future__ import annotations

import argparse
import io
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from monitor.ingest import iter_run_files

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_ARCHIVE = ROOT / ".." / "shared" / "data" / "agentdojo" / "dev-runs.tar.gz"
_COLLECTED = re.compile(r"^==\d+== Collected : (\d+)$", re.MULTILINE)
_ANALYSIS = """
import sys
from pathlib import Path
sys.path.insert(0, {bench!r})
from bench_analyze import analyze, warm_up
from monitor import Posture
from monitor.models import AnalysisSummary
sample = Path({sample!r})
warm_up(sample, Posture.BALANCED, runs={warm_runs!r})
if {timed!r}:
    summary = analyze(sample, Posture.BALANCED, fresh_memos=False)
    print("calls", summary.calls, "errors", summary.errors)
"""


def write_sample(archive: Path, every: int, folder: Path) -> tuple[Path, int]:
    """Write every ``every``-th run file of ``archive`` to an archive in ``folder``; its path and its runs."""
    sample = folder / "sample.tar.gz"
    runs = 0
    with tarfile.open(sample, "w:gz") as out:
        for i, (name, data) in enumerate(iter_run_files(archive)):
            if i % every:
                continue
            member = tarfile.TarInfo(f"{name}.json")
            member.size = len(data)
            out.addfile(member, io.BytesIO(data))
            runs += 1
    return sample, runs


def read_collected(stderr: str) -> int:
    """The instructions valgrind's callgrind reports it collected (the last report in ``stderr``)."""
    found = _COLLECTED.findall(stderr)
    if not found:
        raise SystemExit(f"valgrind reported no count:\n{stderr[-2000:]}")
    return int(found[-1])


def count_instructions(tree: Path, sample: Path, *, timed: bool, warm_runs: int = 50) -> tuple[int, str]:
    """The instructions of one process analysing ``sample`` with ``tree``'s package (or only warming up on its first
    ``warm_runs`` runs), and what it printed."""
    script = _ANALYSIS.format(bench=str(ROOT / "bench"), sample=str(sample), timed=timed, warm_runs=warm_runs)
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c", script],
        cwd=tree,
        env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"the analysis under valgrind failed ({tree}):\n{done.stderr[-2000:]}")
    return read_collected(done.stderr), done.stdout


def main() -> None:
    """Count each tree's instructions and print them per call, with their ratios to the first tree."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("archive", nargs="?", type=Path, default=DEFAULT_ARCHIVE)
    parser.add_argument("--every", type=int, default=16, help="analyse every n-th run file (default 16)")
    parser.add_argument("--tree", type=Path, action="append", help="a checkout to measure (repeatable)")
    parser.add_argument("--warm-runs", type=int, default=50, help="runs analysed before, not counted (default 50)")
    args = parser.parse_args()
    if not args.archive.exists():
        raise SystemExit(f"no such archive: {args.archive}")
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed: it counts the instructions")
    trees = [tree.resolve() for tree in args.tree or [ROOT]]
    with tempfile.TemporaryDirectory() as folder:
        sample, runs = write_sample(args.archive, max(args.every, 1), Path(folder))
        print(f"instructions counted by valgrind (callgrind); sample: every {args.every}th run, {runs} runs")
        first = None
        for tree in trees:
            total, out = count_instructions(tree, sample, timed=True, warm_runs=args.warm_runs)
            fixed, _ = count_instructions(tree, sample, timed=False, warm_runs=args.warm_runs)
            calls = int(out.split()[1])
            per_call = (total - fixed) / max(calls, 1)
            first = first or per_call
            print(
                f"{tree}: {total:,} in all, {fixed:,} fixed (imports, warm-up), {calls} calls: "
                f"{per_call:,.0f} per call; ratio to the first tree {per_call / first:.3f}"
            )


if __name__ == "__main__":
    main()
