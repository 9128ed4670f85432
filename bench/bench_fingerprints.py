"""Benchmark: the evidence index on one large private result (peak memory and index time per MB).

One private tool result of ``--mb`` megabytes (prose-like lines with numbers and identifiers) is recorded
in a fresh :class:`~monitor.evidence.ContentIndex` and fingerprinted by a search, as the session engine does
for an external call. Printed:

- the peak memory of that (``tracemalloc``), and its ratio to the size of the result itself: read with the
  default reading bounds, and read whole (no reading bound: only the index's own per-result budget applies);
- whether the index says it was truncated (what it did not examine counts against later calls);
- the time to index one MB of private text (a result within the per-result budget, all of it examined), and
  its ratio to one bare pass over the same text (``str.lower``), measured one after the other in this process
  so that the ratio holds on a shared machine.

Usage::

    python bench/bench_fingerprints.py [--mb 50] [--time-mb 0.9]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

from machine_load import describe_load

from monitor.evidence import ContentIndex, ReadBounds, Reading

_WORDS = (
    "invoice payment project budget contract review schedule meeting customer account transfer balance "
    "statement quarterly revenue forecast supplier shipment warehouse delivery approval signature"
).split()


def make_text(megabytes: float) -> str:
    """Prose-like private text of about ``megabytes`` MB, every line different."""
    lines = []
    size = 0
    i = 0
    target = int(megabytes * 1_000_000)
    while size < target:
        a, b, c = _WORDS[i % len(_WORDS)], _WORDS[(i * 7) % len(_WORDS)], _WORDS[(i * 13) % len(_WORDS)]
        amount = f"{i * 31 % 99_991}.{i % 100:02d}"
        line = f"Line {i}: the {a} for {b} ref ACC-{i * 7919 % 1_000_003} is {c}, amount {amount} EUR\n"
        lines.append(line)
        size += len(line)
        i += 1
    return "".join(lines)


def index_once(text: str, *, whole: bool = False) -> ContentIndex:
    """Record ``text`` as one private result and fingerprint it (a search forces that); ``whole``: read it with
    no reading bound."""
    index = ContentIndex()
    result = Reading(text, ReadBounds(max_chars=10**12)) if whole else text
    index.add_result("c1", result, private=True, untrusted=False)
    index.find_private({"body": "nothing private here"})
    return index


def measure_peak(megabytes: float, *, whole: bool = False) -> tuple[float, float, bool]:
    """Peak traced memory (MB) while indexing a result of ``megabytes`` MB, the text's own size, truncated."""
    text = make_text(megabytes)
    size = len(text) / 1e6
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    index = index_once(text, whole=whole)
    peak = (tracemalloc.get_traced_memory()[1] - base) / 1e6
    tracemalloc.stop()
    return peak, size, index.truncated


def measure_time(megabytes: float) -> tuple[float, float]:
    """Seconds per MB to index private text, and seconds per MB of a bare ``str.lower`` pass."""
    text = make_text(megabytes)
    size = len(text) / 1e6
    start = time.process_time()
    for _ in range(20):
        text.lower()
    bare = (time.process_time() - start) / 20 / size
    start = time.process_time()
    index_once(text)
    indexed = (time.process_time() - start) / size
    return indexed, bare


def main() -> None:
    """Run both measurements and print them."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=50.0, help="size of the private result for the peak")
    parser.add_argument("--time-mb", type=float, default=0.9, help="size of the private result for the timing")
    args = parser.parse_args()
    print(describe_load())
    for whole in (False, True):
        peak, size, truncated = measure_peak(args.mb, whole=whole)
        how = "read whole" if whole else "default reading bounds"
        print(
            f"peak memory indexing a {size:.1f} MB private result ({how}): {peak:.0f} MB "
            f"({peak / size:.2f}x its size); index truncated: {truncated}"
        )
    indexed, bare = measure_time(args.time_mb)
    print(f"index time: {indexed * 1000:.0f} ms/MB ({indexed / bare:.0f}x a bare str.lower pass)")


if __name__ == "__main__":
    main()
