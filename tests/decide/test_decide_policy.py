"""The ``reviewed-only`` policy in :func:`monitor.decide.decide`: its rules only ever make the trifecta engine's
answer stricter (``allow`` < ``confirm`` < ``review`` < ``deny``), keep the level, and add their own reasons."""

from __future__ import annotations

from typing import Any

import pytest
from support.decide_facts import make_armed_send

from monitor.decide import CallFacts, Policy, PolicyMode, decide
from monitor.models import (
    Action,
    Destination,
    DestinationKind,
    FragmentMatch,
    LabelledDestination,
    Leg,
    Level,
    Origin,
    Reason,
    Transform,
)

P, U, X = Leg.PRIVATE_DATA, Leg.UNTRUSTED_CONTENT, Leg.EXTERNAL_COMMUNICATION
REVIEWED_ONLY = Policy(mode=PolicyMode.REVIEWED_ONLY)


facts = make_armed_send


def attacker_send(**kw: Any) -> CallFacts:
    """An armed send of private content to an address only untrusted content suggested."""
    where = LabelledDestination(Destination(DestinationKind.EMAIL, "eve@x.example", "/to"), Origin.ATTACKER, "c0")
    return facts(destinations=(where,), fragments=(FragmentMatch("c0", "x" * 30, Transform.VERBATIM),), **kw)


def test_actions_rank_allow_confirm_review_deny() -> None:
    assert [a.value for a in sorted(Action, key=lambda a: a.rank)] == ["allow", "confirm", "review", "deny"]


@pytest.mark.parametrize("enforce", [False, True])
def test_the_policy_never_weakens_the_trifecta_answer(enforce: bool) -> None:
    plain = decide(Policy(enforce=enforce), attacker_send(reviewed=True, writes=True, approved=True))
    policed = decide(
        Policy(enforce=enforce, mode=PolicyMode.REVIEWED_ONLY), attacker_send(reviewed=True, writes=True, approved=True)
    )
    assert plain.action in (Action.CONFIRM, Action.DENY)
    assert policed.action is plain.action and policed.level is plain.level is Level.EXFILTRATION
    assert Reason.APPROVAL_USED in policed.reasons


def test_review_outranks_a_trifecta_confirm_and_a_deny_outranks_review() -> None:
    unreviewed = decide(REVIEWED_ONLY, attacker_send(reviewed=False, writes=False))
    assert unreviewed.action is Action.REVIEW
    assert {Reason.DESTINATION_ATTACKER_SUGGESTED, Reason.TOOL_UNREVIEWED} <= set(unreviewed.reasons)
    denied = decide(Policy(enforce=True, mode=PolicyMode.REVIEWED_ONLY), attacker_send(reviewed=False, writes=False))
    assert denied.action is Action.DENY


def test_out_of_scope_denies_whatever_else_holds() -> None:
    decision = decide(
        REVIEWED_ONLY, facts(legs_call=frozenset(), reviewed=True, writes=False, outside_scope=("tool a/b",))
    )
    assert decision.action is Action.DENY and decision.reasons[-1] is Reason.OUT_OF_SCOPE
    assert [e.detail for e in decision.evidence] == ["tool a/b"]


def test_a_reviewed_read_keeps_the_trifecta_answer_and_its_reasons() -> None:
    read = facts(legs_call=frozenset(), reviewed=True, writes=False)
    assert decide(REVIEWED_ONLY, read) == decide(Policy(), read)


def test_a_reconcile_is_not_lifted_by_an_approval() -> None:
    decision = decide(REVIEWED_ONLY, facts(legs_call=frozenset(), reviewed=True, approved=True, retry_of="c0"))
    assert decision.action is Action.CONFIRM
    assert decision.reasons[-2:] == (Reason.APPROVAL_USED, Reason.RECONCILE)
