"""The decision policy's rules that mutation testing of ``monitor/decide.py`` found unpinned (docs/testing.md).

Each test names the rule it pins: what a host or a security reviewer reads in a decision (its action, level,
reasons, evidence and rule ids) for facts that reach that rule and no other.
"""

from __future__ import annotations

from typing import Any

from support.decide_facts import make_armed_send

from monitor.clients import Client
from monitor.decide import CallFacts, Policy, decide, decide_on_monitor_error
from monitor.models import (
    Action,
    Destination,
    DestinationKind,
    Effect,
    EvidenceKind,
    FragmentMatch,
    LabelledDestination,
    Leg,
    Level,
    Origin,
    Reason,
    Transform,
)

P, U, X = Leg.PRIVATE_DATA, Leg.UNTRUSTED_CONTENT, Leg.EXTERNAL_COMMUNICATION
SECRET = "Your security code is 463820"


def armed_send(**fields: Any) -> CallFacts:
    """An external call made while private data and untrusted content are in the context."""
    return make_armed_send(**{"call_id": "c9", **fields})


def to(origin: Origin, value: str = "bob@corp.example") -> LabelledDestination:
    """A recipient under ``/to`` of the given origin."""
    return LabelledDestination(Destination(DestinationKind.EMAIL, value, "/to"), origin, "c1")


def fragment(source: str = "c2", text: str = SECRET, transform: Transform = Transform.VERBATIM) -> FragmentMatch:
    """Private content of call ``source`` found in the arguments."""
    return FragmentMatch(source, text, transform)


# -- the fail-safe answer ------------------------------------------------------------------------------------------


def test_a_monitor_failure_answers_confirm_for_the_hosts_call_id() -> None:
    decision = decide_on_monitor_error("toolu_01")
    assert (decision.call_id, decision.action, decision.reasons) == (
        "toolu_01",
        Action.CONFIRM,
        (Reason.MONITOR_ERROR,),
    )


def test_a_monitor_failure_on_a_call_without_id_names_it_unknown() -> None:
    assert decide_on_monitor_error(None).call_id == "unknown"
    assert decide_on_monitor_error("").call_id == "unknown"


# -- the baseline client: the stricter action wins -----------------------------------------------------------------


def test_a_baseline_client_that_asks_never_weakens_a_deny() -> None:
    """Enforce mode denies an exfiltration to the attacker; Claude's profile only asks: the deny stands."""
    facts = armed_send(destinations=(to(Origin.ATTACKER, "attacker@evil.example"),))
    decision = decide(Policy(enforce=True, baseline=Client.CLAUDE), facts)
    assert decision.action is Action.DENY
    assert decision.monitor_action is Action.DENY
    assert decision.reasons[-1] is Reason.BASELINE_ASKS


# -- exfiltration: look-alike destinations and private content nobody asked for ------------------------------------


def test_a_lookalike_destination_alone_is_an_exfiltration_and_denied_in_enforce_mode() -> None:
    facts = armed_send(destinations=(to(Origin.LOOKALIKE, "bob@corp-example.com"),))
    observed = decide(Policy(), facts)
    assert (observed.action, observed.level) == (Action.CONFIRM, Level.EXFILTRATION)
    assert observed.reasons == (Reason.DESTINATION_LOOKALIKE,)
    enforced = decide(Policy(enforce=True), facts)
    assert (enforced.action, enforced.level) == (Action.DENY, Level.EXFILTRATION)
    assert Reason.ENFORCED in enforced.reasons


def test_private_content_from_a_steered_read_is_an_exfiltration_even_to_the_users_recipient() -> None:
    facts = armed_send(destinations=(to(Origin.USER),), fragments=(fragment("c2"),), steered_sources=frozenset({"c2"}))
    decision = decide(Policy(), facts)
    assert (decision.action, decision.level) == (Action.CONFIRM, Level.EXFILTRATION)
    assert Reason.PRIVATE_SOURCE_STEERED in decision.reasons
    # The recipient is the user's own choice and no place outsiders read: nothing is put in a shared place.
    assert Reason.PRIVATE_TO_SHARED_PLACE not in decision.reasons


def test_a_shared_place_with_nothing_private_sent_is_not_private_to_a_shared_place() -> None:
    facts = armed_send(destinations=(to(Origin.USER),), shared_place=True)
    decision = decide(Policy(), facts)
    assert decision.action is Action.ALLOW
    assert Reason.PRIVATE_TO_SHARED_PLACE not in decision.reasons


# -- reasons and evidence as a reviewer reads them ----------------------------------------------------------------


def test_verbatim_private_content_is_not_called_a_paraphrase() -> None:
    decision = decide(Policy(), armed_send(destinations=(to(Origin.UNSEEN),), fragments=(fragment(),)))
    assert Reason.PRIVATE_FRAGMENT in decision.reasons
    assert Reason.PRIVATE_PARAPHRASE not in decision.reasons


def test_fragment_evidence_quotes_at_most_200_characters() -> None:
    text = "".join(f"{i:03d}" for i in range(100))  # 300 characters
    decision = decide(Policy(), armed_send(destinations=(to(Origin.UNSEEN),), fragments=(fragment(text=text),)))
    [evidence] = [e for e in decision.evidence if e.kind is EvidenceKind.FRAGMENT]
    assert evidence.detail == f"{text[:200]} (verbatim)"
    assert evidence.from_call == "c2"


def test_the_decision_carries_the_rules_that_classified_the_call() -> None:
    rule = "5b0f3b8e-2f7c-4c55-9d7e-3f1c0a6e9b21:send_email"
    assert decide(Policy(), armed_send(rule_ids=(rule,))).rule_ids == (rule,)


# -- steered actions -----------------------------------------------------------------------------------------------


def steered(**fields: Any) -> CallFacts:
    """A destructive and privileged call whose target untrusted content (call c3) chose."""
    target = "/home/user/" + "a" * 250
    base: dict[str, Any] = {
        "legs_call": frozenset({U}),
        "effects": frozenset({Effect.PRIVILEGED, Effect.DESTRUCTIVE}),
        "steered_by": (target, "c3"),
    }
    return armed_send(**{**base, **fields})


def test_a_steered_action_names_the_value_and_the_call_that_chose_it() -> None:
    decision = decide(Policy(), steered())
    assert decision.action is Action.CONFIRM
    assert decision.reasons[-1] is Reason.STEERED_ACTION
    [evidence] = [e for e in decision.evidence if e.kind is EvidenceKind.STEERING]
    assert evidence.from_call == "c3"
    assert evidence.detail == f"{('/home/user/' + 'a' * 250)[:200]} (destructive, privileged)"


def test_a_steered_action_never_weakens_a_deny() -> None:
    facts = steered(legs_call=frozenset({X}), destinations=(to(Origin.ATTACKER, "attacker@evil.example"),))
    decision = decide(Policy(enforce=True), facts)
    assert decision.action is Action.DENY
    assert Reason.STEERED_ACTION in decision.reasons and Reason.ENFORCED in decision.reasons


# -- what a bound left unexamined (evidence-truncated) -----------------------------------------------------------


def test_a_call_confirmed_on_its_own_evidence_does_not_also_cite_what_was_not_examined() -> None:
    """A call already confirmed on what was read keeps its own reasons: unexamined content adds nothing to it."""
    d = decide(Policy(), armed_send(arguments_available=False, unexamined=frozenset({P}), unexamined_sources=("c2",)))
    assert (d.action, d.level) == (Action.CONFIRM, Level.TRIFECTA)
    assert d.reasons == (Reason.ARGUMENTS_UNAVAILABLE,)
    assert [e.kind for e in d.evidence] == []


def test_unexamined_content_is_described_by_the_legs_it_may_carry() -> None:
    """The evidence names the call whose result was cut short and what that content may carry."""
    sends = {
        frozenset({P}): "the result of c2 (private data) was not fully examined",
        frozenset({P, U}): "the result of c2 (private data, untrusted content) was not fully examined",
    }
    for legs, detail in sends.items():
        d = decide(Policy(), armed_send(unexamined=legs, unexamined_sources=("c2",)))
        assert d.reasons == (Reason.NO_DESTINATION, Reason.NO_PRIVATE_FRAGMENT, Reason.EVIDENCE_TRUNCATED)
        assert [(e.kind, e.from_call, e.detail) for e in d.evidence] == [(EvidenceKind.UNEXAMINED, "c2", detail)]
    listed = armed_send(destinations=(to(Origin.LISTING),), unexamined=frozenset({U}), unexamined_sources=("c2",))
    d = decide(Policy(), listed)
    assert d.action is Action.CONFIRM
    assert d.evidence[-1].detail == "the result of c2 (untrusted content) was not fully examined"


def test_content_the_index_dropped_names_no_call() -> None:
    """Facts that name no cut source (content the session's index dropped) give evidence that names no call."""
    for sources in ((), ("",)):
        d = decide(Policy(), armed_send(unexamined=frozenset({P}), unexamined_sources=sources))
        assert d.action is Action.CONFIRM
        [evidence] = d.evidence
        assert evidence.from_call is None
        assert evidence.detail == "content (private data) the session's evidence index dropped"


def test_a_place_only_a_listing_named_counts_as_the_attackers_when_untrusted_content_was_not_examined() -> None:
    """A write into a place a listing showed, carrying private content, is allowed when everything was read; when
    untrusted content was cut short, its unread part may have named that place: the call is confirmed."""
    place = LabelledDestination(Destination(DestinationKind.NAME, "general", "/channel"), Origin.LISTING, "c1")
    read = armed_send(targets=(place,), fragments=(fragment(),))
    assert decide(Policy(), read).action is Action.ALLOW
    for sources in (("c3",), ("c3", "c4")):
        cut = armed_send(
            targets=(place,), fragments=(fragment(),), unexamined=frozenset({U}), unexamined_sources=sources
        )
        d = decide(Policy(), cut)
        assert d.action is Action.CONFIRM
        assert Reason.EVIDENCE_TRUNCATED in d.reasons
        assert [e.from_call for e in d.evidence if e.kind is EvidenceKind.UNEXAMINED] == list(sources)
