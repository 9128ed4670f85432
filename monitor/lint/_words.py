"""The lead of a description the word checks read, and the name words that join two verbs. The words they look
for are the vocabulary of tool words (:mod:`monitor.classify`: ``LINT_DESTRUCTIVE_WORDS``, ``LINT_READ_WORDS``,
``LINT_WRITE_WORDS``, ``LINT_NETWORK_WORDS``)."""

from __future__ import annotations

import re

from monitor.lint._poisoning import MAX_SCANNED_CHARS

NAME_CONNECTORS = frozenset({"or", "and"})
"""Name words that join two verbs (``get_or_create``): the read check stays quiet on such names."""

LEAD_WORDS = 6
"""How many leading words of a description's first sentence the word checks read."""


def lead_words(description: str) -> list[str]:
    """Return the first words of a description's first sentence, lowercased (what the word checks read)."""
    text = description[:MAX_SCANNED_CHARS].strip()
    first = re.split(r"(?<=[.!?])\s|\n\s*\n", text, maxsplit=1)[0]
    return [w for w in re.split(r"[^a-z0-9]+", first.lower()) if w][:LEAD_WORDS]
