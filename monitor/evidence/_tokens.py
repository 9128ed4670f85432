"""Values as whole tokens of a text: an address not inside a longer one, an id where the text names it as one."""

from __future__ import annotations

import functools
import re


@functools.lru_cache(maxsize=4096)
def _token_pattern(value: str, domain: bool) -> re.Pattern[str]:
    # Whole token: not glued to more of an address or a word before it, nor after it (a final full stop of a
    # sentence is not part of the token). An e-mail address must start where its local part starts
    # (``smith@x`` is not in ``john.smith@x``); a domain or a name may follow a dot, a slash or an at sign.
    before = r"(?<![\w.%+@/-])" if "@" in value and not domain else r"(?<![\w%+-])"
    return re.compile(before + re.escape(value) + r"(?![\w@]|[.%+-]\w)")


def contains_token(text: str, value: str, *, domain: bool = False) -> bool:
    """Whether ``value`` occurs in ``text`` as a whole token, not inside a longer address, word or path (a
    ``domain`` may be preceded by subdomains)."""
    if value not in text:
        return False
    return _token_pattern(value, domain).search(text) is not None


_ID_NOUNS = "id|no|number|file|item|record|ticket|event|message|email|doc|document|note|page|sheet|issue|order".split(
    "|"
)
# The most a mention holds before its digits: the longest noun and four characters between.
_MENTION_BEFORE = max(len(noun) for noun in _ID_NOUNS) + 4
_MENTIONS_TRIED = 8


@functools.lru_cache(maxsize=1024)
def id_mention(number: str) -> re.Pattern[str]:
    """The mentions of the digits ``number`` as an id: quoted (``'13'``, ``#13``) or after a noun (``ticket 13``)."""
    # A bare number in prose is a date, an amount or a count; named as an id it is a target.
    quoted = rf"['\"`#]{number}\b|\b{number}['\"`]"
    named = rf"\b(?:{'|'.join(_ID_NOUNS)})\W{{0,4}}{number}\b"
    return re.compile(f"(?:{quoted}|{named})")


def mentions_id(text: str, number: str) -> bool:
    """Whether ``text`` names the digits ``number`` as an id (see :func:`id_mention`)."""
    # Every mention holds the digits as written, starting at most _MENTION_BEFORE characters before them: the
    # pattern is tried only there (it still sees the characters before where it is tried), not along all the text.
    pattern = id_mention(number)
    at = text.find(number)
    for _ in range(_MENTIONS_TRIED):
        if at < 0:
            return False
        if any(pattern.match(text, start) for start in range(max(at - _MENTION_BEFORE, 0), at + 1)):
            return True
        at = text.find(number, at + 1)
    return at >= 0 and pattern.search(text, max(at - _MENTION_BEFORE, 0)) is not None
