"""Who chose a value the session saw: the user, a listing, or untrusted content (docs/decisions.md, "Who chose
each recipient"). These read the session's :class:`~monitor.evidence.ContentIndex`, whose methods of the same
names call them: the places the user pointed at, the label of a destination, and the argument values
untrusted content steered."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol

from monitor.evidence._actions import asks_for_action, delegates_everything, names_place_of, says_it_moves_money
from monitor.evidence._destinations import (
    TARGET_KEYS,
    is_allowlisted,
    is_recipient_value,
    iter_argument_texts,
    mentions_destination,
    normalize_text,
)
from monitor.evidence._lookalikes import find_lookalike
from monitor.evidence._paraphrase import is_common_word
from monitor.evidence._parties import _Index as _PartiesIndex
from monitor.evidence._parties import (
    is_delegated,
    is_described_object,
    is_said_by_named_sender,
    names_users_object,
)
from monitor.evidence._postal import find_listed_street
from monitor.evidence._tokens import contains_token, mentions_id
from monitor.evidence._words import FreeText
from monitor.models import Destination, DestinationKind, LabelledDestination, Origin

MAX_ATTRIBUTE_CHARS = 200
"""A longer value is text, not a name, an id or an address (the index keeps no shorter values as such)."""

_MIN_STEERING_CHARS = 4
_MIN_COPIED_LINE = 24
_MAX_LINES_COMPARED = 200
_MAX_NAME_PARTS = 4
_MAX_TARGET_WORDS = 4
_QUOTED = re.compile(r"'([^']{16,})'|\"([^\"]{16,})\"|`([^`]{16,})`")


class _Index(_PartiesIndex, Protocol):
    """What these rules read of the session's content index (:class:`monitor.evidence.ContentIndex`)."""

    def echoes(self, value: str, call_id: str) -> bool:
        """Whether the result of ``call_id`` came after the agent had sent ``value``."""

    def order_of(self, call_id: str) -> int:
        """The place of ``call_id``'s result among the session's results (0: the first, or none)."""


def record_place(
    index: _Index, call_id: str, arguments: Mapping[str, Any], tool: str = "", texts: Sequence[str] | None = None
) -> None:
    """Record the arguments of a call that ran: when its names are values the user typed (a channel, a
    subject, a file name) or ids of objects the user named, the call read a place the user pointed at. A call
    that names nothing reads the place its tool is for: a place of the kind the user's words name ("check my
    inbox"), where a destination may be delegated (see :attr:`pointed_places`). ``texts``, when given, are the
    texts of ``arguments`` as :func:`iter_argument_texts` yields them (a caller that walked them already)."""
    # Every name in the request must be the user's (``alice/private-infra`` is not the ``alice/pacman``
    # the user named, though the owner is the same). A number is an id only of an object the user described.
    walked = texts if texts is not None else [text for _, _, text in iter_argument_texts(arguments)]
    texts = [text for text in walked if len(text) <= MAX_ATTRIBUTE_CHARS]
    named = [text for text in texts if len(text) >= _MIN_STEERING_CHARS - 1 and not text.strip().isdigit()]
    ids = [text for text in texts if text.strip().isdigit() and is_described_object(index, text)]
    if not named and not ids:
        if tool and names_place_of(index.user_text, tool):
            index.pointed_places.add(call_id)
    elif all(_typed_place(index, t) or names_users_object(index, t) or is_described_object(index, t) for t in named):
        index.pointed.add(call_id)


def _typed_place(index: _Index, text: str) -> bool:
    # A URL the user typed without its scheme ("www.example.com/bill") is the one fetched with it.
    return index.typed_by_user(text) or ("://" in text and index.typed_by_user(text.split("://", 1)[1]))


def is_seen_verbatim(index: _Index, text: str) -> bool:
    """Whether ``text`` (a URL, an address, a value) appears whole in what the session saw: the user's
    words, a listed value or free text of a result."""
    value = normalize_text(text)
    if not value:
        return False
    if value in index.listed or any(contains_token(t, value) for t in index.user_text):
        return True
    return any(contains_token(t, value) for _, t, _ in index.free_texts_with(value))


def label_destination(
    index: _Index, destination: Destination, allowlist: Iterable[str] = (), tool: str = ""
) -> LabelledDestination:
    """Label a destination by who chose it: the user (their words, as a whole token, or the allowlist); a
    look-alike of one the user sanctioned; or else the first result that showed it. A structured listing in
    an earlier result than any untrusted free text mentioning it is a listing; untrusted free text first (or
    in the same result) is the attacker's suggestion, unless the user delegated it (pointed at that place
    and asked for an action of ``tool``'s kind, without naming a destination of that kind); free text of
    private content only is private text."""
    compact = destination.kind in (DestinationKind.IBAN, DestinationKind.PHONE)
    value = destination.value.lower()

    def seen_in(text: str) -> bool:
        if compact:
            return mentions_destination(text, destination)
        # A bare number in prose is a date, an amount or a count; it names a place only when named as an id.
        if value.isdigit():
            return mentions_id(text, value)
        return contains_token(text, value, domain=destination.kind is DestinationKind.DOMAIN)

    if any(seen_in(text) for text in index.user_text):
        return LabelledDestination(destination, Origin.USER, None)
    if is_allowlisted(destination, allowlist):
        return LabelledDestination(destination, Origin.ALLOWLIST, None)
    sanctioned = [a for addresses in index.user_addresses.values() for a in addresses]
    sanctioned.extend(entry.lower() for entry in allowlist)
    if find_lookalike(destination.value, sanctioned) is not None:
        return LabelledDestination(destination, Origin.LOOKALIKE, None)
    # Numbers and compact values (IBANs, phone numbers) are matched by other patterns than whole tokens.
    texts = index.free_text if compact or value.isdigit() else index.free_texts_with(value)
    labelled = _label_by_results(index, destination, seen_in, texts)
    # A result that only echoed a value the agent had already sent (a lookup of an address it made up)
    # does not show where the value came from.
    if labelled.from_call is not None and index.echoes(value, labelled.from_call):
        return LabelledDestination(destination, Origin.UNSEEN, None)
    if labelled.origin is Origin.ATTACKER and is_delegated(index, destination, labelled.from_call, tool):
        return LabelledDestination(destination, Origin.DELEGATED, labelled.from_call)
    return labelled


def _label_by_results(
    index: _Index, destination: Destination, seen_in: Callable[[str], bool], texts: Sequence[FreeText]
) -> LabelledDestination:
    value = normalize_text(destination.value)
    listed_in = index.listed.get(value)
    if listed_in is None and destination.kind is DestinationKind.POSTAL:
        listed_in = find_listed_street(index.listed, value)
    attacker_call = next((c for c, text, untrusted in texts if untrusted and seen_in(text)), None)
    if listed_in is not None and (attacker_call is None or index.order_of(listed_in) < index.order_of(attacker_call)):
        return LabelledDestination(destination, Origin.LISTING, listed_in)
    if attacker_call is not None:
        return LabelledDestination(destination, Origin.ATTACKER, attacker_call)
    outsider_call = index.outsiders.get(value)
    if outsider_call is not None:
        return LabelledDestination(destination, Origin.ATTACKER, outsider_call)
    private_call = next((c for c, text, untrusted in texts if not untrusted and seen_in(text)), None)
    if private_call is not None:
        return LabelledDestination(destination, Origin.PRIVATE_TEXT, private_call)
    return LabelledDestination(destination, Origin.UNSEEN, None)


def find_steering(index: _Index, arguments: Mapping[str, Any]) -> str | None:
    """The call whose untrusted free text suggested one of these argument values (a name, path, id or
    address the user never typed), if any: a read made with it was chosen by whoever wrote that text. A
    place the user pointed at and told the agent to act on ("do what Ana's e-mail says") does not steer."""
    for _, _, text in iter_argument_texts(arguments):
        value = normalize_text(text)
        if not _MIN_STEERING_CHARS <= len(value) <= MAX_ATTRIBUTE_CHARS or value.isdigit():
            continue
        if index.typed_by_user(value):
            continue
        for call_id, free, untrusted in index.free_texts_with(value):
            if untrusted and contains_token(free, value) and not index.echoes(value, call_id):
                if call_id in index.pointed and delegates_everything(index.user_text):
                    break
                return call_id
    return None


def find_steered_value(
    index: _Index, arguments: Mapping[str, Any], tool: str, *, copied_lines: bool = True
) -> tuple[str, str] | None:
    """An argument value of a call to ``tool`` that untrusted content chose, as ``(value, call id)``: a
    target (at most four words) first written in untrusted free text (an id only where the text names it as
    one: ``ID '13'``, ``#13``), or (with ``copied_lines``) a line of a longer value copied from it. Values
    the user typed, values listed before the text showed them, and places the user pointed at for an action
    of this kind are not steered."""
    # Content the user asked to be written where they said (the workflow at the path they typed) is theirs,
    # wherever its lines were looked up.
    user_target = any(
        key.lower() in TARGET_KEYS and index.typed_by_user(text) for _, key, text in iter_argument_texts(arguments)
    ) and asks_for_action(index.user_text, tool)
    for _, _, text in iter_argument_texts(arguments):
        value = normalize_text(text)
        if not value or index.typed_by_user(value):
            continue
        # A target is a name, an id, an address or a secret: a few words at most. A single common word
        # ("writer", "primary") is a setting anyone would pick, not a chosen target.
        target_like = len(value) <= MAX_ATTRIBUTE_CHARS and len(value.split()) <= _MAX_TARGET_WORDS
        if target_like and not (value.isalpha() and is_common_word(value)):
            found = _first_untrusted_mention(index, value)
            if (
                found is not None
                and not _listed_before(index, value, found)
                and not _made_of_own_parts(index, value, found)
            ):
                # A place never chooses who gets money; a payment's other values (the bill's reference) it may.
                detail = says_it_moves_money(tool) and not is_recipient_value(arguments, value)
                if found in index.pointed and asks_for_action(index.user_text, tool, delegating=not detail):
                    continue
                # The user handed over what a person they named wrote ("complete the tasks Dana sent me").
                if delegates_everything(index.user_text) and is_said_by_named_sender(index, value):
                    continue
                return text, found
        for line in text.splitlines()[:_MAX_LINES_COMPARED] if copied_lines and not user_target else ():
            # A line, or a quoted part of one (the text an ``echo '…' >> ~/.bashrc`` writes).
            for part in (line, *(q for group in _QUOTED.findall(line) for q in group if q)):
                part = normalize_text(part)
                if len(part) < _MIN_COPIED_LINE or index.typed_by_user(part):
                    continue
                found = next((c for c, free, untrusted in index.free_text if untrusted and part in free), None)
                if found is not None and not (
                    found in index.pointed and asks_for_action(index.user_text, tool, delegating=True)
                ):
                    return part, found
    return None


def _first_untrusted_mention(index: _Index, value: str) -> str | None:
    if value.isdigit():
        return next((c for c, free, untrusted in index.free_text if untrusted and mentions_id(free, value)), None)
    if len(value) < _MIN_STEERING_CHARS:
        return None
    texts = index.free_texts_with(value)
    return next(
        (c for c, free, untrusted in texts if untrusted and contains_token(free, value) and not index.echoes(value, c)),
        None,
    )


def _made_of_own_parts(index: _Index, value: str, call_id: str) -> bool:
    """Whether a path-like name (``owner/repo``) is made of parts the user typed or the session listed before
    ``call_id`` showed it: the user's account and the name the user gave."""
    parts = [part for part in value.split("/") if part]
    return 1 < len(parts) <= _MAX_NAME_PARTS and all(
        index.typed_by_user(part) or _listed_before(index, part, call_id) for part in parts
    )


def _listed_before(index: _Index, value: str, call_id: str) -> bool:
    listed_in = index.listed.get(value)
    return listed_in is not None and index.order_of(listed_in) < index.order_of(call_id)
