"""Which of a session's free texts hold a word: a search for a value as a whole token reads only the texts that
hold every word of it, so its cost follows the matches, not the length of the session."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

WORD = re.compile(r"\w+")
"""A word, as the whole-token patterns of the content index bound one (``\\w``)."""

FreeText = tuple[str, str, bool]
"""One free text of a session: the call that returned it, the text (normalised), whether it was untrusted."""


@dataclass(slots=True)
class WordIndex:
    """Positions of the free texts holding each word, built when a search first needs them.

    A text holding ``value`` as a whole token holds each word of ``value`` as a whole word: the token's edges
    are word boundaries, and its inner words are bounded by its own other characters. So the texts holding all
    of ``value``'s words, in their order, include every text that holds ``value``. Positions count every text
    the session kept, dropped ones included (the oldest go first), so a position never moves.
    """

    postings: dict[str, list[int]] = field(default_factory=dict)
    indexed: int = 0
    """Texts indexed so far (by position)."""
    built_from: int = 0
    """The position the postings were last built from: older ones are stale once dropped."""

    def find(self, texts: Sequence[FreeText], dropped: int, value: str) -> Sequence[FreeText]:
        """The texts (``texts``, after ``dropped`` older ones went) that may hold ``value`` as a whole token, in
        order: those holding the least common of its words. A value with no word may be anywhere: all texts."""
        words = set(WORD.findall(value))
        if not words:
            return texts
        if dropped - self.built_from > len(texts):
            # More stale positions than live texts: build again from the live ones.
            self.postings.clear()
            self.indexed = self.built_from = dropped
        for position in range(max(self.indexed, dropped), dropped + len(texts)):
            for word in set(WORD.findall(texts[position - dropped][1])):
                self.postings.setdefault(word, []).append(position)
        self.indexed = dropped + len(texts)
        rarest = min((self.postings.get(word, []) for word in words), key=len)
        return [texts[position - dropped] for position in rarest if position >= dropped]
