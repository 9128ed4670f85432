"""Who a value's own record names as its parties: the account a password is given for, the person whose message
gives an address. A party may read what the record holds, and a recipient the user pointed at by naming its
person is the user's choice (docs/decisions.md, "Who chose each recipient")."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from monitor.evidence._actions import names_address_of
from monitor.evidence._destinations import normalize_text
from monitor.evidence._fingerprints import squash
from monitor.evidence._paraphrase import is_common_word
from monitor.evidence._tokens import contains_token
from monitor.models import FragmentMatch


class _Index(Protocol):
    """What these rules read of the session's content index (:class:`monitor.evidence.ContentIndex`)."""

    people: set[frozenset[str]]
    user_text: list[str]
    pointed: set[str]
    pointed_places: set[str]
    outsiders: dict[str, str]
    messages: dict[str, list[str]]
    max_values: int

    def attributes_of(self, value: str) -> list[Mapping[str, Any]]:
        """The scalar fields of every listed object in which ``value`` appeared."""

    def typed_by_user(self, value: str) -> bool:
        """Whether the user typed ``value`` as a whole token."""

    def free_texts_with(self, value: str) -> Sequence[tuple[str, str, bool]]:
        """The free texts that may hold ``value`` as a whole token."""


_MAX_RECORDS = 64  # listed objects looked at per value: a value repeated in more is a common word, not a party
_WORD = re.compile(r"[a-z]{3,}")
_MIN_FOLDER_CHARS = 4  # a shorter folder name ("/", "a/") is no place the user named
_MAX_FIELD_CHARS = 200  # a longer field is text, not a name of the object


def names_party_of(index: _Index, value: str, fragments: Iterable[FragmentMatch]) -> bool:
    """Whether one listed object holds ``value`` beside every one of ``fragments`` as its fields: the record
    names its party (the account a password belongs to), which may read it."""
    needles = {squash(f.text) for f in fragments} - {""}
    if not needles:
        return False
    for scalars in index.attributes_of(normalize_text(value))[:_MAX_RECORDS]:
        if needles <= {squash(str(v)) for v in scalars.values()}:
            return True
    return False


def names_account_of(index: _Index, value: str, fragments: Iterable[FragmentMatch]) -> bool:
    """Whether one text holds the account name ``value`` beside every one of ``fragments`` (``username: ana,
    password: …``): whoever wrote the text tied that secret to that account, and an account is not a person who
    reads, so the text's writer learns nothing new. Not an address: whoever writes a text can put their own
    address beside the words the agent will copy."""
    fragments = list(fragments)
    sources = {f.from_call for f in fragments}
    needles = {squash(f.text) for f in fragments} - {""}
    if len(sources) != 1 or not needles:
        return False
    value = normalize_text(value)
    return any(
        call_id in sources and contains_token(text, value) and all(n in squash(text) for n in needles)
        for call_id, text, _ in index.free_texts_with(value)
    )


def is_named_sender(index: _Index, address: str) -> bool:
    """Whether ``address`` is the sender of a message in a place the user pointed at, belonging by its name to a
    person the user named, and no other sender there belongs to that person (an impostor leaves the choice to
    whoever wrote it)."""
    person = names_address_of(index.people, address)
    pointed = index.pointed | index.pointed_places
    if person is None or index.outsiders.get(address) not in pointed:
        return False
    return not any(
        other != address and call_id in pointed and names_address_of(index.people, other) == person
        for other, call_id in list(index.outsiders.items())[: index.max_values]
    )


def is_described_object(index: _Index, value: str) -> bool:
    """Whether ``value`` is the id of a listed object the user described by the words of its title: every word of a
    field of it is among the user's words, two at least, one of them not a common word ("my notes from this
    morning's Atlas sync" describes "Atlas sync 2026-10-20 - my notes")."""
    said = {word for text in index.user_text for word in _WORD.findall(text.lower())}
    for scalars in index.attributes_of(normalize_text(value))[:_MAX_RECORDS]:
        for field_value in scalars.values():
            if not isinstance(field_value, str) or normalize_text(field_value) == normalize_text(value):
                continue
            words = set(_WORD.findall(field_value.lower()))
            if len(words) >= 2 and words <= said and not all(is_common_word(word) for word in words):
                return True
    return False


def names_users_object(index: _Index, value: str) -> bool:
    """Whether ``value`` is the id of a listed object the user named (``C01GENERAL`` for the channel "general"), or a
    file in a folder the user named (``/user/info/bob.txt`` under ``/user/info``)."""
    for scalars in index.attributes_of(normalize_text(value))[:_MAX_RECORDS]:
        for other in scalars.values():
            if isinstance(other, str) and 3 <= len(other) <= _MAX_FIELD_CHARS and index.typed_by_user(other):
                return True
    value = normalize_text(value)
    head = value.rsplit("/", 1)[0]
    while head and head != value:
        if len(head) >= _MIN_FOLDER_CHARS and index.typed_by_user(head):
            return True
        value, head = head, head.rsplit("/", 1)[0]
    return False


def is_said_by_named_sender(index: _Index, value: str) -> bool:
    """Whether ``value`` is written in a message whose sender is a person the user named (see
    :func:`is_named_sender`): what the user handed over, when they asked for what that person wrote to be done."""
    value = normalize_text(value)
    # Only the messages of senders whose name is a named person's are read (a name check costs no scan).
    return any(
        any(contains_token(text, value) for text in texts) and is_named_sender(index, address)
        for address, texts in list(index.messages.items())[: index.max_values]
        if names_address_of(index.people, address) is not None
    )
