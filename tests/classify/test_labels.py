"""Server-sent labels on tool results: what each scheme's real shapes give, the trust rule, and the bounds.

Shapes come from: the trust-annotations extension (Tool Annotations Interest Group, experimental draft of
2026-06-10, ``specification/draft/trust-annotations.mdx``), its ``ifc.fides.v1`` evidenceRef profile
(``ifc-fides.mdx``, same draft), the GitHub MCP server's ``_meta.ifc`` labels (``pkg/ifc/ifc.go``), the early
SEP-1913 result hints, and the action-metadata extension (``action-metadata.mdx``, same draft)."""

from __future__ import annotations

from typing import Any

from monitor.classify import (
    MAX_LABEL_BLOCKS,
    TRUST_ANNOTATIONS_KEY,
    Classifier,
    LabelClaim,
    LabelScheme,
    apply_labels,
    read_action_metadata,
    read_result_labels,
)
from monitor.models import ACTION_METADATA_KEY, Classification, Leg, LegSource, Provenance, ToolContext, parse_tool

U, P, X = Leg.UNTRUSTED_CONTENT, Leg.PRIVATE_DATA, Leg.EXTERNAL_COMMUNICATION
TA = TRUST_ANNOTATIONS_KEY


def _text(text: str = "ok", meta: Any = None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": text}
    if meta is not None:
        block["_meta"] = meta
    return block


def _result(meta: Any = None, content: list[Any] | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {"content": content if content is not None else [_text()]}
    if meta is not None:
        result["_meta"] = meta
    return result


# What the balanced posture gives a tool with no hints: U and X by default, no P.
DEFAULT = Classification(
    provenance={
        U: Provenance(source=LegSource.DEFAULT, rule="openWorldHint-absent"),
        X: Provenance(source=LegSource.DEFAULT, rule="openWorldHint-absent"),
    }
)
HEURISTIC_P = DEFAULT.with_added({P: Provenance(source=LegSource.HEURISTIC, rule="private-store-name:file")})
REVIEWED = Classification(
    provenance={
        U: Provenance(source=LegSource.OVERRIDE, rule="r1"),
        P: Provenance(source=LegSource.OVERRIDE, rule="r1"),
    }
)


def _legs(result: Any, trusted: bool, base: Classification = HEURISTIC_P) -> frozenset[Leg]:
    return apply_labels(base, read_result_labels(result), trusted).classification.legs


def test_trust_annotations_booleans_add_legs_with_their_key() -> None:
    """trust-annotations.mdx: ``{"sensitive": true, "untrusted": true}`` on the CallToolResult ``_meta``."""
    labels = read_result_labels(_result({TA: {"sensitive": True, "untrusted": True}}))
    added = labels.added_legs()
    assert added.keys() == {U, P}
    assert added[P] == Provenance(source=LegSource.RESULT_HINT, rule=f"_meta.{TA}.sensitive")
    assert {label.scheme for label in labels.labels} == {LabelScheme.TRUST_ANNOTATIONS}
    assert _legs(_result({TA: {"sensitive": True}}), trusted=False, base=DEFAULT) == {U, P, X}


def test_trust_annotations_on_a_content_block_add_to_the_result() -> None:
    """trust-annotations.mdx: a ContentBlock's ``_meta`` label refines the result's (union semantics)."""
    result = _result({TA: {"sensitive": False}}, [_text("a"), _text("b", {TA: {"sensitive": True}})])
    labels = read_result_labels(result)
    assert labels.added_legs()[P].rule == f"content[1]._meta.{TA}.sensitive"
    # A false value is no claim; it removes nothing, even from a trusted server.
    assert _legs(_result({TA: {"untrusted": False, "sensitive": False}}), trusted=True) == HEURISTIC_P.legs


def test_ifc_fides_evidence_ref_inlined_is_read_like_an_ifc_label() -> None:
    """ifc-fides.mdx: ``evidenceRef.type == "ifc.fides.v1"``, record ``{integrity, confidentiality}`` inlined."""
    ref = {"type": "ifc.fides.v1", "digest": "sha256:00", "integrity": "untrusted", "confidentiality": ["alice"]}
    labels = read_result_labels(_result({TA: {"evidenceRef": ref}}))
    assert {label.claim for label in labels.labels} == {LabelClaim.UNTRUSTED, LabelClaim.PRIVATE}
    assert labels.added_legs()[P].rule == f"_meta.{TA}.evidenceRef.confidentiality"
    nested = {"type": "ifc.fides.v1", "record": {"integrity": "trusted", "confidentiality": "public"}}
    assert _legs(_result({TA: {"evidenceRef": nested}}), trusted=True) == {X}
    # Another profile's evidence (a digest only) makes no claim.
    other = {"type": "data-class.v1", "digest": "sha256:00", "canonicalization": "cbor/rfc8949"}
    assert read_result_labels(_result({TA: {"evidenceRef": other}})).labels == ()


def test_github_ifc_public_untrusted_from_list_issues() -> None:
    """github-mcp-server pkg/ifc/ifc.go: list_issues on a public repository is PublicUntrusted."""
    result = _result({"ifc": {"integrity": "untrusted", "confidentiality": ["public"]}})
    labels = read_result_labels(result)
    assert labels.added_legs() == {U: Provenance(source=LegSource.RESULT_HINT, rule="_meta.ifc.integrity")}
    for trusted in (True, False):
        labelled = apply_labels(HEURISTIC_P, labels, trusted)
        # Public: a trusted server's word takes the file-name heuristic's P away, and the place is public.
        assert labelled.classification.legs == ({U, X} if trusted else {U, P, X})
        assert labelled.public_place is trusted
    # The newer plain-string shape reads the same.
    assert _legs(_result({"ifc": {"confidentiality": "public"}}), trusted=True) == {U, X}


def test_github_ifc_private_readers_are_private_data_and_a_private_place() -> None:
    """ifc.go: get_file_contents on a private repository is PrivateTrusted(readers)."""
    labels = read_result_labels(_result({"ifc": {"integrity": "trusted", "confidentiality": ["alice", "bob"]}}))
    (private,) = labels.claims(LabelClaim.PRIVATE)
    assert private.readers == ("alice", "bob")
    # A large team is still a reader set: private data, read within the bound, and no unreadable label.
    team = read_result_labels(_result({"ifc": {"confidentiality": [f"user{i}" for i in range(10_000)]}}))
    assert not team.incomplete and len(team.labels[0].readers) == 64
    # Every entry is checked, not only the logins kept: a junk reader past them makes the label unreadable.
    junk = read_result_labels(_result({"ifc": {"integrity": "trusted", "confidentiality": ["a"] * 64 + [5]}}))
    assert junk.incomplete and junk.lowered_legs() == frozenset()
    assert private.key == "_meta.ifc.confidentiality"
    trusted = apply_labels(DEFAULT, labels, True)
    assert trusted.classification.legs == {P, X}  # integrity trusted: no untrusted content from this result
    assert trusted.private_place and not trusted.public_place
    untrusted = apply_labels(DEFAULT, labels, False)
    assert untrusted.classification.legs == {U, P, X}
    assert not untrusted.private_place
    assert _legs(_result({"ifc": {"confidentiality": "private"}}), trusted=False, base=DEFAULT) == {U, P, X}


def test_sep_1913_result_hints_keep_working() -> None:
    """The early SEP-1913 draft: ``privateHint``/``openWorldHint`` in a result's ``_meta`` or ``annotations``."""
    labels = read_result_labels({"content": [], "_meta": {"privateHint": True, "openWorldHint": False}})
    assert labels.added_legs() == {P: Provenance(source=LegSource.RESULT_HINT, rule="_meta.privateHint")}
    hinted = read_result_labels({"annotations": {"maliciousActivityHint": True}})
    assert hinted.added_legs().keys() == {U}
    assert read_result_labels("plain text").labels == ()


def test_reviewed_rules_and_other_labels_stand_against_a_trusted_lowering_claim() -> None:
    """A reviewed rule's legs stand; so do legs another label of the same result adds (union semantics)."""
    lowering = _result({"ifc": {"integrity": "trusted", "confidentiality": "public"}})
    assert _legs(lowering, trusted=True, base=REVIEWED) == {U, P}
    contradicted = _result(
        {"ifc": {"integrity": "trusted", "confidentiality": "public"}}, [_text("x", {TA: {"untrusted": True}})]
    )
    assert _legs(contradicted, trusted=True) == {U, X}
    # A block's lowering claim speaks for the block only: it lowers nothing.
    block_only = _result(None, [_text("x", {"ifc": {"integrity": "trusted", "confidentiality": "public"}})])
    assert _legs(block_only, trusted=True) == HEURISTIC_P.legs


def test_malformed_labels_count_against_the_call() -> None:
    """Wrong types never crash, never lower risk, and read as the claim that raises risk."""
    for junk in (None, 1, "untrusted", [], [1], {"integrity": 5}, {"confidentiality": {"a": 1}}):
        for meta in ({"ifc": junk}, {TA: junk}, {TA: {"untrusted": junk, "sensitive": junk}}, junk):
            result = _result(meta)
            labels = read_result_labels(result)
            assert labels.lowered_legs() == frozenset()
            assert _legs(result, trusted=True) >= HEURISTIC_P.legs
    assert read_result_labels(_result({"ifc": {"integrity": "mostly"}})).added_legs().keys() == {U}
    assert read_result_labels(_result({"ifc": {"confidentiality": ["public", "eve"]}})).added_legs().keys() == {P}
    assert read_result_labels(_result({TA: {"sensitive": "yes"}})).added_legs().keys() == {P}
    assert read_result_labels(_result("not an object")).added_legs().keys() == {U, P}


def test_a_huge_content_list_is_read_within_the_bound_and_drops_lowering_claims() -> None:
    """A result with more content blocks than the bound: only the first blocks are examined, the label of a
    block past the bound is not seen, and the result's own lowering claims no longer count."""
    blocks = [_text(str(i)) for i in range(MAX_LABEL_BLOCKS * 400)]
    blocks[-1] = _text("late", {TA: {"untrusted": True}})
    result = _result({"ifc": {"integrity": "trusted", "confidentiality": "public"}}, blocks)
    labels = read_result_labels(result)
    assert labels.incomplete
    assert _legs(result, trusted=True) == HEURISTIC_P.legs
    deep: Any = {"ifc": {"integrity": "trusted"}}
    for _ in range(50_000):
        deep = {"_meta": deep, "content": [deep]}
    assert read_result_labels(deep).labels == ()


def test_action_metadata_is_a_tool_level_input_that_only_adds() -> None:
    """action-metadata.mdx: ``returnMetadata.source: open-world``, a non-public ``returnMetadata.sensitivity``
    and ``inputMetadata.destination: external`` in a tool's annotations."""
    annotations = {
        "readOnlyHint": False,
        ACTION_METADATA_KEY: {
            "inputMetadata": {"destination": "external", "sensitivity": "personal"},
            "returnMetadata": {"source": "open-world", "sensitivity": "personal"},
            "outcome": "consequential",
            "requiresReview": True,
        },
    }
    labels = read_action_metadata(annotations)
    assert labels.added_legs().keys() == {U, P, X}
    assert labels.added_legs()[X].rule == f"annotations.{ACTION_METADATA_KEY}.inputMetadata.destination"
    quiet = {
        ACTION_METADATA_KEY: {
            "inputMetadata": {"destination": "local"},
            "returnMetadata": {"source": "first-party", "sensitivity": "public"},
        }
    }
    assert read_action_metadata(quiet).labels == ()
    assert read_action_metadata({ACTION_METADATA_KEY: "junk"}).added_legs().keys() == {U, P}
    assert read_action_metadata({"readOnlyHint": True}).labels == ()


def test_a_tools_action_metadata_adds_legs_in_classification_even_against_a_trusted_closed_world_hint() -> None:
    """action-metadata.mdx: the extension member sits in the tool's ``annotations`` as served by ``tools/list``.
    A tool that claims ``openWorldHint: false`` from a trusted server but declares that its input goes to an
    external destination keeps external communication; without the member it has none."""
    annotations: dict[str, Any] = {
        "readOnlyHint": False,
        "openWorldHint": False,
        ACTION_METADATA_KEY: {
            "inputMetadata": {"destination": "external"},
            "returnMetadata": {"source": "first-party"},
        },
    }
    tool = {"name": "file_note", "description": "Files a note."}
    described, findings = parse_tool({**tool, "annotations": annotations})
    plain, _ = parse_tool({**tool, "annotations": {"openWorldHint": False}})
    assert described is not None and plain is not None
    assert findings == []
    classifier = Classifier()
    for trusted in (True, False):
        got = classifier.classify(ToolContext(server="notes", name="file_note", definition=described, trusted=trusted))
        assert X in got.classification.legs
        assert got.classification.provenance[X].rule == f"annotations.{ACTION_METADATA_KEY}.inputMetadata.destination"
    without = classifier.classify(ToolContext(server="notes", name="file_note", definition=plain, trusted=True))
    assert X not in without.classification.legs
