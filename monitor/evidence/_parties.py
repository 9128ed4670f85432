"""Who a value's own record names as its parties: the account a password is given for, the person whose message
gives an address. A party may read what the record holds, and a recipient the user pointed at by naming its
person is the user's choice (docs/decisions.md, "Who chose each recipient")."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from monitor.evidence._actions import asks_for_action, delegates_everything, names_address_of
from monitor.evidence._destinations import find_addresses, normalize_text
from monitor.evidence._fingerprints import FragmentIndex, kgram_hashes, squash
from monitor.evidence._paraphrase import is_common_word, is_very_common_word
from monitor.evidence._tokens import contains_token
from monitor.models import Destination, DestinationKind, FragmentMatch


class _Index(Protocol):
    """What these rules read of the session's content index (:class:`monitor.evidence.ContentIndex`)."""

    people: set[frozenset[str]]
    user_addresses: dict[DestinationKind, set[str]]
    listed: dict[str, str]
    user_text: list[str]
    pointed: set[str]
    pointed_places: set[str]
    outsiders: dict[str, str]
    messages: dict[str, list[str]]
    message_people: dict[str, set[frozenset[str]]]
    max_values: int
    free_text: list[tuple[str, str, bool]]

    def attributes_of(self, value: str) -> list[Mapping[str, Any]]:
        """The scalar fields of every listed object in which ``value`` appeared."""

    def typed_by_user(self, value: str) -> bool:
        """Whether the user typed ``value`` as a whole token."""

    def free_texts_with(self, value: str) -> Sequence[tuple[str, str, bool]]:
        """The free texts that may hold ``value`` as a whole token."""

    @property
    def private(self) -> FragmentIndex:
        """The fingerprints of private content."""


_MAX_RECORDS = 64  # listed objects looked at per value: a value repeated in more is a common word, not a party
_WORD = re.compile(r"[a-z]{3,}")
_MIN_FOLDER_CHARS = 4  # a shorter folder name ("/", "a/") is no place the user named
_MAX_FIELD_CHARS = 200  # a longer field is text, not a name of the object
_MAX_LABEL_CHARS = 80  # a longer sentence before a colon is prose, not a label of the data that follows
_SENTENCE_END = re.compile(r"[.!?]\s")


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


def is_named_sender(index: _Index, address: str, people: Iterable[frozenset[str]] | None = None) -> bool:
    """Whether ``address`` is the sender of a message in a place the user pointed at, belonging by its name to a
    person the user named (or one of ``people``), and no other sender there belongs to that person (an impostor
    leaves the choice to whoever wrote it)."""
    people = index.people if people is None else list(people)
    person = names_address_of(people, address)
    pointed = index.pointed | index.pointed_places
    if person is None or index.outsiders.get(address) not in pointed:
        return False
    return not any(
        other != address and call_id in pointed and names_address_of([person], other) == person
        for other, call_id in list(index.outsiders.items())[: index.max_values]
    )


def is_named_by_named_sender(index: _Index, address: str) -> bool:
    """Whether ``address`` is the sender of a message in a place the user pointed at, belonging to a person that a
    named sender's message names ("forward it to Alice Miller"), and no other sender there belongs to that person:
    when the user hands over what that message asks, its writer chose the recipient."""
    handed_people = {
        person
        for sender, people in list(index.message_people.items())[: index.max_values]
        if names_address_of(index.people, sender) is not None and is_named_sender(index, sender)
        for person in people
    }
    return bool(handed_people) and is_named_sender(index, address, handed_people)


def is_described_object(index: _Index, value: str) -> bool:
    """Whether ``value`` is the id of a listed object the user described by the words of its title: every word of a
    field of it is among the user's words, two at least, one of them not a common word ("my notes from this
    morning's Atlas sync" describes "Atlas sync 2026-10-20 - my notes")."""
    normalized = normalize_text(value)
    records = index.attributes_of(normalized)[:_MAX_RECORDS]
    if not records:
        return False
    said = {word for text in index.user_text for word in _WORD.findall(text.lower())}
    for scalars in records:
        for field_value in scalars.values():
            if not isinstance(field_value, str) or normalize_text(field_value) == normalized:
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


def find_handed_over_grams(index: _Index) -> frozenset[int]:
    """The k-grams of what the people the user named wrote in messages in places the user pointed at (see
    :func:`is_named_sender`): with their request handed over ("do what Taylor's e-mail asks"), the user's to pass on.
    The messages kept are bounded (:attr:`ContentIndex.max_text_chars`), and so is this work."""
    return frozenset(
        h
        for address, texts in list(index.messages.items())[: index.max_values]
        if names_address_of(index.people, address) is not None and is_named_sender(index, address)
        for text in texts
        for h in kgram_hashes(squash(text))
    )


def is_handed_over_text(index: _Index, text: str, handed: frozenset[int]) -> bool:
    """Whether all that makes ``text`` private content is in ``handed`` (see :func:`find_handed_over_grams`): every
    fingerprint of private content it carries is a k-gram of those messages."""
    grams = index.private.find_private_grams(text)
    return bool(grams) and grams <= handed


def names_labelled_data(index: _Index, call_id: str) -> bool:
    """Whether the result of ``call_id`` gives its data under a label the user's words name: its text ends in a short
    sentence ending in a colon ("Account verified. Current linked SSH keys:", then the keys), two of whose words at
    least, not among the thousand most common, the user said ("send my linked SSH keys to Alice"). That data is what
    the user asked for, whichever call returned it (the answer to a verification step asked on the way)."""
    said = {_stem(word) for text in index.user_text for word in _WORD.findall(text)}
    for source, text, _ in index.free_text[: index.max_values]:
        if source != call_id or not text.endswith(":"):
            continue
        label = _SENTENCE_END.split(text)[-1]
        words = {_stem(word) for word in _WORD.findall(label)}
        named = {word for word in words & said if not is_very_common_word(word)}
        if len(label) <= _MAX_LABEL_CHARS and len(named) >= 2:
            return True
    return False


def _stem(word: str) -> str:
    return word[:-1] if word.endswith("s") and len(word) > 3 else word


def is_delegated(index: _Index, destination: Destination, from_call: str | None, tool: str) -> bool:
    """Whether the user delegated the choice of ``destination`` to the place ``from_call`` read, where untrusted
    content showed it, for an action of ``tool``'s kind (docs/decisions.md, "Who chose each recipient")."""
    pointed = from_call in index.pointed or from_call in index.pointed_places
    if from_call is None or not pointed or not tool or destination.kind is DestinationKind.NAME:
        return False
    if index.user_addresses.get(destination.kind):
        return False  # the user named a destination of this kind: only that one is theirs
    # The place must point at one destination of the kind: a second one (a genuine payee and an injected
    # one) leaves the choice to whoever wrote the text, not to the user. Not one object in the result: its
    # fields are written by the same outsiders and can copy the user's words. Or the user named the person
    # whose message in that place gives the address as its sender ("her address is in my inbox").
    value = destination.value.lower()
    named = is_named_sender(index, value)
    # Or a person named in the message of that person, whose request the user handed over ("forward it to
    # Alice Miller"): that person chose, for the actions a place may choose a recipient for.
    handed = not named and delegates_everything(index.user_text) and is_named_by_named_sender(index, value)
    if _addresses_shown(index, from_call, destination.kind) != {value} and not named and not handed:
        return False
    # A place alone never chooses who gets money or ownership; a person the user named does, for the action
    # the user asked for ("transfer it to Alexander Chen, his address is in my inbox").
    return asks_for_action(index.user_text, tool, delegating=not named)


def _addresses_shown(index: _Index, call_id: str, kind: DestinationKind) -> set[str]:
    found: set[str] = set()
    texts = [text for c, text, _ in index.free_text if c == call_id]
    texts.extend(value for value, c in index.listed.items() if c == call_id)
    for text in texts:
        # Free text is kept folded to lower case; IBANs are written in capitals.
        source = text.upper() if kind is DestinationKind.IBAN else text
        found.update(address.lower() for k, address in find_addresses(source) if k is kind)
        if len(found) > 1:
            break
    return found
