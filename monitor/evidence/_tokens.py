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


@functools.lru_cache(maxsize=1024)
def id_mention(number: str) -> re.Pattern[str]:
    # A bare number in prose is a date, an amount or a count; named as an id it is a target.
    quoted = rf"['\"`#]{number}\b|\b{number}['\"`]"
    nouns = "id|no|number|file|item|record|ticket|event|message|email|doc|document|note|page|sheet|issue|order"
    named = rf"\b(?:{nouns})\W{{0,4}}{number}\b"
    return re.compile(f"(?:{quoted}|{named})")
