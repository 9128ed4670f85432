"""Evidence: where a destination came from, and private content found in a call's arguments."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit

from monitor.session.content import TextLeaf, iter_leaves
from monitor.session.fingerprints import FragmentIndex, FragmentMatch, normalize


class DestinationKind(StrEnum):
    """What sort of address a destination is."""

    EMAIL = "email"
    DOMAIN = "domain"
    IBAN = "iban"
    PHONE = "phone"
    NAME = "name"


class Origin(StrEnum):
    """Who chose a destination, judged by where the session first saw it (strongest claim first)."""

    USER = "user-sanctioned"
    ALLOWLIST = "allowlisted"
    LISTING = "listing"
    PRIVATE_TEXT = "private-text"
    ATTACKER = "attacker-suggested"
    UNSEEN = "unseen"


@dataclass(frozen=True, slots=True)
class Destination:
    """An address a call sends to, with the argument path it was found under."""

    kind: DestinationKind
    value: str
    path: str
    keyed: bool = True
    """Found under a destination argument (True), or only as an address inside other content (False)."""


@dataclass(frozen=True, slots=True)
class LabelledDestination:
    """A destination and its origin; ``from_call`` is the call whose content first showed it, if any."""

    destination: Destination
    origin: Origin
    from_call: str | None


# Argument keys whose values name where a call sends to.
DESTINATION_KEYS = frozenset(
    [
        "recipient",
        "recipients",
        "to",
        "cc",
        "bcc",
        "participants",
        "attendees",
        "email",
        "emails",
        "address_to",
        "url",
        "urls",
        "uri",
        "endpoint",
        "webhook",
        "channel",
        "phone",
        "phone_number",
        "number",
        "iban",
        "user",
        "username",
    ]
)
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24}")
_URL = re.compile(r"\b(?:https?|ftp|wss?)://[^\s'\"<>()\[\]{}]+", re.IGNORECASE)
_BARE_DOMAIN = re.compile(
    r"(?<![@\w.-])(?:www\.)?(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+"
    r"(?:com|net|org|io|dev|ai|co|app|me|info|biz|xyz|site|online|us|uk|de|fr|eu|ru|cn|gov|edu)\b"
    r"(?![@\w-])",
    re.IGNORECASE,
)
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b")
_PHONE = re.compile(r"(?<![\w+])\+\d[\d ().-]{6,18}\d\b")
_SPACE = re.compile(r"\s+")
_MAX_ATTRIBUTE_CHARS = 200
_SENT_TAIL_CHARS = 256
_MIN_STEERING_CHARS = 4
_MAX_ATTRIBUTES = 64
_SENTENCE_BREAK = re.compile(r"(?<=[.!?;])\s+|\n+")
_EDGE_PUNCTUATION = " .!?;:,'\"()[]"


def normalize_text(text: str) -> str:
    """Lowercase and fold white space, so copies that were re-wrapped still match."""
    return _SPACE.sub(" ", text).strip().lower()


def _host(url: str) -> str:
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return ""
    return host.removeprefix("www.").lower()


def find_addresses(text: str) -> Iterator[tuple[DestinationKind, str]]:
    """Yield e-mail addresses, domains (of URLs and bare host names), IBANs and phone numbers in text."""
    for m in _EMAIL.finditer(text):
        yield DestinationKind.EMAIL, m.group(0).lower()
    without_emails = _EMAIL.sub(" ", text)
    for m in _URL.finditer(without_emails):
        host = _host(m.group(0))
        if host:
            yield DestinationKind.DOMAIN, host
    for m in _BARE_DOMAIN.finditer(_URL.sub(" ", without_emails)):
        yield DestinationKind.DOMAIN, m.group(0).lower().removeprefix("www.")
    for m in _IBAN.finditer(text):
        yield DestinationKind.IBAN, m.group(0).replace(" ", "")
    for m in _PHONE.finditer(text):
        yield DestinationKind.PHONE, re.sub(r"[^\d+]", "", m.group(0))


def extract_destinations(arguments: Mapping[str, Any], extra_paths: Iterable[str] = ()) -> list[Destination]:
    """Return where a call sends to.

    The values under destination arguments (recipient-like keys, and ``extra_paths`` that a rule declares)
    name the destinations, as addresses or, failing that, as plain names. Only when a call has no such
    argument are addresses inside its other arguments returned, marked ``keyed=False``: a link inside a
    mail body is content, not where the mail goes.
    """
    paths = ["/" + "/".join(p for p in path.replace(".", "/").split("/") if p) for path in extra_paths]
    keyed: dict[tuple[DestinationKind, str], Destination] = {}
    anywhere: dict[tuple[DestinationKind, str], Destination] = {}
    for path, key, text in _walk_arguments(arguments):
        addresses = list(find_addresses(text))
        if key.lower() in DESTINATION_KEYS or any(path == p or path.startswith(p + "/") for p in paths):
            for kind, value in addresses:
                keyed.setdefault((kind, value), Destination(kind, value, path))
            if not addresses and text.strip():
                value = normalize_text(text)
                keyed.setdefault((DestinationKind.NAME, value), Destination(DestinationKind.NAME, value, path))
        else:
            for kind, value in addresses:
                anywhere.setdefault((kind, value), Destination(kind, value, path, keyed=False))
    return list((keyed or anywhere).values())


def _walk_arguments(value: Any, path: str = "", key: str = "") -> Iterator[tuple[str, str, str]]:
    if isinstance(value, str):
        yield path or "/", key, value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield from _walk_arguments(v, f"{path}/{k}", str(k))
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from _walk_arguments(item, f"{path}/{i}", key)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield path or "/", key, str(value)


@dataclass
class ContentIndex:
    """What the session has seen, indexed for destination provenance and private-content search.

    Memory is bounded: at most ``max_fingerprints`` fingerprints of private content, ``max_text_chars`` of
    free text and ``max_values`` listed values and objects are kept; past that the oldest go and
    ``truncated`` is set.
    """

    max_fingerprints: int = 50_000
    max_text_chars: int = 1_000_000
    max_values: int = 50_000
    user_text: list[str] = field(default_factory=list)
    listed: dict[str, str] = field(default_factory=dict)
    free_text: list[tuple[str, str, bool]] = field(default_factory=list)
    attributes: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    sent_tail: str = ""
    truncated_listing: bool = False
    _text_chars: int = 0
    _private: FragmentIndex | None = None

    @property
    def private(self) -> FragmentIndex:
        """The fingerprints of private content."""
        if self._private is None:
            self._private = FragmentIndex(self.max_fingerprints)
        return self._private

    @property
    def truncated(self) -> bool:
        """Whether anything was dropped to stay within the memory bound."""
        return self.truncated_listing or (self._private is not None and self._private.truncated)

    def add_user_text(self, text: str) -> None:
        """Record text the user typed."""
        self.user_text.append(normalize_text(text))
        self.private.exclude(text, typed_by_user=True)

    def add_call_arguments(self, arguments: Mapping[str, Any], *, external: bool) -> None:
        """Record the values a call was made with: the agent knew them before any later result, so they are
        not private content that a later result revealed (e.g. the user's own address on every call). The
        arguments of external calls are kept (their tail) to catch data split across calls."""
        texts = [text for _, _, text in _walk_arguments(arguments)]
        for text in texts:
            self.private.exclude(text, typed_by_user=False)
        if external:
            self.sent_tail = (self.sent_tail + "".join(normalize(t)[0] for t in texts))[-_SENT_TAIL_CHARS:]

    def add_result(self, call_id: str, result: Any, *, private: bool, untrusted: bool) -> None:
        """Index one tool result: listed values, free text, the objects it lists, and (for private results)
        fingerprints and secrets."""
        for leaf in iter_leaves(result, on_object=self._add_object):
            if leaf.free_text:
                self._add_free_text(call_id, leaf, untrusted)
            else:
                self._add_listed(call_id, leaf)
            if private:
                self.private.add(call_id, leaf.value)
                self.private.add_secrets(call_id, leaf.key, leaf.value)

    def _add_object(self, obj: dict[Any, Any]) -> None:
        scalars = {
            str(k): v
            for k, v in obj.items()
            if isinstance(v, bool | int | float) or (isinstance(v, str) and len(v) <= _MAX_ATTRIBUTE_CHARS)
        }
        if not 2 <= len(scalars) <= _MAX_ATTRIBUTES:
            return
        for value in scalars.values():
            if isinstance(value, str) and "\n" not in value and len(self.attributes) < self.max_values:
                self.attributes.setdefault(normalize_text(value), []).append(scalars)

    def attributes_of(self, value: str) -> list[Mapping[str, Any]]:
        """The scalar fields of every listed object in which ``value`` (normalised) appeared."""
        return list(self.attributes.get(value, ()))

    def _add_listed(self, call_id: str, leaf: TextLeaf) -> None:
        if len(self.listed) >= self.max_values:
            self.truncated_listing = True
            return
        value = normalize_text(leaf.value)
        self.listed.setdefault(value, call_id)
        for _, address in find_addresses(leaf.value):
            self.listed.setdefault(address, call_id)

    def _add_free_text(self, call_id: str, leaf: TextLeaf, untrusted: bool) -> None:
        text = normalize_text(leaf.value)
        self.free_text.append((call_id, text, untrusted))
        self._text_chars += len(text)
        while self._text_chars > self.max_text_chars and len(self.free_text) > 1:
            self._text_chars -= len(self.free_text.pop(0)[1])
            self.truncated_listing = True

    def label(self, destination: Destination, allowlist: Iterable[str] = ()) -> LabelledDestination:
        """Label a destination by the strongest place the session saw it."""
        value = destination.value
        if any(value in text for text in self.user_text):
            return LabelledDestination(destination, Origin.USER, None)
        if _allowlisted(destination, allowlist):
            return LabelledDestination(destination, Origin.ALLOWLIST, None)
        listed_in = self.listed.get(value)
        if listed_in is not None:
            return LabelledDestination(destination, Origin.LISTING, listed_in)
        attacker_call: str | None = None
        for call_id, text, untrusted in self.free_text:
            if value in text:
                if not untrusted:
                    return LabelledDestination(destination, Origin.PRIVATE_TEXT, call_id)
                attacker_call = attacker_call or call_id
        if attacker_call is not None:
            return LabelledDestination(destination, Origin.ATTACKER, attacker_call)
        return LabelledDestination(destination, Origin.UNSEEN, None)

    def find_steering(self, arguments: Mapping[str, Any]) -> str | None:
        """The call whose untrusted free text suggested one of these argument values (a name, path, id or
        address the user never typed), if any: a read made with it was chosen by whoever wrote that text."""
        for _, _, text in _walk_arguments(arguments):
            value = normalize_text(text)
            if not _MIN_STEERING_CHARS <= len(value) <= _MAX_ATTRIBUTE_CHARS or value.isdigit():
                continue
            if any(value in typed for typed in self.user_text):
                continue
            for call_id, free, untrusted in self.free_text:
                if untrusted and value in free:
                    return call_id
        return None

    def find_private(self, arguments: Mapping[str, Any]) -> list[FragmentMatch]:
        """Private content (not typed by the user) in a call's arguments, in any of the forms
        :meth:`FragmentIndex.search` looks for."""
        return self.private.search((text for _, _, text in _walk_arguments(arguments)), self.sent_tail)


def _allowlisted(destination: Destination, allowlist: Iterable[str]) -> bool:
    value = destination.value
    domain = value.rsplit("@", 1)[-1] if destination.kind is DestinationKind.EMAIL else value
    for entry in allowlist:
        entry = entry.lower().removeprefix("www.")
        if value == entry or domain == entry or domain.endswith("." + entry):
            return True
    return False
