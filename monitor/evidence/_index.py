"""The content index of a session: what it has seen, for destination provenance and private-content search."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from monitor.evidence._content import TextLeaf, iter_leaves
from monitor.evidence._destinations import find_addresses, is_allowlisted, iter_argument_texts, normalize_text
from monitor.evidence._fingerprints import FragmentIndex, squash
from monitor.models import Destination, DestinationKind, FragmentMatch, LabelledDestination, Origin

_MAX_ATTRIBUTE_CHARS = 200
_SENT_TAIL_CHARS = 256
# Private text waits to be fingerprinted until a search needs it, up to this much.
_MAX_PENDING_CHARS = 200_000
_MIN_STEERING_CHARS = 4
_MAX_ATTRIBUTES = 64


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
    untrusted_places: list[frozenset[str]] = field(default_factory=list)
    truncated_listing: bool = False
    _text_chars: int = 0
    _private: FragmentIndex | None = None
    _order: dict[str, int] = field(default_factory=dict)
    _clock: int = 0
    _result_clock: dict[str, int] = field(default_factory=dict)
    _argument_values: dict[str, int] = field(default_factory=dict)
    _pending: list[tuple[int, str, str, str]] = field(default_factory=list)
    _pending_chars: int = 0
    _private_seen: set[int] = field(default_factory=set)

    @property
    def private(self) -> FragmentIndex:
        """The fingerprints of private content."""
        if self._private is None:
            self._private = FragmentIndex(self.max_fingerprints)
        return self._private

    @property
    def truncated(self) -> bool:
        """Whether anything was dropped to stay within the memory bound (text not yet fingerprinted counts
        once it is)."""
        return self.truncated_listing or (self._private is not None and self._private.truncated)

    def add_user_text(self, text: str) -> None:
        """Record text the user typed."""
        self.user_text.append(normalize_text(text))
        self.private.exclude(text, typed_by_user=True)

    def add_call_arguments(self, arguments: Mapping[str, Any], *, external: bool) -> None:
        """Record the values a call was made with: the agent knew them before any later result, so they are
        not private content that a later result revealed (e.g. the user's own address on every call). The
        arguments of external calls are kept (their tail) to catch data split across calls."""
        texts = [text for _, _, text in iter_argument_texts(arguments)]
        for text in texts:
            self.private.exclude(text, typed_by_user=False, at=self._clock)
            if len(text) <= _MAX_ATTRIBUTE_CHARS and len(self._argument_values) < self.max_values:
                self._argument_values.setdefault(text.lower(), self._clock)
                for _, address in find_addresses(text):
                    self._argument_values.setdefault(address.lower(), self._clock)
        self._clock += 1
        if external:
            self.sent_tail = (self.sent_tail + "".join(squash(t) for t in texts))[-_SENT_TAIL_CHARS:]

    def add_result(self, call_id: str, result: Any, *, private: bool, untrusted: bool) -> None:
        """Index one tool result: listed values, free text, the objects it lists, and (for private results)
        the text to fingerprint, which is fingerprinted when a search first needs it."""
        self._order.setdefault(call_id, len(self._order))
        self._clock += 1
        self._result_clock.setdefault(call_id, self._clock)
        for leaf in iter_leaves(result, on_object=self._add_object):
            if leaf.free_text:
                self._add_free_text(call_id, leaf, untrusted)
            else:
                self._add_listed(call_id, leaf)
            digest = hash((leaf.key, leaf.value))
            if private and digest not in self._private_seen:
                # The same text returned again (a second search of the same inbox) adds nothing new.
                if len(self._private_seen) < self.max_values:
                    self._private_seen.add(digest)
                self._pending.append((self._clock, call_id, leaf.key, leaf.value))
                self._pending_chars += len(leaf.value)
        if self._pending_chars > _MAX_PENDING_CHARS:
            self._flush_private()

    def _flush_private(self) -> None:
        for at, call_id, key, value in self._pending:
            self.private.add(call_id, value, at)
            self.private.add_secrets(call_id, key, value)
        self._pending.clear()
        self._pending_chars = 0

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
            self.listed.setdefault(address.lower(), call_id)

    def _add_free_text(self, call_id: str, leaf: TextLeaf, untrusted: bool) -> None:
        text = normalize_text(leaf.value)
        self.free_text.append((call_id, text, untrusted))
        self._text_chars += len(text)
        while self._text_chars > self.max_text_chars and len(self.free_text) > 1:
            self._text_chars -= len(self.free_text.pop(0)[1])
            self.truncated_listing = True

    def label(self, destination: Destination, allowlist: Iterable[str] = ()) -> LabelledDestination:
        """Label a destination by who chose it: the user (their words or the allowlist), or else the first
        result that showed it. A structured listing in an earlier result than any untrusted free text
        mentioning it is a listing; untrusted free text first (or in the same result) is the attacker's
        suggestion; free text of private content only is private text."""
        compact = destination.kind in (DestinationKind.IBAN, DestinationKind.PHONE)
        value = destination.value.lower()

        def seen_in(text: str) -> bool:
            return value in (text.replace(" ", "") if compact else text)

        if any(seen_in(text) for text in self.user_text):
            return LabelledDestination(destination, Origin.USER, None)
        if is_allowlisted(destination, allowlist):
            return LabelledDestination(destination, Origin.ALLOWLIST, None)
        labelled = self._label_by_results(destination, seen_in)
        # A result that only echoed a value the agent had already sent (a lookup of an address it made up)
        # does not show where the value came from.
        sent_at = self._argument_values.get(value)
        if labelled.from_call is not None and sent_at is not None and sent_at < self._result_clock[labelled.from_call]:
            return LabelledDestination(destination, Origin.UNSEEN, None)
        return labelled

    def _label_by_results(self, destination: Destination, seen_in: Callable[[str], bool]) -> LabelledDestination:
        value = destination.value.lower()
        listed_in = self.listed.get(value)
        attacker_call = next((c for c, text, untrusted in self.free_text if untrusted and seen_in(text)), None)
        if listed_in is not None and (
            attacker_call is None or self._order.get(listed_in, 0) < self._order.get(attacker_call, 0)
        ):
            return LabelledDestination(destination, Origin.LISTING, listed_in)
        if attacker_call is not None:
            return LabelledDestination(destination, Origin.ATTACKER, attacker_call)
        private_call = next((c for c, text, untrusted in self.free_text if not untrusted and seen_in(text)), None)
        if private_call is not None:
            return LabelledDestination(destination, Origin.PRIVATE_TEXT, private_call)
        return LabelledDestination(destination, Origin.UNSEEN, None)

    def add_untrusted_source(self, arguments: Mapping[str, Any]) -> None:
        """Record the arguments of a call whose result carried untrusted content: they name a place that
        outsiders write to (a public repository, a shared channel, a ticket queue)."""
        values = frozenset(
            normalize_text(text) for _, _, text in iter_argument_texts(arguments) if len(text) <= _MAX_ATTRIBUTE_CHARS
        )
        if values and len(self.untrusted_places) < self.max_values:
            self.untrusted_places.append(values)

    def is_shared_place(self, destinations: Iterable[Destination]) -> bool:
        """Whether named destinations (repository, channel, …; not people's addresses) are all arguments of
        one earlier call that returned untrusted content: a place outsiders write to, and so can read."""
        names = {d.value for d in destinations if d.keyed and d.kind in (DestinationKind.NAME, DestinationKind.DOMAIN)}
        return bool(names) and any(names <= place for place in self.untrusted_places)

    def find_steering(self, arguments: Mapping[str, Any]) -> str | None:
        """The call whose untrusted free text suggested one of these argument values (a name, path, id or
        address the user never typed), if any: a read made with it was chosen by whoever wrote that text."""
        for _, _, text in iter_argument_texts(arguments):
            value = normalize_text(text)
            if not _MIN_STEERING_CHARS <= len(value) <= _MAX_ATTRIBUTE_CHARS or value.isdigit():
                continue
            if any(value in typed for typed in self.user_text):
                continue
            for call_id, free, untrusted in self.free_text:
                if untrusted and value in free:
                    return call_id
        return None

    def find_private(self, arguments: Mapping[str, Any], skip_paths: Iterable[str] = ()) -> list[FragmentMatch]:
        """Private content (not typed by the user) in a call's arguments, in any of the forms
        :meth:`FragmentIndex.search` looks for. ``skip_paths`` (the destinations) are not content: sending to
        a contact is not leaking the contact."""
        self._flush_private()
        skip = set(skip_paths)
        texts = (text for path, _, text in iter_argument_texts(arguments) if path not in skip)
        return self.private.search(texts, self.sent_tail)
