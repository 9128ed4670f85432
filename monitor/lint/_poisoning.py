"""Tool poisoning: the instruction-like patterns and hidden code points searched in a tool's texts (data,
compiled once), and the texts of a tool that are searched.

Every text is scanned up to :data:`MAX_SCANNED_CHARS`, and at most :data:`MAX_SCHEMA_TEXTS` texts of one
input schema, so a huge or deeply nested tool cannot make lint slow.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from monitor.lint._findings import escape_pointer_token

MAX_SCANNED_CHARS = 16_384
"""Each text is scanned for poisoning up to this many characters."""

MAX_SCHEMA_TEXTS = 256
"""At most this many ``description``/``title`` strings of one tool's input schema are scanned."""

_MAX_SCHEMA_DEPTH = 12


@dataclass(frozen=True)
class PoisonPattern:
    """One instruction-like pattern: an id, what it catches, and the compiled expression."""

    id: str
    label: str
    regex: re.Pattern[str]


def _compile(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE | re.DOTALL)


_SECRET_PLACES = (
    r"(?:~/|\$HOME|%USERPROFILE%|/etc/(?:passwd|shadow)|\.ssh\b|id_rsa|id_ed25519|\.env\b|\.aws\b|\.netrc"
    r"|\.npmrc|\.pypirc|mcp\.json|credentials?|private\s+keys?|api[\s_-]?keys?|secrets?|passwords?|tokens?)"
)

POISON_PATTERNS: tuple[PoisonPattern, ...] = (
    PoisonPattern(
        "override-instructions",
        "tells the model to ignore its instructions",
        _compile(
            r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+|your\s+|of\s+|these\s+){0,3}"
            r"(?:previous|prior|above|earlier|preceding|other|system|existing|original)?\s*"
            r"(?:instructions?|prompts?|rules|directives|guidelines)\b"
        ),
    ),
    PoisonPattern(
        "conceal-from-user",
        "tells the model to keep something from the user",
        _compile(
            r"\b(?:do\s+not|don['\u2019]?t|never|must\s+not|should\s+not)\s+"
            r"(?:(?:tell|inform|notify|alert|warn|show|reveal|disclose)\s+(?:\w+\s+){0,2}?(?:the\s+)?users?\b"
            r"|mention\b|let\s+(?:the\s+)?users?\s+know\b)"
            r"|\bwithout\s+(?:telling|informing|notifying|alerting|asking)\s+(?:the\s+)?users?\b"
            r"|\b(?:hide|keep)\s+(?:this|it|these)\s+(?:\w+\s+){0,2}?from\s+(?:the\s+)?users?\b"
        ),
    ),
    PoisonPattern(
        "read-secrets-first",
        "tells the model to read or pass secrets before using the tool",
        _compile(
            r"\bbefore\s+(?:using|calling|invoking|running|executing)\s+(?:this|the|any|that)\b.{0,160}?"
            r"\b(?:read|cat|open|load|send|include|pass|provide|attach|upload|copy)\b.{0,80}?" + _SECRET_PLACES
        ),
    ),
    PoisonPattern(
        "hidden-block",
        "wraps text in an <IMPORTANT>-style block for the model",
        _compile(
            r"<\s*/?\s*(?:important|system|instructions?|secret|hidden|admin|critical|sudo|assistant"
            r"|note[\s_-]+to[\s_-]+(?:the[\s_-]+)?(?:ai|assistant|model|llm))\s*>"
        ),
    ),
)
"""The instruction-like patterns searched in descriptions (each text bounded by :data:`MAX_SCANNED_CHARS`)."""

HIDDEN_RANGES: tuple[tuple[int, int], ...] = (
    (0x200B, 0x200F),  # zero-width space/non-joiner/joiner, LRM, RLM
    (0x202A, 0x202E),  # bidi embeddings and overrides
    (0x2060, 0x2064),  # word joiner, invisible operators
    (0x2066, 0x2069),  # bidi isolates
    (0xFEFF, 0xFEFF),  # zero-width no-break space (BOM)
    (0xE0000, 0xE007F),  # tag characters
)
"""Code point ranges that are invisible to a reviewer but read by the model."""

_HIDDEN = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in HIDDEN_RANGES) + "]")


def find_instructions(text: str) -> list[tuple[PoisonPattern, str]]:
    """Return each poisoning pattern that matches ``text`` (bounded) with the matched excerpt."""
    bounded = _HIDDEN.sub("", text[:MAX_SCANNED_CHARS])
    hits: list[tuple[PoisonPattern, str]] = []
    for pattern in POISON_PATTERNS:
        match = pattern.regex.search(bounded)
        if match:
            excerpt = " ".join(match.group(0).split())
            hits.append((pattern, excerpt if len(excerpt) <= 80 else excerpt[:77] + "..."))
    return hits


def find_hidden_characters(text: str) -> list[str]:
    """Return the hidden code points in ``text`` (bounded) as ``U+200B ZERO WIDTH SPACE`` labels, in order."""
    seen: dict[str, None] = {}
    for ch in _HIDDEN.findall(text[:MAX_SCANNED_CHARS]):
        seen.setdefault(f"U+{ord(ch):04X} {unicodedata.name(ch, 'UNNAMED')}", None)
    return list(seen)


@dataclass(frozen=True)
class ScannedText:
    """One text of a tool that is searched: where it is, the text, and whether it is prose (a description,
    whose instructions are searched) or a name or title (only searched for hidden characters)."""

    pointer: str
    text: str
    prose: bool


def scanned_texts(raw: Mapping[str, Any], pointer: str) -> Iterator[ScannedText]:
    """Yield the tool's name, titles, description and input-schema texts (``raw`` is the tool at ``pointer``)."""
    for key in ("name", "title", "description"):
        if isinstance(raw.get(key), str):
            yield ScannedText(f"{pointer}/{key}", raw[key], key == "description")
    annotations = raw.get("annotations")
    if isinstance(annotations, dict) and isinstance(annotations.get("title"), str):
        yield ScannedText(f"{pointer}/annotations/title", annotations["title"], False)
    schema = raw.get("inputSchema")
    if isinstance(schema, dict):
        yield from _schema_texts(schema, f"{pointer}/inputSchema", 0, [MAX_SCHEMA_TEXTS])


def _schema_texts(node: Any, pointer: str, depth: int, budget: list[int]) -> Iterator[ScannedText]:
    """Yield the ``description`` and ``title`` strings of a schema, depth-first, within ``budget``."""
    if depth > _MAX_SCHEMA_DEPTH:
        return
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        if budget[0] <= 0:
            return
        at = f"{pointer}/{escape_pointer_token(str(key))}"
        if isinstance(node, dict) and key in ("description", "title") and isinstance(value, str):
            budget[0] -= 1
            yield ScannedText(at, value, key == "description")
        elif isinstance(value, dict | list):
            yield from _schema_texts(value, at, depth + 1, budget)
