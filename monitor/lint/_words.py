"""The word lists the word checks read (data), and the lead of a description they read them in."""

from __future__ import annotations

import re

from monitor.lint._poisoning import MAX_SCANNED_CHARS


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


DESTRUCTIVE_WORDS: frozenset[str] = _words(
    "delete deletes deleting remove removes removing drop drops dropping cancel cancels cancelling canceling"
    " revoke revokes revoking overwrite overwrites overwriting refund refunds refunding destroy destroys"
    " purge purges erase erases wipe wipes truncate truncates reset resets kill kills terminate terminates"
    " uninstall uninstalls unpublish prune prunes evict evicts rm del"
)
"""Words that say a call destroys or undoes something."""

READ_WORDS: frozenset[str] = _words(
    "get gets list lists search searches read reads find finds lookup describe describes show shows view"
    " views retrieve retrieves inspect inspects"
)
"""Words that say a call only reads."""

WRITE_WORDS: frozenset[str] = DESTRUCTIVE_WORDS | _words(
    "create creates update updates write writes set sets edit edits add adds insert inserts put puts patch"
    " modify modifies move moves rename renames upload uploads send sends post posts save saves apply"
    " applies execute executes run runs merge merges replace replaces append appends assign assigns mark"
    " marks start starts stop stops trigger triggers submit submits commit commits push pushes dismiss"
)
"""Words that, next to a read word, say the call also writes: the read check stays quiet."""

NETWORK_WORDS: frozenset[str] = _words(
    "send sends sending post posts posting publish publishes fetch fetches fetching http https url urls"
    " webhook webhooks email emails mail mails upload uploads download downloads browse navigate tweet"
    " internet web website webpage sms"
)
"""Words that say a call reaches beyond the server's own closed world."""

NAME_CONNECTORS: frozenset[str] = _words("or and")
"""Name words that join two verbs (``get_or_create``): the read check stays quiet on such names."""

LEAD_WORDS = 6
"""How many leading words of a description's first sentence the word checks read."""


def lead_words(description: str) -> list[str]:
    """Return the first words of a description's first sentence, lowercased (what the word checks read)."""
    text = description[:MAX_SCANNED_CHARS].strip()
    first = re.split(r"(?<=[.!?])\s|\n\s*\n", text, maxsplit=1)[0]
    return [w for w in re.split(r"[^a-z0-9]+", first.lower()) if w][:LEAD_WORDS]
