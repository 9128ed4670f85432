"""Benchmark: the time of one ``SessionMonitor.before_call`` as the session grows, in process.

A host asks the monitor before every tool call, so this is the latency an agent waits for. For each size N in
``--sizes`` (default 10, 100, 1,000, 10,000), a session is driven to N prior calls: a mix of private reads
(mail, files), untrusted fetches (web pages, issues) and sends, each with a result of a few hundred characters
that differs from call to call, so that the content index grows as it does in a long session. Then
``--probes`` calls are asked about (``before_call`` timed, in the CPU time of its thread, nothing else), in turn: a
read, a fetch and a send carrying a line of earlier private content (the costliest kind: the session is armed
and the engine gathers evidence). Each probe gets its result afterwards (not timed), so the probes add
``--probes`` calls to the session: the curve is over N to N + probes calls.

All sizes are measured in one run, one after the other, and printed as median, p90 and p99 in microseconds,
with the ratio of each size's p99 to the smallest size's: growth with the session's length shows there.
Targets: p99 at most 200 µs and median at most 50 µs at 1,000 prior calls, no growth. Usage::

    python bench/bench_before_call.py [--sizes 10,100,1000,10000] [--probes 300]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from machine_load import describe_load

from monitor import SessionMonitor

OPEN = {"openWorldHint": True}
CLOSED = {"openWorldHint": False}
TOOLS: list[dict[str, Any]] = [
    {"name": "read_mail", "description": "Read a message from the user's inbox", "annotations": CLOSED},
    {"name": "read_file", "description": "Read a file from the user's drive", "annotations": CLOSED},
    {"name": "fetch_page", "description": "Fetch a web page", "annotations": OPEN},
    {"name": "get_issue", "description": "Read an issue of a public repository", "annotations": OPEN},
    {"name": "send_mail", "description": "Send an e-mail", "annotations": OPEN},
]
WORDS = (
    "quarterly forecast margin supplier invoice renewal contract escrow audit roadmap onboarding payroll "
    "migration latency incident rollback vendor pricing discount warehouse shipment customs tariff ledger"
).split()


def make_text(n: int, kind: str) -> str:
    """A result of a few hundred characters that differs from call to call."""
    words = [WORDS[(n * 7 + i * 3) % len(WORDS)] for i in range(40)]
    return f"{kind} #{n}: " + " ".join(words) + f". Reference {kind[:3].upper()}-{n:06d}-{(n * 7919) % 99991:05d}."


def run_call(monitor: SessionMonitor, n: int, timed: bool) -> int:
    """One call of the mix (by ``n``), its result given; return the ns ``before_call`` took (0 if not timed)."""
    kind = n % 5
    if kind in (0, 1):
        tool, args = ("read_mail", {"id": str(n)}) if kind == 0 else ("read_file", {"path": f"/docs/{n}.txt"})
        result = make_text(n, "private")
    elif kind in (2, 3):
        tool, args = ("fetch_page", {"url": f"https://news{n}.example/a"}) if kind == 2 else ("get_issue", {"n": n})
        result = make_text(n, "public")
    else:
        earlier = make_text(n - 4, "private")
        tool, args = "send_mail", {"to": f"partner{n}@vendor.example", "body": "Summary: " + earlier[:160]}
        result = "sent"
    start = time.thread_time_ns()
    monitor.before_call("s", "app", tool, args, f"c{n}")
    took = time.thread_time_ns() - start if timed else 0
    monitor.after_call("s", f"c{n}", {"content": [{"type": "text", "text": result}]})
    return took


def measure(size: int, probes: int) -> list[float]:
    """Drive a session to ``size`` calls, then time ``probes`` calls; return their times in µs."""
    monitor = SessionMonitor()
    monitor.register_tools("s", "app", TOOLS, trusted=True)
    monitor.observe_user_message("s", "Go through my mail and the tracker and keep the partners posted.")
    for n in range(size):
        run_call(monitor, n, timed=False)
    gc.collect()
    times = []
    for n in range(size, size + probes):
        # Only the three costliest kinds are probed: a private read, an untrusted fetch and an armed send.
        if n % 5 in (0, 2, 4):
            times.append(run_call(monitor, n, timed=True) / 1000)
        else:
            run_call(monitor, n, timed=False)
    return times


def main() -> None:
    """Measure every size and print the curve."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10,100,1000,10000")
    parser.add_argument("--probes", type=int, default=300)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(describe_load("times are CPU time of the thread that asks (``thread_time``)"))
    print(f"{'prior calls':>12} {'n':>5} {'median µs':>10} {'p90 µs':>9} {'p99 µs':>9} {'p99 / first':>12}")
    first = None
    for size in sizes:
        times = sorted(measure(size, args.probes))
        q = statistics.quantiles(times, n=100)
        p99 = q[98]
        first = first or p99
        median = statistics.median(times)
        print(f"{size:>12,} {len(times):>5} {median:>10.0f} {q[89]:>9.0f} {p99:>9.0f} {p99 / first:>12.2f}")
    print("targets at 1,000 prior calls: median <= 50 µs, p99 <= 200 µs, no growth (p99 / first near 1)")


if __name__ == "__main__":
    main()
