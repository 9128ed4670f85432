"""A session's fingerprint and salient-token tables take a private text (or an exclusion) at once. Whatever the
texts, their times and the bounds, each table ends exactly as adding them hash by hash, or token by token, in
order leaves it: the same entries in the same order, the same first sources, the same times, the same
truncation. The oracles below are the one-at-a-time loops."""

from __future__ import annotations

from collections import OrderedDict

from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.evidence import FragmentIndex, SalientIndex
from monitor.evidence._fingerprints import _read_fingerprints, _read_kgrams
from monitor.evidence._paraphrase import _MAX_SOURCES, _prepare_text, _read_private_keys, _scan

_WORDS = [
    "Nightingale",
    "budget",
    "2.4M",
    "$45",
    "45",
    "ACC-88412",
    "acc88412",
    "salary bands",
    "Acme Corp",
    "2026-10-20",
    "the",
    "alpha7beta",
    "quarterly",
    "invoice",
    "1,250.75",
    "180-240k",
]
_TEXTS = st.lists(st.sampled_from(_WORDS), max_size=14).map(" ".join)
_STEPS = st.lists(
    st.tuples(st.sampled_from(["add", "exclude", "typed"]), _TEXTS, st.integers(0, 4), st.sampled_from(["c1", "c2"])),
    max_size=14,
)


class _Fingerprints:
    """The fingerprint table, one hash at a time."""

    def __init__(self, max_fingerprints: int) -> None:
        self.max = max_fingerprints
        self.prints: OrderedDict[int, str] = OrderedDict()
        self.known: dict[int, int] = {}
        self.truncated = False

    def exclude(self, text: str, at: int) -> None:
        if len(self.known) < 4 * self.max:
            for h in _read_kgrams(text):
                self.known.setdefault(h, at)

    def add(self, call_id: str, text: str, at: int) -> None:
        for h in _read_fingerprints(text):
            if self.known.get(h, at) >= at:
                self.prints.setdefault(h, call_id)
                if len(self.prints) > self.max:
                    self.prints.popitem(last=False)
                    self.truncated = True


class _Salient:
    """The salient-token table, one token at a time."""

    def __init__(self, max_tokens: int) -> None:
        self.max = max_tokens
        self.tokens: OrderedDict[str, tuple[int, list[str]]] = OrderedDict()
        self.known: dict[str, int] = {}
        self.typed: set[str] = set()
        self.truncated = False

    def exclude(self, text: str, at: int | None) -> None:
        for fact in _scan(_prepare_text(text), lookup=True):
            for token in fact.tokens:
                if at is None:
                    if len(self.typed) < 4 * self.max:
                        self.typed.add(token.key)
                elif len(self.known) < 4 * self.max:
                    self.known.setdefault(token.key, at)

    def add(self, call_id: str, text: str, at: int) -> None:
        for fact in _scan(_prepare_text(text), lookup=False):
            for token in fact.tokens:
                if self.known.get(token.key, at) < at:
                    continue
                if token.key not in self.tokens:
                    self.tokens[token.key] = (token.weight, [call_id])
                    if len(self.tokens) > self.max:
                        self.tokens.popitem(last=False)
                        self.truncated = True
                    continue
                weight, sources = self.tokens[token.key]
                if call_id not in sources and len(sources) < _MAX_SOURCES:
                    sources.append(call_id)
                self.tokens[token.key] = (max(weight, token.weight), sources)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(_STEPS, st.sampled_from([2, 5, 12, 40, 50_000, 50_000]))
def test_the_fingerprint_table_ends_as_adding_hash_by_hash(steps: list[tuple[str, str, int, str]], bound: int) -> None:
    index, oracle = FragmentIndex(max_fingerprints=bound), _Fingerprints(bound)
    for kind, text, at, call_id in steps:
        if kind == "add":
            index.add(call_id, text, at)
            oracle.add(call_id, text, at)
        elif kind == "exclude":
            index.exclude(text, typed_by_user=False, at=at)
            oracle.exclude(text, at)
    assert list(index._prints.items()) == list(oracle.prints.items())
    assert index._known == oracle.known
    assert index.truncated == oracle.truncated


@settings(max_examples=300, deadline=None, derandomize=True)
@given(_STEPS, st.sampled_from([1, 3, 8, 30, 50_000, 50_000]))
def test_the_salient_token_table_ends_as_adding_token_by_token(
    steps: list[tuple[str, str, int, str]], bound: int
) -> None:
    index, oracle = SalientIndex(max_tokens=bound), _Salient(bound)
    for kind, text, at, call_id in steps:
        if kind == "add":
            index.add(call_id, text, at=at)
            oracle.add(call_id, text, at)
        else:
            index.exclude(text, at=None if kind == "typed" else at)
            oracle.exclude(text, None if kind == "typed" else at)
    assert [(key, entry.weight, entry.sources) for key, entry in index._tokens.items()] == [
        (key, weight, sources) for key, (weight, sources) in oracle.tokens.items()
    ]
    assert index._known == oracle.known
    assert index._typed == oracle.typed
    assert index.truncated == oracle.truncated


def test_a_key_seen_twice_in_one_text_keeps_its_largest_weight_and_its_first_place() -> None:
    # "$45" is an amount (2), "45" a bare number (1): one key.
    keys = _read_private_keys("budget 45 then $45 and Nightingale")
    weights = dict(keys)
    assert weights["45"] == 2
    assert [key for key, _ in keys].index("45") < [key for key, _ in keys].index("nightingale")
    assert len(keys) == len(weights)
    index = SalientIndex()
    index.add("c1", "budget 45 then $45 and Nightingale")
    assert index._tokens["45"].weight == 2


def test_private_text_the_agent_sent_before_it_arrived_is_not_indexed_and_a_first_source_stays() -> None:
    text = "Nightingale budget quarterly invoice salary bands Acme Corp"
    index = FragmentIndex()
    index.exclude(text, typed_by_user=False, at=1)
    index.add("c1", text, 3)  # sent at 1, before it arrived at 3: not evidence
    assert len(index) == 0
    index.add("c2", text, 0)  # arrived at 0, before it was sent at 1: evidence
    index.add("c3", text, 0)
    assert len(index) > 0
    assert set(index._prints.values()) == {"c2"}
