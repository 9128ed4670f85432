"""Benchmark: what reading one private text and searching one call's arguments cost, step by step, in process.

A call made while the session is armed waits for the evidence to be gathered: the private texts that arrived
since the last search are read (their salient tokens, k-gram fingerprints and secrets: each a pure function of
the text, worked out once per text), then the call's arguments are searched. This prints each step's time for
texts like those of ``bench/bench_before_call.py`` (a private result of a few hundred characters, an argument
carrying a line of it), each text new (the memos are bypassed), and each step's time as a multiple of the
``before_call`` median target (50 µs), measured in this one run: what a call costs at the least before anything
else is decided. Usage::

    python bench/bench_evidence_steps.py [--texts 400]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_before_call import make_text
from machine_load import describe_load

from monitor.evidence import _fingerprints, _paraphrase
from monitor.evidence._fingerprints import FragmentIndex
from monitor.evidence._paraphrase import SalientIndex

TARGET_US = 50.0


def time_each(step: Callable[[Any], object], inputs: list[Any]) -> float:
    """The median time of ``step`` over ``inputs``, in µs (each input once)."""
    times = []
    for item in inputs:
        start = time.thread_time_ns()
        step(item)
        times.append((time.thread_time_ns() - start) / 1000)
    return statistics.median(times)


def main() -> None:
    """Time each step and print it beside the target."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--texts", type=int, default=400)
    args = parser.parse_args()
    texts = [make_text(n, "private") for n in range(10_000, 10_000 + args.texts)]
    sent = ["Summary: " + text[:160] for text in texts]
    private = FragmentIndex()
    salient = SalientIndex()
    for n, text in enumerate(texts[:50]):
        private.add(f"c{n}", text)
        salient.add(f"c{n}", text)
    steps: list[tuple[str, Callable[[Any], object], list[Any]]] = [
        ("salient tokens of a private text", _paraphrase._read_private_keys.function, texts),
        ("fingerprints of a private text", _fingerprints._read_fingerprints.function, texts),
        ("secrets of a private text", lambda t: _fingerprints._read_secrets.function(t, "body"), texts),
        ("fingerprint search of an argument", lambda s: private.search([s]), sent),
        ("salient-token search of an argument", lambda s: salient.search([s]), sent),
    ]
    size = statistics.median(len(t) for t in texts)
    print(describe_load("times are CPU time of this thread (``thread_time``)"))
    print(f"private texts of {size:.0f} characters, arguments of {statistics.median(len(s) for s in sent):.0f}")
    print(f"{'step':<38}{'median µs':>10}{'x target':>10}")
    total = 0.0
    for name, step, inputs in steps:
        took = time_each(step, inputs)
        total += took
        print(f"{name:<38}{took:>10.1f}{took / TARGET_US:>10.2f}")
    print(f"{'one private text read, one search':<38}{total:>10.1f}{total / TARGET_US:>10.2f}")
    print(f"target: before_call median <= {TARGET_US:.0f} µs")


if __name__ == "__main__":
    main()
