"""Benchmark: the wall time of one Claude Code ``PreToolUse`` hook process, Python start included.

Claude Code runs ``trifecta hook claude-code`` once per event and waits for it. This measures what it waits
for: a subprocess ``python -m monitor hook claude-code --state-dir DIR`` fed one ``PreToolUse`` payload on
stdin, from its start to its exit, with the engine already running (warm) and in a session that already holds
``--prior`` calls (each a ``PreToolUse`` and its ``PostToolUse``, sent through the same client code in this
process, with results that differ from call to call so that the session's content index grows). The call
measured is the costliest kind: a pull request carrying private data while the session is armed (the engine
gathers evidence and asks). The sessions of each size are measured in turn, round after round, so that a
change of the machine's speed falls on all of them alike; after each measured call its ``PostToolUse`` is sent
(not timed) so the session keeps its size.

Cold starts are measured too: the engine stopped (``--stop``), then one hook process for a new session (the
engine starts: Python, imports, rules) and one for the largest session (the engine also rebuilds the session
from the store).

One more warm row runs the hook as ``trifecta install claude-code`` writes it by default, without
``--state-dir``: the client then asks platformdirs for the user's state directory (here ``$XDG_STATE_HOME``,
pointed at the same folder, so the same engine answers).

For scale, the table ends with a bare Python start (``python -I -c pass``), Python running an empty module
as the hook runs its own (``python -m``: the site and ``runpy`` too), and the client alone (its imports,
``--help``): what no engine can remove. The first lines name the machine's load average and whether
Python writes its bytecode cache (``PYTHONDONTWRITEBYTECODE``): without it, every module is compiled again at
every start, the engine's included.

Targets: warm p95 at most 100 ms, and no growth with the session's length (the ratio p95(500)/p95(10) near 1);
the first event (cold, new session) at most 1 s.
Usage::

    python bench/bench_hook.py [--prior 10,500,1000] [--samples 40] [--cold 3]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import redirect_stdout, suppress
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from monitor.hosts._hook import exchange, locate_engine, parse_options  # noqa: E402

TEMPLATE = [json.loads(line) for line in (ROOT / "samples" / "claude-code" / "hooks.jsonl").read_text().splitlines()]
PROMPT, CALLS, SEND = TEMPLATE[1], TEMPLATE[2:6], TEMPLATE[6]


def hook_command(state_dir: Path | None) -> list[str]:
    """The command Claude Code runs (None: without ``--state-dir``, as installed by default)."""
    named = ["--state-dir", str(state_dir)] if state_dir is not None else []
    return [sys.executable, "-m", "monitor", "hook", "claude-code", *named]


def default_env(state_dir: Path) -> dict[str, str] | None:
    """An environment in which the user's state directory is ``state_dir`` (None where platformdirs would put it
    elsewhere, e.g. on a platform without ``$XDG_STATE_HOME``)."""
    import platformdirs

    env = {k: v for k, v in os.environ.items() if k != "TRIFECTA_STATE_DIR"}
    env["XDG_STATE_HOME"] = str(state_dir.parent)
    saved = os.environ.copy()
    try:
        os.environ.clear()
        os.environ.update(env)
        found = Path(platformdirs.user_state_dir("trifecta-monitor", appauthor=False))
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return env if found == state_dir else None


def send(state_dir: Path, payload: dict[str, Any]) -> dict[str, Any]:
    """Send one event to the engine through the hook client's own code, in this process."""
    options = parse_options(["--state-dir", str(state_dir), "--timeout", "120"])
    reply = exchange(
        locate_engine(options), options, {"op": "event", "received": time.time()}, json.dumps(payload).encode()
    )
    assert reply.get("committed"), reply
    return reply


def varied(payload: dict[str, Any], sid: str, n: int) -> dict[str, Any]:
    """A copy of a sample payload in session ``sid``, call ``n``: its own call id, and a result of its own."""
    out = {**payload, "session_id": sid}
    if "tool_use_id" in out:
        out["tool_use_id"] = f"{payload['tool_use_id']}_{n}"
    if isinstance(out.get("tool_response"), list):
        out["tool_response"] = [
            {**b, "text": f"{b['text']}\nrevision {n}: build-{n * 7919:08x}.internal.acme.io"} if "text" in b else b
            for b in out["tool_response"]
        ]
    return out


def build_session(state_dir: Path, sid: str, prior: int) -> None:
    """A session of ``prior`` calls with their results (the first prompt, then the sample's reads in turn)."""
    send(state_dir, {**PROMPT, "session_id": sid})
    for n in range(prior):
        pre, post = CALLS[(n % 2) * 2], CALLS[(n % 2) * 2 + 1]
        send(state_dir, varied(pre, sid, n))
        send(state_dir, varied(post, sid, n))


def time_hook(
    state_dir: Path, payload: dict[str, Any], env: dict[str, str] | None = None
) -> tuple[float, dict[str, Any]]:
    """Run one hook process on ``payload``: its wall time (s) and its answer (with ``env``: without
    ``--state-dir``, in that environment)."""
    data = json.dumps(payload).encode()
    command = hook_command(state_dir if env is None else None)
    start = time.perf_counter()
    done = subprocess.run(command, input=data, capture_output=True, check=True, timeout=120, env=env)
    elapsed = time.perf_counter() - start
    return elapsed, json.loads(done.stdout)


def time_process(command: list[str], cwd: Path | None = None) -> float:
    """The wall time of one process (s)."""
    start = time.perf_counter()
    subprocess.run(command, capture_output=True, check=True, timeout=120, cwd=cwd)
    return time.perf_counter() - start


def measure_call(state_dir: Path, sid: str, n: int, env: dict[str, str] | None = None) -> float:
    """Time one armed send in ``sid`` (a hook process), then send its result (untimed)."""
    elapsed, answer = time_hook(state_dir, varied(SEND, sid, n), env)
    assert answer.get("hookSpecificOutput", {}).get("permissionDecision") == "ask", answer
    post = {**varied(SEND, sid, n), "hook_event_name": "PostToolUse", "tool_response": {"url": "pr/1"}}
    send(state_dir, post)
    return elapsed


def stop_engine(state_dir: Path) -> None:
    """Stop the engine and wait until it has exited."""
    paths = locate_engine(parse_options(["--state-dir", str(state_dir)]))
    pid = int(Path(paths.pid).read_text()) if Path(paths.pid).exists() else None
    subprocess.run([*hook_command(state_dir), "--stop"], check=True, timeout=60)
    deadline = time.monotonic() + 30
    while pid is not None and time.monotonic() < deadline:
        try:
            status = Path(f"/proc/{pid}/status").read_text() if Path("/proc").is_dir() else ""
            os.kill(pid, 0)
        except (ProcessLookupError, FileNotFoundError):
            return
        if "\nState:\tZ" in status:  # exited; its new parent has not reaped it yet
            return
        time.sleep(0.02)


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))]


def main() -> None:
    """Run the benchmark and print its table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--prior", default="10,500,1000", help="prior calls of each session (comma-separated)")
    parser.add_argument("--samples", type=int, default=40, help="hook processes timed per session size")
    parser.add_argument("--cold", type=int, default=3, help="cold starts timed")
    args = parser.parse_args()
    sizes = [int(s) for s in args.prior.split(",")]
    with tempfile.TemporaryDirectory(prefix="bench-hook-") as tmp:
        state_dir = Path(tmp) / "trifecta-monitor"
        try:
            run(state_dir, sizes, args.samples, args.cold)
        finally:
            kill_engine(state_dir)


def run(state_dir: Path, sizes: list[int], samples: int, colds: int) -> None:
    """Build the sessions, time the warm hooks round after round, then the cold starts; print the table."""
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average (1, 5, 15 min) at the start: {load}")
    caching = "not written (PYTHONDONTWRITEBYTECODE)" if sys.dont_write_bytecode else "written"
    print(f"Python's bytecode cache: {caching}")
    start = time.perf_counter()
    small = min(sizes)
    env = default_env(state_dir)
    with redirect_stdout(io.StringIO()):
        for size in sizes:
            build_session(state_dir, f"bench-{size}", size)
        if env is not None:
            build_session(state_dir, "bench-default", small)
    print(f"sessions built ({', '.join(map(str, sizes))} prior calls) in {time.perf_counter() - start:.1f} s")
    times: dict[int, list[float]] = {size: [] for size in sizes}
    by_default: list[float] = []
    for n in range(samples):
        for size in sizes:
            times[size].append(measure_call(state_dir, f"bench-{size}", 100_000 + n))
        if env is not None:
            by_default.append(measure_call(state_dir, "bench-default", 100_000 + n, env))
    floor = [time_process([sys.executable, "-I", "-c", "pass"]) for _ in range(samples)]
    (state_dir.parent / "empty_module.py").write_text("")
    empty = [time_process([sys.executable, "-m", "empty_module"], cwd=state_dir.parent) for _ in range(samples)]
    client = [time_process([*hook_command(state_dir), "--help"]) for _ in range(samples)]
    cold_new: list[float] = []
    cold_rebuild: list[float] = []
    largest = max(sizes)
    for n in range(colds):
        stop_engine(state_dir)
        cold_new.append(time_hook(state_dir, varied(PROMPT, f"cold-{n}", n) | {"hook_event_name": "SessionStart"})[0])
        stop_engine(state_dir)
        cold_rebuild.append(measure_call(state_dir, f"bench-{largest}", 200_000 + n))
    print()
    print("| one PreToolUse hook process | n | median ms | p95 ms | max ms |")
    print("|---|---|---|---|---|")
    for size in sizes:
        row = times[size]
        print(
            f"| warm, {size} prior calls | {len(row)} | {statistics.median(row) * 1000:.1f} | "
            f"{percentile(row, 95) * 1000:.1f} | {max(row) * 1000:.1f} |"
        )
    rows = (
        (f"warm, {small} prior calls, no `--state-dir` (platformdirs)", by_default),
        ("cold, new session", cold_new),
        (f"cold, rebuilds {largest} prior calls", cold_rebuild),
        ("for scale: `python -I -c pass`", floor),
        ("for scale: `python -m` of an empty module (the site and runpy, as the hook starts)", empty),
        ("for scale: the client alone (`--help`)", client),
    )
    for label, row in rows:
        if row:
            print(
                f"| {label} | {len(row)} | {statistics.median(row) * 1000:.1f} | "
                f"{percentile(row, 95) * 1000:.1f} | {max(row) * 1000:.1f} |"
            )
    print()
    big = max(s for s in sizes if s <= 500) if any(s <= 500 for s in sizes) else max(sizes)
    ratio = percentile(times[big], 95) / percentile(times[small], 95)
    print(f"ratio p95({big})/p95({small}): {ratio:.2f}")
    warm = [percentile(times[size], 95) for size in sizes] + ([percentile(by_default, 95)] if by_default else [])
    worst = max(warm) * 1000
    print(f"worst warm p95: {worst:.1f} ms (target: at most 100 ms)")
    if cold_new:
        first = statistics.median(cold_new) * 1000
        print(f"first event (cold, new session), median: {first:.0f} ms (target: at most 1 s)")


def kill_engine(state_dir: Path) -> None:
    """Kill the engine this benchmark started, if it still runs."""
    for pid_file in state_dir.glob("engine-*.pid"):
        with suppress(OSError, ValueError):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)


if __name__ == "__main__":
    main()
