"""Name, description and input-schema heuristics (balanced posture).

Each heuristic is a line of data: an id, the leg it suggests, where it looks, and the words it looks for.
A new detector is a new entry in :data:`HEURISTICS`. Heuristics only ever *add* legs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from monitor.models import Leg, ToolDefinition

P, U, X = Leg.PRIVATE_DATA, Leg.UNTRUSTED_CONTENT, Leg.EXTERNAL_COMMUNICATION


class Where(StrEnum):
    """Where a heuristic looks."""

    NAME = "name"
    DESCRIPTION = "description"
    SCHEMA = "schema"


@dataclass(frozen=True)
class Heuristic:
    """One signal: ``leg`` is suggested when a word of ``field`` is one of ``words``."""

    id: str
    leg: Leg
    field: Where
    words: frozenset[str]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


HEURISTICS: tuple[Heuristic, ...] = (
    Heuristic(
        "private-store-name",
        P,
        Where.NAME,
        _words(
            "email emails mail mails inbox message messages dm dms chat chats file files drive document documents"
            " doc docs calendar event events appointment appointments contact contacts database db sql table tables"
            " secret secrets token tokens password passwords credential credentials key keys vault balance"
            " transaction transactions iban account accounts user users profile me repo repository repositories"
            " memory memories note notes history payment payments card cards health record records"
            " env environment config"
        ),
    ),
    Heuristic(
        "private-description",
        P,
        Where.DESCRIPTION,
        _words(
            "inbox private personal confidential password passwords secret secrets credential credentials"
            " balance transactions iban calendar contacts"
        ),
    ),
    Heuristic("private-path-schema", P, Where.SCHEMA, _words("path file_path filepath filename file_id")),
    Heuristic(
        "untrusted-name",
        U,
        Where.NAME,
        _words(
            "web search fetch browse browser url http page pages scrape crawl issue issues comment comments review"
            " reviews message messages email emails inbox mail post posts news feed tweet tweets ticket tickets"
            " channel channels webpage navigate snapshot"
        ),
    ),
    Heuristic(
        "untrusted-description",
        U,
        Where.DESCRIPTION,
        _words("internet web website websites webpage url urls browse scrape reviews"),
    ),
    Heuristic(
        "external-name",
        X,
        Where.NAME,
        _words(
            "send post publish share upload transfer pay invite reply forward notify comment submit push"
            " webhook http request fetch tweet message email mail schedule"
            " create_pull_request"
        ),
    ),
    Heuristic(
        "external-schema",
        X,
        Where.SCHEMA,
        _words("recipient recipients to cc bcc url uri endpoint webhook participants iban phone email emails channel"),
    ),
)
"""The built-in heuristics, in the order they are tried."""

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SPLIT = re.compile(r"[^a-z0-9]+")


def tokenize_name(name: str) -> list[str]:
    """Split a tool or property name into lowercase words (snake, kebab, dotted and camel case)."""
    return [t for t in _SPLIT.split(_CAMEL.sub("_", name).lower()) if t]


def _field_tokens(name: str, definition: ToolDefinition | None) -> dict[Where, set[str]]:
    name_tokens = set(tokenize_name(name))
    name_tokens.add(name.lower())
    tokens: dict[Where, set[str]] = {Where.NAME: name_tokens, Where.DESCRIPTION: set(), Where.SCHEMA: set()}
    if definition is not None:
        tokens[Where.DESCRIPTION] = set(_SPLIT.split(definition.description.lower()))
        props = definition.input_schema.get("properties")
        if isinstance(props, dict):
            tokens[Where.SCHEMA] = {str(k).lower() for k in props}
    return tokens


def match_heuristics(heuristics: Iterable[Heuristic], name: str, definition: ToolDefinition | None) -> dict[Leg, str]:
    """Return, per leg, the first heuristic that fired as ``"<id>:<word>"``."""
    tokens = _field_tokens(name, definition)
    found: dict[Leg, str] = {}
    for h in heuristics:
        if h.leg in found:
            continue
        hits = tokens[h.field] & h.words
        if hits:
            found[h.leg] = f"{h.id}:{min(hits)}"
    return found
