"""The content index of a session: what it has seen, for destination provenance and private-content search."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from monitor.evidence import _provenance
from monitor.evidence._actions import (
    find_person_names,
)
from monitor.evidence._content import Reading
from monitor.evidence._destinations import (
    find_addresses,
    iter_argument_texts,
    normalize_text,
)
from monitor.evidence._digest import (
    MIN_RECORD_VALUE,
    DigestShape,
    LeafDigest,
    MessageDigest,
    ObjectDigest,
    digest_result,
)
from monitor.evidence._fingerprints import FragmentIndex, squash
from monitor.evidence._paraphrase import SalientIndex
from monitor.evidence._provenance import MAX_ATTRIBUTE_CHARS
from monitor.evidence._secrets import PieceLog, piece_texts, split_pieces, stream_pieces
from monitor.evidence._tables import add_first
from monitor.evidence._tokens import contains_token
from monitor.evidence._words import FreeText, WordIndex
from monitor.models import Destination, DestinationKind, FragmentMatch, LabelledDestination, Transform

_SENT_TAIL_CHARS = 256
_MAX_STREAMS = 64
MAX_RESULT_CHARS = 1_000_000
"""Characters of one result that are indexed (private text fingerprinted, free text kept); past that the rest
of the result is not examined and ``truncated`` is set."""
# Private text waits to be fingerprinted until a search needs it, up to this much.
_MAX_PENDING_CHARS = 200_000
# Up to this many free texts a search reads them all; past it, only those holding the value's words.
_SCAN_ALL_TEXTS = 32
_MIN_RECORD_FIELDS = 2


@dataclass
class ContentIndex:
    """What the session has seen, indexed for destination provenance and private-content search.

    Memory is bounded: at most ``max_fingerprints`` fingerprints of private content, ``max_text_chars`` of
    free text and ``max_values`` listed values and objects are kept; past that the oldest go and
    ``truncated`` is set. Of one result, at most :data:`MAX_RESULT_CHARS` characters are indexed, so the peak
    memory of indexing a result does not grow with its size; what is past that is not examined and sets
    ``truncated`` too.

    Content split across external calls is looked for in *streams*: the normalised tail (the last 256
    characters) of what earlier external calls sent under one argument path (list positions ignored), in one
    kind of URL component (path, query key, fragment, user name, host labels), and in all their arguments
    joined; at most 64 streams, the least recently used go. A short secret is also found when pieces of the last
    16 external calls cover it, in any order and with other calls between (see :class:`PieceLog`).
    """

    max_fingerprints: int = 50_000
    max_text_chars: int = 1_000_000
    max_values: int = 50_000
    user_text: list[str] = field(default_factory=list)
    user_addresses: dict[DestinationKind, set[str]] = field(default_factory=dict)
    people: set[frozenset[str]] = field(default_factory=set)
    """The people the user named, each as the words of its name ("Alexander Chen sent me": ``{alexander, chen}``)."""
    pointed: set[str] = field(default_factory=set)
    """Calls made with a value the user typed: places the user pointed at."""
    pointed_places: set[str] = field(default_factory=set)
    """Calls that name nothing and read the kind of place the user's words name ("my inbox"): a destination there
    may be delegated when it is the only one of its kind; a target there is not pointed at by that alone."""
    listed: dict[str, str] = field(default_factory=dict)
    free_text: list[tuple[str, str, bool]] = field(default_factory=list)
    attributes: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    sent_tail: str = ""
    _streams: OrderedDict[str, str] = field(default_factory=OrderedDict)
    _pieces: PieceLog = field(default_factory=PieceLog)
    _grams: dict[str, set[str]] = field(default_factory=dict)
    _grams_version: int = 0
    truncated_result: bool = False
    """Whether part of a private or untrusted result was not examined (a reading bound, or past
    :data:`MAX_RESULT_CHARS`)."""
    untrusted_places: list[tuple[str, frozenset[str]]] = field(default_factory=list)
    _places_with: dict[str, set[int]] = field(default_factory=dict)
    """Each value of an untrusted place, with the positions in :attr:`untrusted_places` of the places naming it."""
    truncated_listing: bool = False
    outsiders: dict[str, str] = field(default_factory=dict)
    messages: dict[str, list[str]] = field(default_factory=dict)
    """What each sender wrote: the texts of an object beside an address in its sender (outsider) field."""
    message_people: dict[str, set[frozenset[str]]] = field(default_factory=dict)
    """The people each sender's messages name (see :func:`find_person_names`)."""
    _message_chars: int = 0
    _text_chars: int = 0
    _private: FragmentIndex | None = None
    _salient: SalientIndex | None = None
    _order: dict[str, int] = field(default_factory=dict)
    _clock: int = 0
    _result_clock: dict[str, int] = field(default_factory=dict)
    _argument_values: dict[str, int] = field(default_factory=dict)
    _pending: list[tuple[int, str, str, str]] = field(default_factory=list)
    _pending_chars: int = 0
    _pending_excludes: list[tuple[str, int | None]] = field(default_factory=list)
    _pending_exclude_chars: int = 0
    _private_seen: set[int] = field(default_factory=set)
    _private_values: dict[str, tuple[str, int]] = field(default_factory=dict)
    _words: WordIndex = field(default_factory=WordIndex)
    _dropped_texts: int = 0

    @property
    def private(self) -> FragmentIndex:
        """The fingerprints of private content."""
        if self._private is None:
            self._private = FragmentIndex(self.max_fingerprints)
        return self._private

    @property
    def salient(self) -> SalientIndex:
        """The salient tokens (numbers, identifiers, rare words) of private content: evidence of paraphrase."""
        if self._salient is None:
            self._salient = SalientIndex(self.max_fingerprints)
        return self._salient

    @property
    def truncated(self) -> bool:
        """Whether anything was dropped to stay within the memory bound (text not yet fingerprinted counts
        once it is)."""
        return (
            self.truncated_listing
            or self.truncated_result
            or (self._private is not None and self._private.truncated)
            or (self._salient is not None and self._salient.truncated)
        )

    def add_user_text(self, text: str) -> None:
        """Record text the user typed."""
        self.user_text.append(normalize_text(text))
        self.private.exclude(text, typed_by_user=True)
        self._exclude_later(text, None)
        for kind, address in find_addresses(text):
            self.user_addresses.setdefault(kind, set()).add(address)
        self.people.update(find_person_names(text))

    def typed_by_user(self, value: str) -> bool:
        """Whether the user typed ``value`` as a whole token (``smith@x.example`` is not in ``j.smith@x.example``)."""
        value = normalize_text(value)
        return bool(value) and any(contains_token(text, value) for text in self.user_text)

    def add_place(
        self, call_id: str, arguments: Mapping[str, Any], tool: str = "", texts: Sequence[str] | None = None
    ) -> None:
        """Record the arguments of a call that ran: whether it read a place the user pointed at (see
        :func:`~monitor.evidence._provenance.record_place`; ``texts``: the arguments' texts, already walked)."""
        _provenance.record_place(self, call_id, arguments, tool, texts)

    def is_seen_verbatim(self, text: str) -> bool:
        """Whether ``text`` (a URL, an address, a value) appears whole in what the session saw."""
        return _provenance.is_seen_verbatim(self, text)

    def add_call_arguments(self, arguments: Mapping[str, Any], *, external: bool) -> None:
        """Record the values a call was made with: the agent knew them before any later result, so they are
        not private content that a later result revealed (e.g. the user's own address on every call). The
        arguments of external calls are kept (their tail) to catch data split across calls."""
        texts = [text for _, _, text in iter_argument_texts(arguments)]
        for text in texts:
            self.private.exclude(text, typed_by_user=False, at=self._clock)
            self._exclude_later(text, self._clock)
            if len(text) <= MAX_ATTRIBUTE_CHARS and len(self._argument_values) < self.max_values:
                self._argument_values.setdefault(text.lower(), self._clock)
                for _, address in find_addresses(text):
                    self._argument_values.setdefault(address.lower(), self._clock)
        self._clock += 1
        if external:
            self.sent_tail = (self.sent_tail + "".join(squash(t) for t in texts))[-_SENT_TAIL_CHARS:]
            _extend_streams(self._streams, arguments)
            keep = self._secret_piece()
            self._pieces.record(split_pieces(piece_texts(texts), keep) if keep is not None else frozenset())

    def add_result(self, call_id: str, result: Any, *, private: bool, untrusted: bool) -> None:
        """Index one tool result (a value, or a :class:`Reading` of one): listed values, free text, the objects
        it lists, and (for private results) the text to fingerprint, which is fingerprinted when a search first
        needs it. When reading it left something unexamined, or it is longer than :data:`MAX_RESULT_CHARS`,
        and it is private or untrusted, ``truncated`` is set."""
        self._order.setdefault(call_id, len(self._order))
        self._clock += 1
        self._result_clock.setdefault(call_id, self._clock)
        reading = result if isinstance(result, Reading) else Reading(result)
        digest = digest_result(reading, MAX_RESULT_CHARS)
        if not _add_at_once(self, call_id, digest.shape, private, untrusted):
            for item in digest.items:
                if isinstance(item, LeafDigest):
                    self._add_leaf(call_id, item, private, untrusted)
                else:
                    self._add_object(item)
        # What was not examined may carry private data or an attacker's words: it counts against later calls.
        if (digest.cut or digest.truncated) and (private or untrusted):
            self.truncated_result = True

    def _add_leaf(self, call_id: str, leaf: LeafDigest, private: bool, untrusted: bool) -> None:
        if leaf.free_text:
            self._add_free_text(call_id, leaf.normalized, untrusted)
        elif untrusted and leaf.outsider:
            if not _add_value(self.outsiders, call_id, leaf, self.max_values):
                self.truncated_listing = True
        else:
            if not _add_value(self.listed, call_id, leaf, self.max_values):
                self.truncated_listing = True
            if private:
                self._add_private_value(call_id, leaf)
        if private:
            self._add_pending(call_id, leaf)

    def _add_pending(self, call_id: str, leaf: LeafDigest) -> None:
        if leaf.seen_key not in self._private_seen:
            # The same text returned again (a second search of the same inbox) adds nothing new.
            if len(self._private_seen) < self.max_values:
                self._private_seen.add(leaf.seen_key)
            self._pending.append((self._clock, call_id, leaf.key, leaf.value))
            self._pending_chars += len(leaf.value)
            if self._pending_chars > _MAX_PENDING_CHARS:
                self._flush_private()

    def _add_private_value(self, call_id: str, leaf: LeafDigest) -> None:
        # Short fields of private records (a customer's e-mail, phone, id) are too short to fingerprint.
        size = len(leaf.value)
        if MIN_RECORD_VALUE <= size <= MAX_ATTRIBUTE_CHARS and len(self._private_values) < self.max_values:
            self._private_values.setdefault(leaf.normalized, (call_id, self._clock))

    def _exclude_later(self, text: str, at: int | None) -> None:
        # Like private text, what is known before it waits until a search needs it: most calls never search.
        self._pending_excludes.append((text, at))
        self._pending_exclude_chars += len(text)
        if self._pending_exclude_chars > _MAX_PENDING_CHARS:
            self._flush_excludes()

    def _flush_excludes(self) -> None:
        for text, at in self._pending_excludes:
            self.salient.exclude(text, at=at)
        self._pending_excludes.clear()
        self._pending_exclude_chars = 0

    def _flush_private(self) -> None:
        # Exclusions first: a token known before private content arrived is never evidence of it.
        self._flush_excludes()
        for at, call_id, key, value in self._pending:
            self.private.add(call_id, value, at)
            self.private.add_secrets(call_id, key, value)
            self.salient.add(call_id, value, at=at)
        self._pending.clear()
        self._pending_chars = 0

    def _add_object(self, obj: ObjectDigest) -> None:
        if obj.message is not None:
            self._add_message(obj.message)
        if obj.scalars is None:
            return
        for value in obj.keys:
            if len(self.attributes) < self.max_values:
                self.attributes.setdefault(value, []).append(obj.scalars)

    def _add_message(self, message: MessageDigest) -> None:
        # Past the bound a message is not kept: its words are then nobody's the user named (the stricter reading).
        if self._message_chars + message.size > self.max_text_chars:
            return
        self._message_chars += message.size
        for address in message.addresses:
            self.messages.setdefault(address, []).extend(message.texts)
            self.message_people.setdefault(address, set()).update(message.people)

    def attributes_of(self, value: str) -> list[Mapping[str, Any]]:
        """The scalar fields of every listed object in which ``value`` (normalised) appeared."""
        return list(self.attributes.get(value, ()))

    def _add_free_text(self, call_id: str, text: str, untrusted: bool) -> None:
        self.free_text.append((call_id, text, untrusted))
        self._text_chars += len(text)
        while self._text_chars > self.max_text_chars and len(self.free_text) > 1:
            self._text_chars -= len(self.free_text.pop(0)[1])
            self._dropped_texts += 1
            self.truncated_listing = True

    def label(self, destination: Destination, allowlist: Iterable[str] = (), tool: str = "") -> LabelledDestination:
        """Label a destination by who chose it (see :func:`~monitor.evidence._provenance.label_destination`)."""
        return _provenance.label_destination(self, destination, allowlist, tool)

    def add_untrusted_source(self, arguments: Mapping[str, Any], call_id: str = "") -> None:
        """Record the arguments of a call whose result carried untrusted content: they name a place that
        outsiders write to (a public repository, a shared channel, a ticket queue)."""
        values = frozenset(
            normalize_text(text) for _, _, text in iter_argument_texts(arguments) if len(text) <= MAX_ATTRIBUTE_CHARS
        )
        if values and len(self.untrusted_places) < self.max_values:
            for value in values:
                self._places_with.setdefault(value, set()).add(len(self.untrusted_places))
            self.untrusted_places.append((call_id, values))

    def is_shared_place(self, destinations: Iterable[Destination]) -> bool:
        """Whether named destinations (repository, channel, …; not people's addresses) are all arguments of
        one earlier call that returned untrusted content: a place outsiders write to, and so can read."""
        return bool(self.shared_place_calls(destinations))

    def shared_place_calls(self, destinations: Iterable[Destination]) -> set[str]:
        """The earlier calls that read the place these destinations name, when it is one outsiders write to
        (empty when it is not): what they returned is already there."""
        names = {
            d.value
            for d in destinations
            if d.keyed and d.kind in (DestinationKind.NAME, DestinationKind.DOMAIN, DestinationKind.PATH)
        }
        if not names:
            return set()
        # The places naming every one of the names, found through the names: not a pass over every place.
        positions = [self._places_with.get(name, set()) for name in names]
        common = set.intersection(*positions)
        return {self.untrusted_places[i][0] for i in common}

    def find_steering(self, arguments: Mapping[str, Any]) -> str | None:
        """The call whose untrusted free text suggested one of these argument values, if any (see
        :func:`~monitor.evidence._provenance.find_steering`)."""
        return _provenance.find_steering(self, arguments)

    def find_steered_value(
        self, arguments: Mapping[str, Any], tool: str, *, copied_lines: bool = True
    ) -> tuple[str, str] | None:
        """An argument value of a call to ``tool`` that untrusted content chose, as ``(value, call id)`` (see
        :func:`~monitor.evidence._provenance.find_steered_value`)."""
        return _provenance.find_steered_value(self, arguments, tool, copied_lines=copied_lines)

    def echoes(self, value: str, call_id: str) -> bool:
        """Whether the result of ``call_id`` came after the agent had sent ``value``: it only echoes it (an error
        repeating an argument), which does not show who chose it."""
        sent_at = self._argument_values.get(value)
        return sent_at is not None and sent_at < self._result_clock.get(call_id, 0)

    def order_of(self, call_id: str) -> int:
        """The place of ``call_id``'s result among the session's results (0: the first, or none)."""
        return self._order.get(call_id, 0)

    def free_texts_with(self, value: str) -> Sequence[FreeText]:
        """The free texts that may hold ``value`` as a whole token, in order (see :class:`WordIndex`)."""
        if len(self.free_text) <= _SCAN_ALL_TEXTS:
            return self.free_text
        return self._words.find(self.free_text, self._dropped_texts, value)

    def _secret_piece(self) -> Callable[[str], bool] | None:
        """Whether a piece a call sends is part of a secret of the private content; None while there is none (no
        piece sent before a secret was read can be part of sending it)."""
        self._flush_private()
        if self.private.secrets_added != self._grams_version:
            grams: dict[str, set[str]] = {}
            for secret in self.private.secrets():
                for i in range(len(secret) - 1):
                    grams.setdefault(secret[i : i + 2], set()).add(secret)
            self._grams, self._grams_version = grams, self.private.secrets_added
        grams = self._grams
        if not grams:
            return None
        return lambda piece: any(piece in secret for secret in grams.get(piece[:2], ()))

    def find_secret_sources(self, fragments: Iterable[FragmentMatch]) -> frozenset[str]:
        """The sources of ``fragments`` that are, or hold, a secret of the session's private content."""
        return self.private.find_secret_sources(fragments)

    def find_private(self, arguments: Mapping[str, Any], skip_paths: Iterable[str] = ()) -> list[FragmentMatch]:
        """Private content (not typed by the user) in a call's arguments, in any of the forms
        :meth:`FragmentIndex.search` looks for. ``skip_paths`` (the destinations) are not content: sending to
        a contact is not leaking the contact."""
        self._flush_private()
        skip = set(skip_paths)
        kept = [(path, text) for path, _, text in iter_argument_texts(arguments) if path not in skip]
        texts = [text for _, text in kept]
        streams = [(self._streams.get(key, ""), piece) for key, piece in stream_pieces(kept)]
        keep = self._secret_piece()
        pieces = (self._pieces, split_pieces(piece_texts(texts), keep) if keep is not None else frozenset())
        found = self.private.search(texts, self.sent_tail, streams=streams, pieces=pieces)
        matched = {f.from_call for f in found}
        copied = _find_copied_records(texts, self._private_values, self._argument_values, self.typed_by_user)
        found.extend(f for f in copied if f.from_call not in matched)
        # Paraphrase is weaker evidence: reported only for sources nothing stronger matched.
        strong = {f.from_call for f in found}
        found.extend(f for f in self.salient.search(texts) if f.from_call not in strong)
        return found


def _add_at_once(index: ContentIndex, call_id: str, shape: DigestShape, private: bool, untrusted: bool) -> bool:
    """Apply a digest table by table, when every table has room for all it adds and the private content it
    brings is not fingerprinted on the way (then no bound is met, and each table ends as adding the items one by
    one leaves it); False, and nothing added, otherwise."""
    tables: tuple[tuple[dict[str, str], tuple[str, ...]], ...] = (
        ((index.outsiders, shape.outsiders), (index.listed, shape.insiders))
        if untrusted
        else ((index.listed, shape.listed),)
    )
    # The private fields are listed values too, and the listed table is never emptied: while it has room, so
    # has theirs.
    if (
        any(len(table) + len(keys) >= index.max_values for table, keys in tables)
        or index._text_chars + shape.free_chars > index.max_text_chars
        or (private and len(index._private_seen) + len(shape.pending) >= index.max_values)
        or (private and index._pending_chars + shape.pending_chars > _MAX_PENDING_CHARS)
    ):
        return False
    for table, keys in tables:
        add_first(table, keys, call_id)
    if shape.free:
        index.free_text.extend((call_id, text, untrusted) for text in shape.free)
        index._text_chars += shape.free_chars
    if private:
        fields = shape.private_insiders if untrusted else shape.private_values
        add_first(index._private_values, fields, (call_id, index._clock))
        _add_fresh_pending(index, call_id, shape)
    for obj in shape.objects:  # objects fill other tables than leaves: their order among leaves does not matter
        index._add_object(obj)
    return True


def _add_fresh_pending(index: ContentIndex, call_id: str, shape: DigestShape) -> None:
    seen = index._private_seen
    fresh = [leaf for leaf in shape.pending if leaf.seen_key not in seen]
    seen.update(leaf.seen_key for leaf in fresh)
    clock = index._clock
    index._pending.extend((clock, call_id, leaf.key, leaf.value) for leaf in fresh)
    index._pending_chars += sum(len(leaf.value) for leaf in fresh)


def _add_value(table: dict[str, str], call_id: str, leaf: LeafDigest, max_values: int) -> bool:
    """Note the call that first showed the leaf's value (folded) and the addresses in it; False, and nothing
    noted, when ``table`` is full."""
    if len(table) >= max_values:
        return False
    table.setdefault(leaf.normalized, call_id)
    for address in leaf.addresses:
        table.setdefault(address, call_id)
    return True


def _extend_streams(streams: OrderedDict[str, str], arguments: Mapping[str, Any]) -> None:
    """Add what an external call sends to the tails of its streams (the least recently used beyond the bound go)."""
    texts_by_path = [(path, text) for path, _, text in iter_argument_texts(arguments)]
    for key, piece in stream_pieces(texts_by_path):
        tail = (streams.pop(key, "") + piece)[-_SENT_TAIL_CHARS:]
        streams[key] = tail
        while len(streams) > _MAX_STREAMS:
            streams.popitem(last=False)


def _find_copied_records(
    texts: list[str],
    private_values: Mapping[str, tuple[str, int]],
    argument_values: Mapping[str, int],
    typed_by_user: Callable[[str], bool],
) -> list[FragmentMatch]:
    """Private records copied field by field: two or more whole argument values that are short fields of
    the private content one call returned (and that the agent did not have before it)."""
    found: dict[str, list[str]] = {}
    for text in texts:
        value = normalize_text(text)
        hit = private_values.get(value)
        if hit is None or typed_by_user(value):
            continue
        sent_at = argument_values.get(value)
        if sent_at is not None and sent_at < hit[1]:
            continue
        if text not in found.setdefault(hit[0], []):
            found[hit[0]].append(text)
    return [
        FragmentMatch(call_id, ", ".join(values)[:200], Transform.VERBATIM)
        for call_id, values in found.items()
        if len(values) >= _MIN_RECORD_FIELDS
    ]
