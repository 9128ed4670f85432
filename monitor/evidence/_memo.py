"""Bounded memos of what the evidence works out from a text alone (its fingerprints, its salient tokens, its
secrets, the addresses in it, the document it holds). A text that comes back, in the same session or in another
one (the same file read again, the same listing in every run of an agent), costs a lookup. The work is the same
function of the text either way, so the answers are the same; only the time changes.

Each memo keeps at most :data:`MEMO_ENTRIES` texts of at most :data:`MEMO_CHARS` characters unless it says
otherwise (longer texts are worked out each time), and drops the least recently used first.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar

MEMO_ENTRIES = 2_048
"""Texts one memo keeps."""
MEMO_CHARS = 2_000
"""Longest text a memo keeps."""

_P = ParamSpec("_P")
_T = TypeVar("_T")
_MEMOS: list[TextMemo[Any, Any]] = []


class TextMemo(Generic[_P, _T]):
    """A pure function of a text (and other hashable arguments), memoized for texts up to ``chars`` long."""

    def __init__(self, function: Callable[Concatenate[str, _P], _T], entries: int, chars: int) -> None:
        self.function = function
        self.chars = chars
        self._cached: Any = functools.lru_cache(maxsize=entries)(function)
        functools.update_wrapper(self, function)
        _MEMOS.append(self)

    def __call__(self, text: str, /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        """Return ``function(text, ...)``, from the memo when the text is short enough to be kept."""
        if len(text) <= self.chars:
            result: _T = self._cached(text, *args, **kwargs)
            return result
        return self.function(text, *args, **kwargs)

    def cache_clear(self) -> None:
        """Forget every text."""
        self._cached.cache_clear()

    def cache_size(self) -> int:
        """Texts kept now."""
        return int(self._cached.cache_info().currsize)


def memoize_text(
    entries: int = MEMO_ENTRIES, chars: int = MEMO_CHARS
) -> Callable[[Callable[Concatenate[str, _P], _T]], TextMemo[_P, _T]]:
    """Memoize a pure function of a text whose result its callers never change (a tuple, a frozen value, or a
    document only read)."""

    def wrap(function: Callable[Concatenate[str, _P], _T]) -> TextMemo[_P, _T]:
        return TextMemo(function, entries, chars)

    return wrap


def clear_text_memos() -> None:
    """Forget every text every memo keeps (to measure work on texts never seen before)."""
    for memo in _MEMOS:
        memo.cache_clear()


def count_memo_entries() -> int:
    """Texts the memos keep now, in all."""
    return sum(memo.cache_size() for memo in _MEMOS)
