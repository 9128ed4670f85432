"""The memory the evidence memos hold when each is filled past its budget with input that is costly to keep.

Each memo is fed texts of the longest length it keeps until it has let old ones go, then the growth of the
process's resident memory is printed beside the units it keeps (characters of text, plus ``ITEM_COST`` per item
of a kept result): words with numbers for the fingerprints and salient tokens (many facts per character), JSON
listings for the documents, and texts dense with addresses. Run: ``python bench/bench_memo_memory.py [--batch]``;
with ``--batch``, at the bounds a batch analysis gives them (``monitor.evidence.widen_text_memos``), and the total.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any

from monitor.evidence import (
    ReadBounds,
    Reading,
    _content,
    _destinations,
    _digest,
    _fingerprints,
    _paraphrase,
    clear_text_memos,
    widen_text_memos,
)

RANDOM = random.Random(1)
WORDS = ["".join(RANDOM.choice(string.ascii_lowercase) for _ in range(RANDOM.randint(3, 9))) for _ in range(5000)]


def rss_mib() -> float:
    """The process's resident memory, MiB (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024
    return 0.0


def make_prose(length: int) -> str:
    """Rare words, one in ten with a number: many salient tokens and fingerprints per character."""
    out: list[str] = []
    size = 0
    while size < length:
        word = RANDOM.choice(WORDS)
        if RANDOM.random() < 0.1:
            word = word.capitalize() + str(RANDOM.randint(1000, 99999))
        out.append(word)
        size += len(word) + 1
    return " ".join(out)[:length]


def make_listing(length: int) -> str:
    """A JSON listing of small objects, cut to whole objects under ``length`` characters."""
    text = json.dumps([{"id": j, "n": RANDOM.choice(WORDS), "v": [1, 2, 3]} for j in range(length // 25)])
    text = text[:length]
    return text[: text.rfind("},") + 1] + "]"


def make_addresses(length: int) -> str:
    return " ".join(f"{w}@{w}.example" for w in RANDOM.sample(WORDS, length // 10))[:length]


def fill(name: str, memo: Any, make: Callable[[], Any], call: Callable[[Any], object]) -> float:
    gc.collect()
    before = rss_mib()
    while True:  # until it is full: an entry went to make room (entries can be large, so never "98 % full")
        size = memo.cache_size()
        call(make())
        if memo.cache_size() <= size:
            break
    for _ in range(max(10, memo.cache_size() // 10)):  # past the budget: old entries go
        call(make())
    gc.collect()
    grown = rss_mib() - before
    kept = f"{memo.cache_size():>6} entries  {memo.cache_units():>10,} units of {memo.budget:>10,}"
    print(f"{name:<16} {kept}  {grown:6.1f} MiB")
    return grown


def main() -> None:
    """Fill every memo past its budget and print the memory each holds."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch", action="store_true", help="at the bounds a batch analysis gives the memos")
    args = parser.parse_args()
    clear_text_memos()
    if args.batch:
        widen_text_memos()
    bounds = ReadBounds()
    print(f"{'memo':<16} {'kept':>14}  {'units':>30}  {'RSS growth':>10}")
    fingerprints, facts = _fingerprints._read_fingerprints, _paraphrase._read_private_keys
    grown = fill("fingerprints", fingerprints, lambda: make_prose(fingerprints.chars), fingerprints)
    grown += fill(
        "k-grams",
        _fingerprints._read_kgrams,
        lambda: make_prose(_fingerprints._read_kgrams.chars),
        _fingerprints._read_kgrams,
    )
    grown += fill("salient tokens", facts, lambda: make_prose(facts.chars), facts)
    lookup = _paraphrase._read_lookup_keys
    grown += fill("lookup tokens", lookup, lambda: make_prose(lookup.chars), lookup)
    addresses = _destinations._read_addresses
    grown += fill("addresses", addresses, lambda: make_addresses(addresses.chars), addresses)
    documents, digests = _content._parse_shared, _digest._digest_text
    grown += fill("documents", documents, lambda: make_listing(documents.chars), lambda t: documents(t, bounds))
    grown += fill(
        "digests", digests, lambda: make_listing(digests.chars), lambda t: _digest.digest_result(Reading(t), 1_000_000)
    )
    print(f"all memos: {grown:.1f} MiB")


if __name__ == "__main__":
    main()
