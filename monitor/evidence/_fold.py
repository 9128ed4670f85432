"""Folding text for evidence search: the same characters however they are spelt.

Every character is decomposed with Unicode NFKD (the fullwidth seven U+FF17 and the mathematical bold seven
U+1D7D5 become ``7``, ligatures their letters), combining marks are dropped (``é`` is ``e``), format characters
such as zero-width spaces are removed, and a remaining non-ASCII character that Unicode's confusables data lists
as a look-alike of a Latin letter or digit (Cyrillic a U+0430, Greek omicron U+03BF) is replaced by it (the
``confusable_homoglyphs`` library's copy of ``confusables.txt``). ASCII is left as it is, case included. The same
folding is applied to indexed private content and to the arguments searched, so a copy spelt with look-alikes
matches its source.
"""

from __future__ import annotations

import unicodedata

_MAX_CACHED = 65_536
"""Folded characters remembered (a text made of every code point does not grow the table past this)."""


def _latin_for(char: str) -> str:
    """The ASCII character ``char`` imitates, per Unicode's confusables, or ``char`` itself."""
    from confusable_homoglyphs import confusables  # its tables are built on import: only when first needed

    try:
        found = confusables.is_confusable(char, preferred_aliases=["latin"], greedy=True)
    except (KeyError, ValueError):  # characters outside the library's tables stand for themselves
        return char
    for entry in found or ():
        for glyph in entry.get("homoglyphs", ()):
            candidate = str(glyph.get("c", ""))
            if len(candidate) == 1 and candidate.isascii() and candidate.isalnum():
                return candidate
    return char


def fold_char(char: str) -> str:
    """The folded form of one character (possibly empty, possibly several characters)."""
    out = []
    for part in unicodedata.normalize("NFKD", char):
        if part.isascii():
            out.append(part)
        elif unicodedata.combining(part) or unicodedata.category(part) == "Cf":
            continue
        else:
            out.append(_latin_for(part))
    return "".join(out)


class _FoldTable(dict[int, str]):
    """A ``str.translate`` table that folds characters on first sight and remembers a bounded number."""

    def __missing__(self, code: int) -> str:
        folded = fold_char(chr(code))
        if len(self) < _MAX_CACHED:
            self[code] = folded
        return folded


_TABLE = _FoldTable()


def fold(text: str) -> str:
    """Return ``text`` folded: NFKD without combining marks or format characters, look-alikes made Latin."""
    if text.isascii():
        return text
    return text.translate(_TABLE)


def fold_table() -> dict[int, str]:
    """The translation table :func:`fold` uses (for callers that fold character by character)."""
    return _TABLE
