"""Server-sent labels on tool results, read within bounds, and the trust rule that gates them (:func:`apply_labels`).

Claims that add a leg are taken from any server; claims that lower risk only from a trusted server, for the whole
result, and never against a reviewed rule or another label. The schemes read, the bounds and the precedence are in
docs/labels.md; the concept is docs/design.md, "Server-sent labels".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from monitor.models import ACTION_METADATA_KEY, Classification, Leg, LegSource, Provenance

TRUST_ANNOTATIONS_KEY = "io.modelcontextprotocol/trust-annotations"
"""The ``_meta`` key of the trust-annotations extension."""

MAX_LABEL_BLOCKS = 256
"""Content blocks of one result whose labels are examined; past it, the result's lowering claims are dropped."""

_MAX_READERS = 64
_IFC_PROFILE = "ifc.fides.v1"
_SEP_1913_HINTS: dict[str, Leg] = {
    "privateHint": Leg.PRIVATE_DATA,
    "sensitiveHint": Leg.PRIVATE_DATA,
    "openWorldHint": Leg.UNTRUSTED_CONTENT,
    "maliciousActivityHint": Leg.UNTRUSTED_CONTENT,
}
# Legs a lowering claim may take away: those the layers below reviewed rules and result labels gave.
_REMOVABLE_SOURCES = frozenset({LegSource.ANNOTATION, LegSource.HEURISTIC, LegSource.DEFAULT})


class LabelScheme(StrEnum):
    """A label scheme read from results or tool annotations."""

    ACTION_METADATA = "action-metadata"
    IFC = "ifc"
    SEP_1913 = "sep-1913"
    TRUST_ANNOTATIONS = "trust-annotations"


class LabelClaim(StrEnum):
    """What a label says: two claims add a leg, two lower risk, one names an external destination."""

    EXTERNAL = "external"
    PRIVATE = "private"
    PUBLIC = "public"
    TRUSTED = "trusted"
    UNTRUSTED = "untrusted"


_ADDS: dict[LabelClaim, Leg] = {
    LabelClaim.UNTRUSTED: Leg.UNTRUSTED_CONTENT,
    LabelClaim.PRIVATE: Leg.PRIVATE_DATA,
    LabelClaim.EXTERNAL: Leg.EXTERNAL_COMMUNICATION,
}
_LOWERS: dict[LabelClaim, Leg] = {LabelClaim.TRUSTED: Leg.UNTRUSTED_CONTENT, LabelClaim.PUBLIC: Leg.PRIVATE_DATA}


@dataclass(frozen=True)
class Label:
    """One claim, with the scheme and key that made it (``content[3]._meta.ifc.integrity``), whether it was made
    for the whole result (not one content block), whether its value could not be read (then it is the claim
    that raises risk), and the reader logins of a private confidentiality."""

    claim: LabelClaim
    scheme: LabelScheme
    key: str
    whole_result: bool = True
    unreadable: bool = False
    readers: tuple[str, ...] = ()


@dataclass(frozen=True)
class ResultLabels:
    """The labels read from one result, and whether some could not be read (``incomplete``)."""

    labels: tuple[Label, ...] = ()
    incomplete: bool = False

    def claims(self, claim: LabelClaim) -> tuple[Label, ...]:
        """The labels making ``claim``."""
        return tuple(label for label in self.labels if label.claim is claim)

    def added_legs(self) -> dict[Leg, Provenance]:
        """The legs the labels add (from any server), each with the first label's provenance."""
        found: dict[Leg, Provenance] = {}
        for label in self.labels:
            leg = _ADDS.get(label.claim)
            if leg is not None and leg not in found:
                found[leg] = Provenance(source=LegSource.RESULT_HINT, rule=label.key)
        return found

    def lowered_legs(self) -> frozenset[Leg]:
        """The legs a trusted server's labels say the result does not carry: claimed for the whole result,
        all labels read, and no label of the result adding the leg back."""
        if self.incomplete:
            return frozenset()
        added = self.added_legs()
        return frozenset(
            leg
            for claim, leg in _LOWERS.items()
            if leg not in added and any(label.whole_result for label in self.claims(claim))
        )


@dataclass(frozen=True)
class LabelledResult:
    """A call's classification once its result's labels were applied, and what they say about its place:
    ``public_place`` (outsiders read it) and ``private_place`` (a trusted server says they do not)."""

    classification: Classification
    public_place: bool = False
    private_place: bool = False

    def outsiders_read(self, legs: frozenset[Leg]) -> bool:
        """Whether the place the call read (named by its arguments) is one outsiders read: labelled public, or
        one outsiders write to (its result carried untrusted content) that a trusted server did not label
        private."""
        return self.public_place or (Leg.UNTRUSTED_CONTENT in legs and not self.private_place)


def read_result_labels(result: Any) -> ResultLabels:
    """Return the labels a ``CallToolResult`` carries, read within bounds. Never raises."""
    if not isinstance(result, dict):
        return ResultLabels()
    labels: list[Label] = []
    incomplete = _read_meta(result.get("_meta"), "_meta", True, labels)
    _read_sep_1913(result, labels)
    content = result.get("content")
    if isinstance(content, list):
        if len(content) > MAX_LABEL_BLOCKS:
            incomplete = True
        for i, block in enumerate(content[:MAX_LABEL_BLOCKS]):
            if isinstance(block, dict) and "_meta" in block:
                incomplete |= _read_meta(block["_meta"], f"content[{i}]._meta", False, labels)
    return ResultLabels(tuple(labels), incomplete)


def read_action_metadata(annotations: Any) -> ResultLabels:
    """Return the claims of a tool's action-metadata annotation: ``returnMetadata.source: open-world`` is
    untrusted content, a ``returnMetadata.sensitivity`` other than ``public`` private data, and
    ``inputMetadata.destination: external`` external communication. Only claims that add a leg are made."""
    if not isinstance(annotations, dict) or ACTION_METADATA_KEY not in annotations:
        return ResultLabels()
    meta = annotations[ACTION_METADATA_KEY]
    base = f"annotations.{ACTION_METADATA_KEY}"
    if not isinstance(meta, dict):
        return ResultLabels(_unreadable_both(LabelScheme.ACTION_METADATA, base, True), incomplete=True)
    labels: list[Label] = []
    incomplete = False
    returned, given = meta.get("returnMetadata"), meta.get("inputMetadata")
    for part, name in ((returned, "returnMetadata"), (given, "inputMetadata")):
        if part is not None and not isinstance(part, dict):
            incomplete = True
            claims = (LabelClaim.UNTRUSTED, LabelClaim.PRIVATE) if name == "returnMetadata" else (LabelClaim.EXTERNAL,)
            labels.extend(Label(c, LabelScheme.ACTION_METADATA, f"{base}.{name}", unreadable=True) for c in claims)
    if isinstance(returned, dict):
        source, sensitivity = returned.get("source"), returned.get("sensitivity")
        if source is not None and source != "first-party":
            bad = not isinstance(source, str) or source != "open-world"
            labels.append(
                _label(LabelClaim.UNTRUSTED, LabelScheme.ACTION_METADATA, f"{base}.returnMetadata.source", bad)
            )
        if sensitivity is not None and sensitivity != "public":
            bad = not isinstance(sensitivity, str)
            key = f"{base}.returnMetadata.sensitivity"
            labels.append(_label(LabelClaim.PRIVATE, LabelScheme.ACTION_METADATA, key, bad))
    if isinstance(given, dict):
        destination = given.get("destination")
        if destination is not None and destination not in ("local", "internal"):
            bad = destination != "external"
            key = f"{base}.inputMetadata.destination"
            labels.append(_label(LabelClaim.EXTERNAL, LabelScheme.ACTION_METADATA, key, bad))
    return ResultLabels(tuple(labels), incomplete or any(label.unreadable for label in labels))


def apply_labels(classification: Classification, labels: ResultLabels, trusted: bool) -> LabelledResult:
    """Apply a result's labels to its call's classification under the trust rule: added legs from any server;
    lowering claims only from a trusted server, and only over legs annotations, heuristics or the default gave
    (a reviewed rule's legs and result labels' legs stand)."""
    added = labels.added_legs()
    changed = classification.with_added(added)
    lowered = labels.lowered_legs() if trusted else frozenset()
    if lowered:
        kept = {
            leg: prov
            for leg, prov in changed.provenance.items()
            if leg not in lowered or prov.source not in _REMOVABLE_SOURCES
        }
        if len(kept) != len(changed.provenance):
            changed = Classification(provenance=kept)
    public = Leg.PRIVATE_DATA in lowered
    # Only a readable confidentiality (private, or named readers) says where the result came from is private.
    private = (
        trusted
        and not public
        and not labels.incomplete
        and any(_names_private_place(label) for label in labels.claims(LabelClaim.PRIVATE))
    )
    return LabelledResult(changed, public_place=public, private_place=private)


def _names_private_place(label: Label) -> bool:
    return label.whole_result and not label.unreadable and label.key.endswith(".confidentiality")


def _label(claim: LabelClaim, scheme: LabelScheme, key: str, unreadable: bool, whole: bool = True) -> Label:
    return Label(claim, scheme, key, whole_result=whole, unreadable=unreadable)


def _unreadable_both(scheme: LabelScheme, key: str, whole: bool) -> tuple[Label, ...]:
    return (
        Label(LabelClaim.UNTRUSTED, scheme, key, whole_result=whole, unreadable=True),
        Label(LabelClaim.PRIVATE, scheme, key, whole_result=whole, unreadable=True),
    )


def _read_meta(meta: Any, where: str, whole: bool, labels: list[Label]) -> bool:
    """Read the trust-annotations and ifc labels of one ``_meta``; return whether one could not be read."""
    if meta is None:
        return False
    if not isinstance(meta, dict):
        # A ``_meta`` that is not an object may have held any label: it counts against the call.
        labels.extend(_unreadable_both(LabelScheme.TRUST_ANNOTATIONS, where, whole))
        return True
    incomplete = False
    if TRUST_ANNOTATIONS_KEY in meta:
        incomplete |= _read_trust_annotations(
            meta[TRUST_ANNOTATIONS_KEY], f"{where}.{TRUST_ANNOTATIONS_KEY}", whole, labels
        )
    if "ifc" in meta:
        incomplete |= _read_ifc(meta["ifc"], f"{where}.ifc", LabelScheme.IFC, whole, labels)
    return incomplete


def _read_trust_annotations(value: Any, where: str, whole: bool, labels: list[Label]) -> bool:
    scheme = LabelScheme.TRUST_ANNOTATIONS
    if not isinstance(value, dict):
        labels.extend(_unreadable_both(scheme, where, whole))
        return True
    incomplete = False
    for key, claim in (("untrusted", LabelClaim.UNTRUSTED), ("sensitive", LabelClaim.PRIVATE)):
        flag = value.get(key)
        # Absent or false: no claim made (union semantics: a label is strengthened, never weakened).
        if flag is None or flag is False:
            continue
        bad = flag is not True
        incomplete |= bad
        labels.append(_label(claim, scheme, f"{where}.{key}", bad, whole))
    ref = value.get("evidenceRef")
    if isinstance(ref, dict) and ref.get("type") == _IFC_PROFILE:
        record = ref.get("record", ref)
        incomplete |= _read_ifc(record, f"{where}.evidenceRef", LabelScheme.TRUST_ANNOTATIONS, whole, labels)
    return incomplete


def _read_ifc(value: Any, where: str, scheme: LabelScheme, whole: bool, labels: list[Label]) -> bool:
    if not isinstance(value, dict):
        labels.extend(_unreadable_both(scheme, where, whole))
        return True
    incomplete = False
    integrity = value.get("integrity")
    if integrity is not None:
        if integrity == "trusted":
            labels.append(_label(LabelClaim.TRUSTED, scheme, f"{where}.integrity", False, whole))
        else:
            bad = integrity != "untrusted"
            incomplete |= bad
            labels.append(_label(LabelClaim.UNTRUSTED, scheme, f"{where}.integrity", bad, whole))
    if "confidentiality" in value:
        label = _read_confidentiality(value["confidentiality"], f"{where}.confidentiality", scheme, whole)
        incomplete |= label.unreadable
        labels.append(label)
    return incomplete


def _read_confidentiality(value: Any, where: str, scheme: LabelScheme, whole: bool) -> Label:
    if value == "public" or value == ["public"]:
        return _label(LabelClaim.PUBLIC, scheme, where, False, whole)
    if value == "private":
        return _label(LabelClaim.PRIVATE, scheme, where, False, whole)
    if isinstance(value, list) and all(isinstance(r, str) for r in value):
        # A reader set (possibly empty: nobody may read); every entry is checked, the first logins kept. "public"
        # mixed with readers is not a shape any document gives, so it is read as the narrower claim.
        readers = tuple(r for r in value[:_MAX_READERS] if r != "public")
        mixed = "public" in value
        return Label(LabelClaim.PRIVATE, scheme, where, whole_result=whole, unreadable=mixed, readers=readers)
    return _label(LabelClaim.PRIVATE, scheme, where, True, whole)


def _read_sep_1913(result: Mapping[str, Any], labels: list[Label]) -> None:
    found: set[Leg] = set()
    for container_key in ("_meta", "annotations"):
        container = result.get(container_key)
        if not isinstance(container, dict):
            continue
        for hint, leg in _SEP_1913_HINTS.items():
            if container.get(hint) is True and leg not in found:
                found.add(leg)
                claim = LabelClaim.PRIVATE if leg is Leg.PRIVATE_DATA else LabelClaim.UNTRUSTED
                labels.append(Label(claim, LabelScheme.SEP_1913, f"{container_key}.{hint}"))
