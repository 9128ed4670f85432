"""Bounded memos of what the evidence works out from a text alone (its fingerprints, its salient tokens, its
secrets, the addresses in it, the document it holds). A text that comes back, in the same session or in another
one (the same file read again, the same listing in every run of an agent), costs a lookup. The work is the same
function of the text either way, so the answers are the same; only the time changes.

A memo keeps texts of at most ``chars`` characters (:data:`MEMO_CHARS` unless it says otherwise; longer texts
are worked out each time), up to ``budget`` units in all (:data:`MEMO_BUDGET`), and lets the least recently used
go first. An entry costs its text's characters plus :data:`ITEM_COST` for each item of a result that holds
several (a tuple of fingerprints, facts or addresses can outweigh its text many times over). A parsed document
(a mapping or list) is charged by its text alone, though it takes several times that in memory: the memory each
memo holds at its budget is measured by ``bench/bench_memo_memory.py``. Memos are shared by all sessions and safe
to use from several threads.

While a batch analysis runs (:func:`widen_text_memos`), each memo keeps :data:`BATCH_SCALE` times its budget and
texts up to :data:`BATCH_CHARS` long: a process that reads a corpus once and exits can spend more memory on not
reading the same texts again than a host that runs for weeks beside other work.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar

MEMO_CHARS = 2_000
"""Longest text a memo keeps, unless it says otherwise."""
MEMO_BUDGET = 2_000_000
"""Units one memo keeps in all, unless it says otherwise (see :data:`ITEM_COST`)."""
ITEM_COST = 64
"""Units an item of a kept result costs, beside the characters of its text (about the bytes of a small object)."""
BATCH_SCALE = 4
"""How many times its budget each memo keeps while a batch analysis runs (:func:`widen_text_memos`)."""
BATCH_CHARS = 50_000
"""Longest text each memo keeps while a batch analysis runs (the longest a memo keeps at any time)."""

_P = ParamSpec("_P")
_T = TypeVar("_T")
_MISSING: Any = object()
_MEMOS: list[TextMemo[Any, Any]] = []


class TextMemo(Generic[_P, _T]):
    """A pure function of a text (and other hashable positional arguments), memoized for texts up to ``chars``
    long, within ``budget`` units in all (the module says what an entry costs; ``cost``, when given, says it
    instead, from the text and the value)."""

    def __init__(
        self,
        function: Callable[Concatenate[str, _P], _T],
        chars: int,
        budget: int,
        cost: Callable[[str, _T], int] | None = None,
    ) -> None:
        self.function = function
        self.chars = chars
        self.budget = budget
        self._usual = (chars, budget)
        self.cost = cost or _default_cost
        self.hits = 0
        """Calls answered from the memo (counted without a lock: a figure for benchmarks, not an exact tally)."""
        self.misses = 0
        """Calls worked out, the text kept or too long to keep."""
        self._kept: OrderedDict[Any, tuple[_T, int]] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()
        functools.update_wrapper(self, function)
        _MEMOS.append(self)

    def __call__(self, text: str, /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        """Return ``function(text, ...)``, from the memo when the text is short enough to be kept."""
        if len(text) > self.chars or kwargs:
            self.misses += 1
            return self.function(text, *args, **kwargs)
        key = (text, *args) if args else text
        kept = self._kept
        found = kept.get(key, _MISSING)
        if found is not _MISSING:
            self.hits += 1
            try:  # noqa: SIM105 - a try costs nothing here; a context manager on every hit does
                kept.move_to_end(key)
            except KeyError:  # another thread let it go meanwhile: it is still the answer
                pass
            return found[0]  # type: ignore[no-any-return]
        self.misses += 1
        value = self.function(text, *args, **kwargs)
        cost = self.cost(text, value)
        with self._lock:
            if key not in kept:
                kept[key] = (value, cost)
                self._size += cost
                while self._size > self.budget:
                    _, (_, old_cost) = kept.popitem(last=False)
                    self._size -= old_cost
        return value

    def cache_clear(self) -> None:
        """Forget every text."""
        with self._lock:
            self._kept.clear()
            self._size = 0
            self.hits = self.misses = 0

    @property
    def name(self) -> str:
        """The module and name of the function it memoizes."""
        return f"{self.function.__module__}.{self.function.__qualname__}"

    def widen(self, scale: int, chars: int) -> None:
        """Keep ``scale`` times the usual budget, and texts up to ``chars`` long (or the usual length, if longer)."""
        usual_chars, usual_budget = self._usual
        self.chars = max(usual_chars, chars)
        self.budget = usual_budget * scale

    def narrow(self) -> None:
        """Go back to the usual bounds: texts longer than the usual length go, then the least recently used until
        the usual budget holds."""
        with self._lock:
            self.chars, self.budget = self._usual
            kept = self._kept
            while True:
                try:
                    longer = [key for key in kept if len(key if isinstance(key, str) else key[0]) > self.chars]
                except RuntimeError:  # a hit on another thread moved an entry during the scan: scan again
                    continue
                break
            for key in longer:
                self._size -= kept.pop(key)[1]
            while self._size > self.budget:
                _, (_, old_cost) = kept.popitem(last=False)
                self._size -= old_cost

    def cache_size(self) -> int:
        """Texts kept now."""
        return len(self._kept)

    def cache_units(self) -> int:
        """Units the entries kept now cost (:data:`ITEM_COST`)."""
        return self._size


def _default_cost(text: str, value: object) -> int:
    return len(text) + (ITEM_COST * len(value) if isinstance(value, tuple) else 0)


def memoize_text(
    chars: int = MEMO_CHARS, budget: int = MEMO_BUDGET
) -> Callable[[Callable[Concatenate[str, _P], _T]], TextMemo[_P, _T]]:
    """Memoize a pure function of a text whose result its callers never change (a tuple, a frozen value, or a
    document only read)."""

    def wrap(function: Callable[Concatenate[str, _P], _T]) -> TextMemo[_P, _T]:
        return TextMemo(function, chars, budget)

    return wrap


def clear_text_memos() -> None:
    """Forget every text every memo keeps (to measure work on texts never seen before)."""
    for memo in _MEMOS:
        memo.cache_clear()


def widen_text_memos(scale: int = BATCH_SCALE, chars: int = BATCH_CHARS) -> None:
    """Let every memo keep ``scale`` times its budget and texts up to ``chars`` long, until
    :func:`narrow_text_memos` (for a batch analysis, :func:`monitor.analysis.collect_for_batch`). The answers are
    the same either way; only the time and the memory change."""
    for memo in _MEMOS:
        memo.widen(scale, chars)


def narrow_text_memos() -> None:
    """Put every memo back to its usual bounds, letting go of what they do not hold."""
    for memo in _MEMOS:
        memo.narrow()


def count_memo_hits() -> dict[str, tuple[int, int]]:
    """Each memo's hits and misses so far, by the name of the function it memoizes (for benchmarks)."""
    return {memo.name: (memo.hits, memo.misses) for memo in _MEMOS}


def read_memo_bounds() -> dict[str, tuple[int, int]]:
    """Each memo's bounds now, ``(chars, budget)``, by the name of the function it memoizes (for benchmarks)."""
    return {memo.name: (memo.chars, memo.budget) for memo in _MEMOS}


def count_memo_entries() -> int:
    """Texts the memos keep now, in all."""
    return sum(memo.cache_size() for memo in _MEMOS)
