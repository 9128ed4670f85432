"""Benchmark: ``trifecta analyze`` over the AgentDojo dev runs in one process, with ``--jobs N`` and with Dask
(``--dask local:N``), measured one after the other in one run, with the ratios to the single process.

Each is the command a user types (a fresh ``python -m monitor analyze … --format jsonl``), so start-up is
counted; the outputs are compared byte for byte. The machine's load average is printed before and after:
other work on the machine takes cores from the parallel runs first; the CPU seconds each run used (the command
and its workers) say what the parallel runs cost beyond the single one, whatever the load. Usage::

    python bench/bench_scale.py [ARCHIVE] [--limit N] [--jobs N]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import psutil

DEFAULT_ARCHIVE = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "agentdojo" / "dev-runs.tar.gz"


def limit_archive(archive: Path, limit: int, folder: Path) -> Path:
    """Write the first ``limit`` run files of ``archive`` into a new archive in ``folder``."""
    out = folder / f"first-{limit}.tar.gz"
    with tarfile.open(archive, "r|*") as src, tarfile.open(out, "w:gz") as dst:
        n = 0
        for member in src:
            if n >= limit:
                break
            data = src.extractfile(member) if member.isfile() else None
            dst.addfile(member, data)
            n += member.isfile() and member.name.endswith(".json")
    return out


def run(archive: Path, out: Path, *options: str) -> tuple[float, float, str]:
    """Time one ``analyze`` command; return the seconds, the CPU seconds of its processes and the output's digest.

    The CPU time is sampled from the command and every process below it (its workers) while it runs, a few
    times a second: a process's last fraction of a second can be missed, the same way in every run.
    """
    command = [sys.executable, "-m", "monitor", "analyze", str(archive), "--format", "jsonl", "-q", "-o", str(out)]
    start = time.perf_counter()
    process = subprocess.Popen([*command, *options], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    cpu: dict[int, float] = {}
    while process.poll() is None:
        _sample(process.pid, cpu)
        time.sleep(_SAMPLE_SECONDS)
    seconds = time.perf_counter() - start
    stderr = process.stderr.read() if process.stderr else b""
    if process.returncode not in (0, 2):
        sys.exit(f"{' '.join(options)}: exit {process.returncode}\n{stderr.decode(errors='replace')}")
    return seconds, sum(cpu.values()), hashlib.sha256(out.read_bytes()).hexdigest()


_SAMPLE_SECONDS = 0.2


def _sample(pid: int, cpu: dict[int, float]) -> None:
    """Record the CPU seconds so far of ``pid`` and every process below it."""
    try:
        root = psutil.Process(pid)
        processes = [root, *root.children(recursive=True)]
    except psutil.Error:
        return
    for p in processes:
        try:
            times = p.cpu_times()
        except psutil.Error:
            continue
        cpu[p.pid] = times.user + times.system


def load() -> str:
    """Return the load averages (1, 5, 15 minutes)."""
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def main() -> None:
    """Run the three measurements and print the ratios."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("archive", nargs="?", type=Path, default=DEFAULT_ARCHIVE)
    parser.add_argument("--limit", type=int, default=None, help="Only the first N run files (a quick run).")
    parser.add_argument("--jobs", type=int, default=2, help="Worker processes for --jobs and --dask local:N.")
    parser.add_argument("--keep", type=Path, default=None, help="Keep the three outputs in this folder.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        archive = limit_archive(args.archive, args.limit, folder) if args.limit else args.archive
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        print(f"input: {archive.name} ({'first ' + str(args.limit) if args.limit else 'all'} run files); {cores} cores")
        print(f"load average before: {load()}")
        single, single_cpu, digest = run(archive, folder / "one.jsonl", "--jobs", "1")
        jobs, jobs_cpu, jobs_digest = run(archive, folder / "jobs.jsonl", "--jobs", str(args.jobs))
        dask, dask_cpu, dask_digest = run(archive, folder / "dask.jsonl", "--dask", f"local:{args.jobs}")
        print(f"load average after:  {load()}")
        print(f"{'run':<22}{'seconds':>10}{'speed-up':>10}{'cpu s':>10}{'cpu/single':>12}  output")
        print(f"{'single process':<22}{single:>10.1f}{1.0:>10.2f}{single_cpu:>10.1f}{1.0:>12.2f}  sha256 {digest[:12]}")
        for name, seconds, cpu, got in (
            (f"--jobs {args.jobs}", jobs, jobs_cpu, jobs_digest),
            (f"--dask local:{args.jobs}", dask, dask_cpu, dask_digest),
        ):
            same = "identical" if got == digest else "DIFFERENT"
            ratio = single / seconds
            print(f"{name:<22}{seconds:>10.1f}{ratio:>10.2f}{cpu:>10.1f}{cpu / single_cpu:>12.2f}  {same}")
        print("speed-up: single-process seconds / seconds; cpu s: CPU seconds of the command and its workers")


if __name__ == "__main__":
    main()
