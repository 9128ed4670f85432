"""An evidence item's detail is read in one place: what was found, where, and how."""

from __future__ import annotations

import pytest

from monitor.models import Evidence, EvidenceKind


@pytest.mark.parametrize(
    ("kind", "detail", "parts"),
    [
        (
            EvidenceKind.DESTINATION,
            "a@b.example at /to: attacker-suggested",
            ("a@b.example", "/to", "attacker-suggested"),
        ),
        (
            EvidenceKind.DESTINATION,
            "x.example at /recipients/0: user-sanctioned",
            ("x.example", "/recipients/0", "user-sanctioned"),
        ),
        (EvidenceKind.DESTINATION, "no origin given", ("no origin given", "", "")),
        (EvidenceKind.DESTINATION, "odd text: with a colon", ("odd text: with a colon", "", "")),
        (EvidenceKind.DESTINATION, "x.example: unseen", ("x.example: unseen", "", "")),
        (EvidenceKind.FRAGMENT, "Account (main) 4481 (verbatim)", ("Account (main) 4481", "", "verbatim")),
        (EvidenceKind.FRAGMENT, "text without a transform", ("text without a transform", "", "")),
        (
            EvidenceKind.STEERING,
            "rm -rf /srv (destructive, code-execution)",
            ("rm -rf /srv", "", "destructive, code-execution"),
        ),
        (
            EvidenceKind.UNEXAMINED,
            "the result of c1 (private_data) was not fully examined",
            ("the result of c1 (private_data) was not fully examined", "", ""),
        ),
    ],
)
def test_an_evidence_detail_splits_into_what_was_found_where_and_how(
    kind: EvidenceKind, detail: str, parts: tuple[str, str, str]
) -> None:
    assert tuple(Evidence(kind=kind, from_call="c1", detail=detail).split_detail()) == parts
