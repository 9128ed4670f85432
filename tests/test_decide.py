from pathlib import Path

from monitor.decide import CallFacts, Policy, decide
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
from monitor.session import level_of_legs

P, U, X = Leg.PRIVATE_DATA, Leg.UNTRUSTED_CONTENT, Leg.EXTERNAL_COMMUNICATION


def facts(**kw) -> CallFacts:
    base = dict(
        call_id="c",
        legs_before=frozenset({P, U}),
        legs_call=frozenset({X}),
        rule_ids=(),
        arguments_available=True,
        destinations=(),
        fragments=(),
    )
    base.update(kw)
    base.setdefault("level_before", level_of_legs(base["legs_before"]))
    return CallFacts(**base)


def dest(origin: Origin) -> LabelledDestination:
    return LabelledDestination(Destination(DestinationKind.EMAIL, "a@b.example", "/to"), origin, "c0")


def test_decisions_are_pure() -> None:
    f = facts(destinations=(dest(Origin.ATTACKER),))
    assert decide(Policy(), f) == decide(Policy(), f)


def test_policy_table() -> None:
    cases = [
        (facts(legs_call=frozenset({P})), Action.ALLOW, Level.ARMED),
        (facts(legs_before=frozenset({P})), Action.ALLOW, Level.PARTIAL),
        (facts(destinations=(dest(Origin.USER),)), Action.ALLOW, Level.TRIFECTA),
        (facts(destinations=(dest(Origin.LISTING),)), Action.ALLOW, Level.TRIFECTA),
        (
            facts(destinations=(dest(Origin.USER),), fragments=(FragmentMatch("c0", "x" * 30, Transform.VERBATIM),)),
            Action.ALLOW,
            Level.TRIFECTA,
        ),
        (facts(destinations=(dest(Origin.UNSEEN),)), Action.CONFIRM, Level.TRIFECTA),
        (
            facts(destinations=(dest(Origin.UNSEEN),), fragments=(FragmentMatch("c0", "x" * 30, Transform.VERBATIM),)),
            Action.CONFIRM,
            Level.EXFILTRATION,
        ),
        (facts(destinations=(dest(Origin.ATTACKER),)), Action.CONFIRM, Level.EXFILTRATION),
        (facts(fragments=(FragmentMatch("c0", "x" * 30, Transform.VERBATIM),)), Action.CONFIRM, Level.EXFILTRATION),
        (facts(arguments_available=False), Action.CONFIRM, Level.TRIFECTA),
        (facts(), Action.ALLOW, Level.TRIFECTA),
    ]
    for f, action, level in cases:
        d = decide(Policy(), f)
        assert (d.action, d.level) == (action, level), f


def test_enforce_denies_only_attacker_exfiltration() -> None:
    assert decide(Policy(enforce=True), facts(destinations=(dest(Origin.ATTACKER),))).action is Action.DENY
    assert decide(Policy(enforce=True), facts(destinations=(dest(Origin.UNSEEN),))).action is Action.CONFIRM


def test_reasons_and_evidence() -> None:
    d = decide(Policy(), facts(destinations=(dest(Origin.ATTACKER),)))
    assert d.reasons == (Reason.DESTINATION_ATTACKER_SUGGESTED,)
    assert d.evidence[0].detail == "a@b.example at /to: attacker-suggested"


def test_a_baseline_client_adds_its_own_confirmations_and_the_stricter_action_wins() -> None:
    from monitor.clients import Client
    from monitor.models._tools import ToolAnnotations

    read_only = ToolAnnotations(readOnlyHint=True)
    unhinted = facts(legs_call=frozenset({P}))
    d = decide(Policy(baseline=Client.CLAUDE), unhinted)
    assert d.action is Action.CONFIRM and d.monitor_action is Action.ALLOW
    assert d.reasons[-1] is Reason.BASELINE_ASKS
    assert decide(Policy(baseline=Client.CLAUDE), facts(legs_call=frozenset({P}), annotations=read_only)).action is (
        Action.ALLOW
    )
    gemini = decide(Policy(baseline=Client.GEMINI), unhinted)
    assert gemini.action is Action.DENY and Reason.BASELINE_BLOCKS in gemini.reasons
    # The monitor's own confirm stays when the client would run the tool.
    attacker = facts(destinations=(dest(Origin.ATTACKER),), annotations=read_only)
    assert decide(Policy(baseline=Client.VSCODE), attacker).action is Action.CONFIRM
    assert decide(Policy(baseline=Client.GOOSE), unhinted).action is Action.ALLOW  # left to the model


def test_analyze_with_a_baseline_compares_in_the_table() -> None:
    from click.testing import CliRunner

    from monitor.cli import main

    samples = Path(__file__).resolve().parents[1] / "samples" / "sessions"
    result = CliRunner().invoke(main, ["analyze", str(samples), "--baseline", "claude"])
    assert result.exit_code == 0, result.output
    assert "Claude alone would have asked before 12 of these calls; the monitor alone before 3" in result.output
