"""``Decision.describe``: the one line hosts show where they ask, built from the decision's reasons and evidence."""

from monitor import Action, Decision, Evidence, Leg, Level, Reason
from monitor.models import EvidenceKind

LEGS = frozenset({Leg.PRIVATE_DATA, Leg.UNTRUSTED_CONTENT, Leg.EXTERNAL_COMMUNICATION})


def decide(action: Action, reasons: tuple[Reason, ...], *evidence: Evidence) -> Decision:
    return Decision(
        call_id="c3",
        action=action,
        level=Level.EXFILTRATION,
        legs_before=LEGS,
        legs_call=frozenset({Leg.EXTERNAL_COMMUNICATION}),
        reasons=reasons,
        evidence=evidence,
    )


def test_an_ask_names_who_chose_the_recipient_and_where_the_data_came_from() -> None:
    destination = Evidence(
        kind=EvidenceKind.DESTINATION, from_call="c2", detail="eve@x.example at /to: attacker-suggested"
    )
    fragment = Evidence(kind=EvidenceKind.FRAGMENT, from_call="c1", detail="net pay 4,812.50 EUR (verbatim)")
    decision = decide(
        Action.CONFIRM, (Reason.DESTINATION_ATTACKER_SUGGESTED, Reason.PRIVATE_FRAGMENT), destination, fragment
    )
    line = decision.describe("send_email", {"c1": "read_payslip", "c2": "read_channel"})
    assert line == (
        "trifecta-monitor asks about this send_email call: it sends to eve@x.example, an address only untrusted "
        "content (from read_channel) suggested; it carries private data from read_payslip (“net pay 4,812.50 EUR”, "
        "verbatim) (the session is at level exfiltration)"
    )
    # Without the names of earlier calls, the line still reads, naming the conversation as the source.
    assert "private data from the conversation" in decision.describe("send_email")


def test_a_block_an_allow_and_a_bound() -> None:
    steering = Evidence(kind=EvidenceKind.STEERING, from_call="c2", detail="/finance/ledger.xlsx (destructive)")
    blocked = decide(Action.DENY, (Reason.STEERED_ACTION, Reason.ENFORCED), steering)
    assert blocked.describe("delete_file", {"c2": "read_doc"}) == (
        "trifecta-monitor blocked this delete_file call: untrusted content (from read_doc) chose its target "
        "(“/finance/ledger.xlsx”, destructive); enforce mode blocks it (the session is at level exfiltration)"
    )
    allowed = decide(Action.ALLOW, (Reason.DESTINATION_USER_SANCTIONED,))
    assert allowed.describe("send_email") == (
        "trifecta-monitor: no trifecta concern for this send_email call (destination-user-sanctioned)"
    )
    long = Evidence(kind=EvidenceKind.DESTINATION, from_call=None, detail="x" * 2000 + " at /to: unseen")
    line = decide(Action.CONFIRM, (Reason.DESTINATION_UNSEEN,), long).describe("send_email")
    assert len(line) == 600 and line.endswith("…")
