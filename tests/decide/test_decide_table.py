"""The decision table of docs/decisions.md: every reason code is a row there, every row of ``monitor.decide`` is
documented, and each verdict row decides as written (one set of facts per row, that row the first to hold)."""

import re
from pathlib import Path

import pytest
from support.decide_facts import make_armed_send

from monitor.decide import FINDINGS, VERDICTS, CallFacts, Policy, decide, find_verdict
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
TABLE = (Path(__file__).resolve().parents[2] / "docs" / "decisions.md").read_text(encoding="utf-8")
FRAGMENT = FragmentMatch("c0", "quarterly numbers 4471 for the board", Transform.VERBATIM)
SECRET = FragmentMatch("c0", "hunter2-horse", Transform.SECRET)


def facts(**kw: object) -> CallFacts:
    return make_armed_send(**kw)


def dest(
    origin: Origin, kind: DestinationKind = DestinationKind.EMAIL, value: str = "a@b.example"
) -> LabelledDestination:
    return LabelledDestination(Destination(kind, value, "/to"), origin, "c0")


def target(origin: Origin) -> LabelledDestination:
    return LabelledDestination(Destination(DestinationKind.NAME, "doc-7", "/doc"), origin, "c0")


def test_every_reason_code_is_a_row_of_the_table() -> None:
    documented = set(re.findall(r"`([a-z][a-z0-9-]+)`", TABLE))
    assert {r.value for r in Reason} - documented == set()


def test_every_row_of_the_code_is_in_the_table() -> None:
    rows = set(re.findall(r"^\| `([a-z-]+)` \|", TABLE, flags=re.MULTILINE))
    assert {v.id for v in VERDICTS} <= rows
    assert {f.reason.value for f in FINDINGS} <= rows


# Per verdict row: facts for which it is the first row to hold, the action and the reasons it adds.
ROWS = {
    "recipient-not-the-users": (facts(destinations=(dest(Origin.ATTACKER),), composed=True), Action.CONFIRM, ()),
    "carries-nothing-new": (
        facts(destinations=(dest(Origin.UNSEEN),), composed=False),
        Action.ALLOW,
        (Reason.REQUEST_CARRIES_NOTHING_NEW,),
    ),
    "secret-leaves": (
        facts(destinations=(dest(Origin.USER),), fragments=(SECRET,), secret_sources=frozenset({"c0"})),
        Action.CONFIRM,
        (Reason.SECRET_TO_RECIPIENT,),
    ),
    "beyond-delegation": (
        facts(destinations=(dest(Origin.DELEGATED),), fragments=(FRAGMENT,)),
        Action.CONFIRM,
        (Reason.PRIVATE_BEYOND_DELEGATION,),
    ),
    "unrequested-send": (
        facts(destinations=(dest(Origin.LISTING),), fragments=(FRAGMENT,), action_asked=False),
        Action.CONFIRM,
        (Reason.PRIVATE_IN_UNREQUESTED_SEND,),
    ),
    "recipients-sanctioned": (
        facts(destinations=(dest(Origin.LISTING),), fragments=(FRAGMENT,)),
        Action.ALLOW,
        (Reason.DESTINATION_FROM_LISTING,),
    ),
    "own-places": (
        facts(targets=(target(Origin.USER),), fragments=(FRAGMENT,)),
        Action.ALLOW,
        (Reason.DESTINATION_USER_SANCTIONED,),
    ),
    "own-store": (
        facts(targets=(target(Origin.UNSEEN),), fragments=(FRAGMENT,), own_store=True),
        Action.ALLOW,
        (Reason.DESTINATION_OWN_ACCOUNT,),
    ),
    "returned-to-origin": (
        facts(fragments=(FRAGMENT,), returned_sources=frozenset({"c0"})),
        Action.ALLOW,
        (Reason.RETURNED_TO_ORIGIN,),
    ),
    "carries-private": (facts(fragments=(FRAGMENT,)), Action.CONFIRM, ()),
    "carries-nothing": (facts(), Action.ALLOW, (Reason.NO_DESTINATION, Reason.NO_PRIVATE_FRAGMENT)),
}


def test_every_verdict_row_has_its_case() -> None:
    assert set(ROWS) == {v.id for v in VERDICTS}


@pytest.mark.parametrize("row", sorted(ROWS))
def test_each_verdict_row_decides_as_the_table_says(row: str) -> None:
    f, action, added = ROWS[row]
    d = decide(Policy(), f)
    assert d.action is action, (row, d.reasons)
    assert d.reasons[len(d.reasons) - len(added) :] == added, (row, d.reasons)
    # The row is the first that holds: the rows before it do not.
    assert find_verdict(f).id == row


def test_content_going_back_to_its_origin_is_no_leak_but_the_same_content_elsewhere_is() -> None:
    back = decide(Policy(), facts(fragments=(FRAGMENT,), returned_sources=frozenset({"c0"})))
    assert back.action is Action.ALLOW and back.level is Level.TRIFECTA
    # The same content with a recipient beside the server: not a return.
    elsewhere = facts(fragments=(FRAGMENT,), returned_sources=frozenset({"c0"}), destinations=(dest(Origin.UNSEEN),))
    assert decide(Policy(), elsewhere).action is Action.CONFIRM
    # ... nor to a place others read.
    shared = facts(fragments=(FRAGMENT,), returned_sources=frozenset({"c0"}), shared_place=True)
    assert decide(Policy(), shared).action is Action.CONFIRM


def test_a_secret_the_user_asked_to_send_goes_to_the_users_recipient() -> None:
    asked = facts(
        destinations=(dest(Origin.USER),), fragments=(SECRET,), secret_sources=frozenset({"c0"}), secret_asked=True
    )
    assert decide(Policy(), asked).action is Action.ALLOW
    # A listed recipient (the account's own address a code is mailed to) is not the secret row's.
    listed = facts(destinations=(dest(Origin.LISTING),), fragments=(SECRET,), secret_sources=frozenset({"c0"}))
    assert Reason.SECRET_TO_RECIPIENT not in decide(Policy(), listed).reasons


def test_delegation_covers_what_comes_from_the_place_pointed_at() -> None:
    pointed = facts(destinations=(dest(Origin.DELEGATED),), fragments=(FRAGMENT,), delegate_sources=frozenset({"c0"}))
    d = decide(Policy(), pointed)
    assert d.action is Action.ALLOW and d.reasons[-1] is Reason.DESTINATION_USER_DELEGATED


def test_an_unseen_recipient_of_composed_text_is_asked_about_and_of_identifiers_is_not() -> None:
    assert decide(Policy(), facts(destinations=(dest(Origin.UNSEEN),), composed=True)).action is Action.CONFIRM
    assert decide(Policy(), facts(destinations=(dest(Origin.UNSEEN),), composed=False)).action is Action.ALLOW
    # What a bound left unexamined may have named it: then it is asked about.
    cut = facts(
        destinations=(dest(Origin.UNSEEN),), composed=False, unexamined=frozenset({U}), unexamined_sources=("c0",)
    )
    assert decide(Policy(), cut).action is Action.CONFIRM


def test_a_delegated_recipient_gets_what_comes_from_a_place_the_user_named_and_names_of_things() -> None:
    """Beyond delegation: content from a place the user named by a value they typed (a delegate source) may go to
    the delegated recipient; content of a place where the recipient was only found ("her address is in my inbox")
    may not; a name the session listed, sent whole (an identifier), may."""
    delegated = (dest(Origin.DELEGATED),)
    assert find_verdict(facts(destinations=delegated, fragments=(FRAGMENT,))).id == "beyond-delegation"
    found_there = facts(destinations=delegated, fragments=(FRAGMENT,), asked_sources=frozenset({"c0"}))
    assert find_verdict(found_there).id == "beyond-delegation"
    named_place = facts(destinations=delegated, fragments=(FRAGMENT,), delegate_sources=frozenset({"c0"}))
    assert find_verdict(named_place).id == "recipients-sanctioned"
    identifier = facts(destinations=delegated, fragments=(FRAGMENT,), delegable=frozenset({FRAGMENT.text}))
    assert find_verdict(identifier).id == "recipients-sanctioned"
