"""What the evidence works out from a text alone is memoized within bounds, and a warm memo (texts seen in
another session first) gives exactly the reports a cold one gives."""

from __future__ import annotations

from pathlib import Path

from monitor import SessionMonitor
from monitor.analysis import analyze_records
from monitor.evidence import (
    _content,
    _destinations,
    _digest,
    _fingerprints,
    _paraphrase,
    clear_text_memos,
    count_memo_entries,
    count_memo_hits,
)
from monitor.evidence._fingerprints import FragmentIndex
from monitor.evidence._memo import ITEM_COST, TextMemo, memoize_text
from monitor.ingest import read_inputs

SAMPLES = sorted((Path(__file__).resolve().parents[2] / "samples").glob("*/*.jsonl"))
MEMOS = [
    _content._parse_shared,
    _destinations._read_addresses,
    _fingerprints._read_fingerprints,
    _fingerprints._read_secrets,
    _paraphrase._read_private_keys,
    _paraphrase._read_lookup_keys,
    _fingerprints._read_kgrams,
    _digest._digest_text,
]


def clear_memos() -> None:
    clear_text_memos()
    assert count_memo_entries() == 0


def test_a_memo_keeps_short_texts_within_its_budget_and_works_out_long_ones_each_time() -> None:
    calls: list[str] = []

    @memoize_text(chars=10, budget=4)
    def shout(text: str, suffix: str) -> str:
        calls.append(text)
        return text.upper() + suffix

    assert [shout("ab", "!"), shout("ab", "!"), shout("ab", "?")] == ["AB!", "AB!", "AB?"]
    assert calls == ["ab", "ab"]  # the other argument is part of what is remembered
    long = "x" * 11
    assert shout(long, "") == shout(long, "") and calls.count(long) == 2
    for text in ("c", "d", "e", "f", "g"):
        shout(text, "")
    # Four characters of text at most: the least recently used went first.
    assert (shout.cache_size(), shout.cache_units()) == (4, 4)
    calls.clear()
    shout("d", "")  # used again: now the most recently used
    shout("h", "")  # "e" goes, not "d"
    shout("d", "")
    shout("e", "")
    assert calls == ["h", "e"]


def test_a_result_of_many_items_costs_its_items_too() -> None:
    """A short text can yield many fingerprints or facts: the budget counts what is kept, not only the text."""

    @memoize_text(chars=100, budget=ITEM_COST * 10)
    def letters(text: str) -> tuple[str, ...]:
        return tuple(text)

    letters("abcdefgh")  # 8 characters and 8 items
    assert letters.cache_units() == 8 + 8 * ITEM_COST
    letters("ijk")  # 3 + 3 * 64 more: over the budget, the oldest goes
    assert letters.cache_size() == 1 and letters.cache_units() == 3 + 3 * ITEM_COST


def test_a_memo_counts_what_it_answered_and_what_it_worked_out() -> None:
    @memoize_text(chars=5, budget=100)
    def echo(text: str) -> str:
        return text

    for text in ("ab", "ab", "cd", "too long"):
        echo(text)
    assert (echo.hits, echo.misses) == (1, 3)  # the long text is worked out, never kept
    name = f"{echo.function.__module__}.{echo.function.__qualname__}"
    assert count_memo_hits()[name] == (1, 3)
    echo.cache_clear()
    assert (echo.hits, echo.misses, echo.cache_size()) == (0, 0, 0)


def test_a_memo_charges_what_its_cost_says() -> None:
    memo = TextMemo(lambda text: text * 3, 100, 10, cost=lambda text, value: len(value))
    memo("abc")
    assert memo.cache_units() == 9
    memo("de")  # 9 + 6 > 10: the oldest goes
    assert (memo.cache_size(), memo.cache_units()) == (1, 6)


def test_the_same_value_under_another_key_is_read_for_that_key() -> None:
    clear_memos()
    index = FragmentIndex()
    index.add_secrets("c1", "note", "Zq8-Lm3-Rt9-Wx2")
    index.add_secrets("c2", "password", "Zq8-Lm3-Rt9-Wx2")
    fresh = FragmentIndex()
    fresh.add_secrets("c2", "password", "Zq8-Lm3-Rt9-Wx2")
    assert index.secrets() == fresh.secrets() != []


def analyze_all() -> list[str]:
    reports = []
    for sample in SAMPLES:
        for item in analyze_records(read_inputs([sample]), SessionMonitor()):
            reports.append(item.model_dump_json())
    return reports


def test_reports_are_the_same_with_the_memos_cold_and_warm() -> None:
    assert len(SAMPLES) >= 20
    clear_memos()
    cold = analyze_all()
    assert any(memo.cache_size() for memo in MEMOS)
    warm = analyze_all()
    # Warm in another order too: each sample after all the others filled the memos.
    assert warm == cold
    assert list(reversed(analyze_all_reversed())) == cold


def analyze_all_reversed() -> list[str]:
    reports = []
    for sample in reversed(SAMPLES):
        batch = [item.model_dump_json() for item in analyze_records(read_inputs([sample]), SessionMonitor())]
        reports.extend(reversed(batch))
    return reports


def test_a_widened_memo_keeps_longer_texts_and_more_until_it_is_narrowed_again() -> None:
    calls: list[str] = []

    @memoize_text(chars=4, budget=8)
    def echo(text: str) -> str:
        calls.append(text)
        return text

    echo.widen(3, 6)
    for text in ("abcdef", "gh", "ij", "kl", "mn", "op", "qr", "st", "uv"):  # 6 + 8 * 2 = 22 units of 24
        echo(text)
    assert (echo.cache_size(), echo.cache_units()) == (9, 22)
    calls.clear()
    echo("abcdef")  # longer than the usual 4 characters, kept while widened
    assert calls == []
    echo("gh")  # the least recently used is now "ij"
    echo.narrow()
    # The long text goes first, then the least recently used until 8 units hold.
    assert (echo.chars, echo.budget) == (4, 8)
    assert (echo.cache_size(), echo.cache_units()) == (4, 8)
    calls.clear()
    for text in ("gh", "qr", "st", "uv", "ij", "abcdef"):
        echo(text)
    assert calls == ["ij", "abcdef"]
    echo.widen(2, 2)  # a memo that keeps longer texts than the batch length keeps them
    assert (echo.chars, echo.budget) == (4, 16)


def test_the_memos_are_widened_for_a_batch_and_narrowed_to_their_bounds_after_it() -> None:
    from monitor.analysis import collect_for_batch
    from monitor.evidence._memo import BATCH_CHARS, BATCH_SCALE

    usual = [(memo.chars, memo.budget) for memo in MEMOS]
    clear_memos()
    with collect_for_batch():
        assert [(memo.chars, memo.budget) for memo in MEMOS] == [
            (max(chars, BATCH_CHARS), budget * BATCH_SCALE) for chars, budget in usual
        ]
        batch = analyze_all()
    assert [(memo.chars, memo.budget) for memo in MEMOS] == usual
    assert all(memo.cache_units() <= memo.budget for memo in MEMOS)
    assert all(len(key if isinstance(key, str) else key[0]) <= memo.chars for memo in MEMOS for key in memo._kept)
    clear_memos()
    assert analyze_all() == batch


def test_narrowing_scans_again_when_a_hit_on_another_thread_moves_an_entry_meanwhile() -> None:
    from collections import OrderedDict

    class MovedOnce(OrderedDict[str, tuple[str, int]]):
        scans = 0

        def __iter__(self):  # type: ignore[no-untyped-def]
            MovedOnce.scans += 1
            if MovedOnce.scans == 1:
                raise RuntimeError("OrderedDict mutated during iteration")
            return super().__iter__()

    memo = TextMemo(lambda text: text, 2, 10)
    memo.widen(2, 8)
    memo._kept = MovedOnce()
    for text in ("abcdef", "ab", "cd"):
        memo(text)
    memo.narrow()
    assert MovedOnce.scans == 2
    assert sorted(memo._kept) == ["ab", "cd"] and memo.cache_units() == 4
