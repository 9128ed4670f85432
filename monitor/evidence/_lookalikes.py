"""Look-alike destinations: addresses made to pass for one the user sanctioned.

Destinations compare as whole tokens after normalisation: Unicode NFKC, case folding, zero-width and other
format characters removed, and every character that Unicode lists as confusable with a Latin one replaced by
it (its *skeleton*). A destination is a look-alike of a sanctioned one when the two differ but their skeletons
are equal (a homoglyph or a hidden character), when one is the other with something added before or after
(``smith@gmail.com`` for ``john.smith@gmail.com``, ``gmail.com.evil.example`` for ``gmail.com``), or when they
are at most :data:`MAX_EDITS` edits apart.
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Iterable

from rapidfuzz.distance import Levenshtein

MAX_EDITS = 2
"""Two addresses this many single-character edits apart (or fewer) look alike."""
_MIN_LENGTH = 6
# No address is longer (an e-mail address is at most 254 characters); a longer value imitates none.
_MAX_LENGTH = 320
# Below this length an added prefix or suffix changes too little to tell an imitation from another name.
_MIN_AFFIX_LENGTH = 5


@functools.cache
def _latin_for(char: str) -> str:
    from confusable_homoglyphs import confusables  # its tables are built on import: only when first needed

    try:
        found = confusables.is_confusable(char, preferred_aliases=["latin"], greedy=True)
    except (KeyError, ValueError):  # characters outside the library's tables stand for themselves
        return char
    for entry in found or ():
        for glyph in entry.get("homoglyphs", ()):
            candidate = glyph.get("c", "")
            if candidate.isascii() and candidate:
                return str(candidate).lower()
    return char


def skeleton(value: str) -> str:
    """Return the comparable form of an address: NFKC, case-folded, format characters dropped, confusable
    characters replaced by the Latin letters they imitate."""
    text = unicodedata.normalize("NFKC", value).casefold()
    text = "".join(c for c in text if unicodedata.category(c) != "Cf" and not c.isspace())
    if text.isascii():
        return text
    return "".join(c if c.isascii() else _latin_for(c) for c in text)


def find_lookalike(value: str, sanctioned: Iterable[str]) -> str | None:
    """Return the sanctioned address that ``value`` imitates, or None.

    Equal addresses (after case folding) are not look-alikes: they are the same address.
    """
    if len(value) > _MAX_LENGTH:
        return None
    plain = value.casefold()
    shape = skeleton(value)
    for other in sanctioned:
        if other.casefold() == plain:
            return None
    for other in sanctioned:
        other_shape = skeleton(other)
        if other_shape == shape:
            return other  # same skeleton, different characters: a homoglyph or a hidden character
        shorter, longer = sorted((shape, other_shape), key=len)
        if len(shorter) >= _MIN_AFFIX_LENGTH and (longer.endswith(shorter) or longer.startswith(shorter)):
            return other
        if min(len(shape), len(other_shape)) >= _MIN_LENGTH and (
            Levenshtein.distance(shape, other_shape, score_cutoff=MAX_EDITS) <= MAX_EDITS
        ):
            return other
    return None
