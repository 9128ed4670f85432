"""Benchmark: paraphrase evidence search time against the size and shape of an argument.

A :class:`~monitor.evidence.SalientIndex` holds two private notes; arguments of 100 kB and 1 MB of ordinary
prose, and 100 kB runs of short adversarial atoms (digits, separators, zero-width and fullwidth characters),
are searched. Printed, measured one after the other in this process so that ratios hold on a shared machine:

- the 1 MB / 100 kB search-time ratio (linear search gives about 10);
- per adversarial atom, the search time of its 100 kB run divided by that of 100 kB of prose (a backtracking
  tokenizer shows up as a ratio in the hundreds).

Usage::

    python bench/bench_paraphrase.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

from machine_load import describe_load

from monitor.evidence import SalientIndex

NOTE = "Meeting with Acme Corp about Project Nightingale, budget $2.4M, contact ref ACC-88412"
SALARY = "Q3 salary bands: engineering 180-240k (confidential), design 150-190k"
CHUNK = "Nothing here but words like Nightingale, 42 apples, ref XYZ-12345 and 2026-01-02. "
ATOMS = ["1", "a", "1-", "a.", "A1", "$1", "1k", "a@", "a.b@", "DE89 ", "Mar 1 ", "1,000,", "\u200b", "\uff41\uff11"]


def time_search(idx: SalientIndex, text: str, repeat: int) -> float:
    """Best of ``repeat`` searches of ``text``, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        idx.search([text])
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    """Print the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    idx = SalientIndex()
    idx.add("c1", NOTE)
    idx.add("c2", SALARY)
    small = CHUNK * (100_000 // len(CHUNK))
    big = CHUNK * (1_000_000 // len(CHUNK))
    t_small = time_search(idx, small, args.repeat)
    t_big = time_search(idx, big, args.repeat)
    ratio = t_big / t_small
    print(describe_load())
    print(f"prose 100 kB: {t_small * 1e3:8.1f} ms   1 MB: {t_big * 1e3:8.1f} ms   ratio {ratio:5.1f} (linear: ~10)")
    for atom in ATOMS:
        t_atom = time_search(idx, atom * (100_000 // len(atom)), args.repeat)
        print(f"atom {atom!r:>12}: {t_atom * 1e3:8.1f} ms   / prose of the same size: {t_atom / t_small:6.2f}")


if __name__ == "__main__":
    main()
