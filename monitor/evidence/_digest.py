"""What the content index takes from one tool result, worked out once per result text.

Reading a result (parsing it, walking its values, folding each value's white space, finding the addresses and
the people it names) is a pure function of the result and the reading bounds; what a session's index then does
with it (which table has room, which value it saw first) is not. :func:`digest_result` does the first part and
returns it as a :class:`ResultDigest`: the objects and the leaves of the result in the order the walk met them,
each with what the index reads of it, and whether a bound left part of the result unexamined. The index applies
the digest to its own tables. A result text that comes back (the same file in every run of an agent, a mailbox
searched twice) is read once: its digest is kept in a bounded memo (:mod:`monitor.evidence._memo`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from monitor.evidence._actions import find_person_names
from monitor.evidence._content import ReadBounds, Reading, TextLeaf, iter_leaves
from monitor.evidence._destinations import find_addresses, is_outsider_field, normalize_text
from monitor.evidence._memo import ITEM_COST, TextMemo
from monitor.evidence._provenance import MAX_ATTRIBUTE_CHARS

_MAX_ATTRIBUTES = 64
MIN_RECORD_VALUE = 6
"""Characters a listed value of private content needs to be a field of a record (shorter ones are too short)."""
_DIGEST_CHARS = 50_000
_DIGEST_BUDGET = 4_000_000


@dataclass(frozen=True, slots=True)
class LeafDigest:
    """One string of a result, as the index reads it."""

    key: str
    value: str
    free_text: bool
    normalized: str
    """The value folded (:func:`~monitor.evidence._destinations.normalize_text`)."""
    addresses: tuple[str, ...]
    """The addresses in a listed value, lower case (free text: none, it is not read for them)."""
    outsider: bool
    """Whether a listed value's key names who wrote or sent it (:func:`is_outsider_field`)."""
    seen_key: int
    """A hash of key and value: the same text returned again adds no private content."""


@dataclass(frozen=True, slots=True)
class MessageDigest:
    """An object with a sender's address: what the sender wrote, and the people it names."""

    addresses: tuple[str, ...]
    """The sender's addresses, lower case."""
    texts: tuple[str, ...]
    """The object's other strings, folded."""
    size: int
    people: frozenset[frozenset[str]]


@dataclass(frozen=True, slots=True)
class ObjectDigest:
    """One object of a result: its message, if it has a sender, and its scalar fields, if it is a record."""

    message: MessageDigest | None
    scalars: dict[str, Any] | None
    """The record's scalar fields (two to 64 of them), shared read-only by every index that lists it."""
    keys: tuple[str, ...]
    """The folded one-line string values under which the record is listed."""


@dataclass(frozen=True, slots=True)
class DigestShape:
    """What a digest's items add to each table of an index, worked out once with the digest: each table's keys in
    the order the items add them, so that an index with room for all of them adds them at once."""

    listed: tuple[str, ...]
    """Each listed (not free) value, folded, then its addresses: what a trusted result lists."""
    outsiders: tuple[str, ...]
    """The same, of the values under a key that names who wrote them (an untrusted result's outsiders)."""
    insiders: tuple[str, ...]
    """The same, of the other listed values (what an untrusted result lists)."""
    free: tuple[str, ...]
    """The free texts, folded."""
    free_chars: int
    private_values: tuple[str, ...]
    """The listed values (folded) of :data:`MIN_RECORD_VALUE` to ``MAX_ATTRIBUTE_CHARS`` characters: the fields of
    a private record."""
    private_insiders: tuple[str, ...]
    """The same, of the values not under a key that names who wrote them (an untrusted private result's fields)."""
    pending: tuple[LeafDigest, ...]
    """Every leaf, the first of each key and value only: the private content a private result brings."""
    pending_chars: int
    objects: tuple[ObjectDigest, ...]


@dataclass(frozen=True, slots=True)
class ResultDigest:
    """A result as the index reads it: its objects and leaves in walk order, within the character budget."""

    items: tuple[LeafDigest | ObjectDigest, ...]
    truncated: bool
    """A reading bound left part of the result unexamined."""
    cut: bool
    """The result was longer than the index's character budget: the rest was not examined."""
    shape: DigestShape


def digest_result(reading: Reading, max_chars: int) -> ResultDigest:
    """Read a result as the index does, its first ``max_chars`` characters of strings; a string result read
    with the same bounds before is taken from the memo. Sets ``reading.truncated`` as reading it did."""
    if isinstance(reading.result, str):
        digest = _digest_text(reading.result, reading.bounds, max_chars)
    else:
        digest = _read_digest(reading, max_chars)
    reading.truncated = reading.truncated or digest.truncated
    return digest


def _read_digest(reading: Reading, max_chars: int) -> ResultDigest:
    items: list[LeafDigest | ObjectDigest] = []
    budget = max_chars
    cut = False
    for leaf in iter_leaves(reading, on_object=lambda obj: items.append(_digest_object(obj))):
        if budget <= 0:
            cut = True
            break
        if len(leaf.value) > budget:
            leaf = TextLeaf(leaf.key, leaf.value[:budget], leaf.free_text)
            cut = True
        budget -= len(leaf.value)
        items.append(_digest_leaf(leaf))
    return ResultDigest(tuple(items), reading.truncated, cut, _shape(items))


def _shape(items: list[LeafDigest | ObjectDigest]) -> DigestShape:
    listed: list[str] = []
    outsiders: list[str] = []
    insiders: list[str] = []
    free: list[str] = []
    fields: list[str] = []
    insider_fields: list[str] = []
    pending: dict[int, LeafDigest] = {}
    objects: list[ObjectDigest] = []
    for item in items:
        if isinstance(item, ObjectDigest):
            objects.append(item)
            continue
        pending.setdefault(item.seen_key, item)
        if item.free_text:
            free.append(item.normalized)
            continue
        keys = (item.normalized, *item.addresses)
        listed.extend(keys)
        field = MIN_RECORD_VALUE <= len(item.value) <= MAX_ATTRIBUTE_CHARS
        if field:
            fields.append(item.normalized)
        if item.outsider:
            outsiders.extend(keys)
        else:
            insiders.extend(keys)
            if field:
                insider_fields.append(item.normalized)
    return DigestShape(
        listed=tuple(listed),
        outsiders=tuple(outsiders),
        insiders=tuple(insiders),
        free=tuple(free),
        free_chars=sum(len(text) for text in free),
        private_values=tuple(fields),
        private_insiders=tuple(insider_fields),
        pending=tuple(pending.values()),
        pending_chars=sum(len(leaf.value) for leaf in pending.values()),
        objects=tuple(objects),
    )


def _digest_text_now(text: str, bounds: ReadBounds, max_chars: int) -> ResultDigest:
    return _read_digest(Reading(text, bounds), max_chars)


def _cost(text: str, digest: ResultDigest) -> int:
    # The folded copies take about as much as the text itself; each item is a small object besides.
    return 2 * len(text) + ITEM_COST * len(digest.items)


_digest_text: TextMemo[[ReadBounds, int], ResultDigest] = TextMemo(
    _digest_text_now, _DIGEST_CHARS, _DIGEST_BUDGET, cost=_cost
)


def _digest_leaf(leaf: TextLeaf) -> LeafDigest:
    seen_key = hash((leaf.key, leaf.value))
    if leaf.free_text:  # free text is kept as text: its addresses and its key are not read
        return LeafDigest(leaf.key, leaf.value, True, normalize_text(leaf.value), (), False, seen_key)
    return LeafDigest(
        leaf.key,
        leaf.value,
        False,
        normalize_text(leaf.value),
        tuple(address.lower() for _, address in find_addresses(leaf.value)),
        is_outsider_field(leaf.key),
        seen_key,
    )


def _digest_object(obj: dict[Any, Any]) -> ObjectDigest:
    scalars = {
        str(k): v
        for k, v in obj.items()
        if isinstance(v, bool | int | float) or (isinstance(v, str) and len(v) <= MAX_ATTRIBUTE_CHARS)
    }
    if 2 <= len(scalars) <= _MAX_ATTRIBUTES:
        keys = tuple(normalize_text(v) for v in scalars.values() if isinstance(v, str) and "\n" not in v)
        return ObjectDigest(_digest_message(obj), scalars, keys)
    return ObjectDigest(_digest_message(obj), None, ())


def _digest_message(obj: dict[Any, Any]) -> MessageDigest | None:
    sender = next((v for k, v in obj.items() if isinstance(v, str) and "@" in v and is_outsider_field(str(k))), None)
    if sender is None:
        return None
    texts = tuple(normalize_text(v) for v in obj.values() if isinstance(v, str) and v != sender)
    # The people a message names, read before folding (names are told by their capitals).
    people = frozenset(p for v in obj.values() if isinstance(v, str) and v != sender for p in find_person_names(v))
    addresses = tuple(address.lower() for _, address in find_addresses(sender))
    return MessageDigest(addresses, texts, sum(len(t) for t in texts), people)
