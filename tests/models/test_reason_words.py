"""One wording per reason code: the host line's clause and the explanation live side by side in REASON_WORDING."""

import re

import pytest

import monitor.report
from monitor.models import (
    REASON_WORDING,
    Action,
    Decision,
    Evidence,
    EvidenceKind,
    Leg,
    Level,
    Origin,
    Reason,
    ReasonWording,
)

# Reasons the host line has no words of its own for. An allowing reason: an allowed call's line lists its
# reasons by code. A reason the line's evidence already tells: the fragments a call carries, a steered
# target, what lies outside the scope, a secret or private data beyond a delegation (named with its recipient).
ALLOWING = {
    Reason.NO_EXTERNAL_COMMUNICATION,
    Reason.NOT_ARMED,
    Reason.NO_DESTINATION,
    Reason.NO_PRIVATE_FRAGMENT,
    Reason.REQUEST_CARRIES_NOTHING_NEW,
    Reason.RETURNED_TO_ORIGIN,
    Reason.DESTINATION_LOCAL,
    Reason.DESTINATION_OWN_ACCOUNT,
    Reason.APPROVAL_USED,
}
TOLD_BY_EVIDENCE = {
    Reason.PRIVATE_FRAGMENT,
    Reason.STEERED_ACTION,
    Reason.OUT_OF_SCOPE,
    Reason.SECRET_TO_RECIPIENT,
    Reason.PRIVATE_BEYOND_DELEGATION,
}
FIELDS = re.compile(r"\{(\w*)\}")


def _decide(reason: Reason, *evidence: Evidence) -> Decision:
    return Decision(
        call_id="c3",
        action=Action.CONFIRM,
        level=Level.EXFILTRATION,
        legs_before=frozenset(Leg),
        legs_call=frozenset({Leg.EXTERNAL_COMMUNICATION}),
        reasons=(reason,),
        evidence=evidence,
    )


def test_every_reason_has_a_clause_and_an_explanation() -> None:
    assert set(REASON_WORDING) == set(Reason)
    for reason in Reason:
        wording = REASON_WORDING[reason]
        assert isinstance(wording, ReasonWording)
        assert wording.text.strip(), reason
        if reason in ALLOWING | TOLD_BY_EVIDENCE:
            assert wording.clause is None, f"{reason}: give it its clause, and take it out of the lists above"
        else:
            assert wording.clause and wording.clause.strip(), f"{reason} has no clause for the host line"
    clauses = [w.clause for w in REASON_WORDING.values() if w.clause]
    assert len(set(clauses)) == len(clauses)


def test_wordings_name_only_the_fields_they_are_given() -> None:
    for reason, wording in REASON_WORDING.items():
        assert set(FIELDS.findall(wording.text)) <= {"tool", "source", "destination"}, reason
        assert set(FIELDS.findall(wording.clause or "")) <= {"source"}, reason


def test_each_origin_is_worded_once_by_its_destination_reason() -> None:
    by_origin = [w.origin for w in REASON_WORDING.values() if w.origin is not None]
    assert sorted(by_origin) == sorted(Origin)
    for wording in REASON_WORDING.values():
        if wording.origin is not None:
            assert wording.evidence is EvidenceKind.DESTINATION and wording.clause


@pytest.mark.parametrize("reason", [r for r, w in REASON_WORDING.items() if w.clause], ids=str)
def test_the_host_line_says_each_clause(reason: Reason) -> None:
    wording = REASON_WORDING[reason]
    assert wording.clause is not None
    if wording.origin is None:
        assert wording.clause in _decide(reason).describe("send_email")
        return
    destination = Evidence(
        kind=EvidenceKind.DESTINATION, from_call="c1", detail=f"eve@x.example at /to: {wording.origin.value}"
    )
    line = _decide(reason, destination).describe("send_email", {"c1": "read_inbox"})
    said = wording.clause.format(source=" (from read_inbox)")
    assert f"it sends to eve@x.example, {said}" in line, line


def test_the_report_exports_the_same_table() -> None:
    assert monitor.report.REASON_WORDING is REASON_WORDING
    assert monitor.report.ReasonWording is ReasonWording
