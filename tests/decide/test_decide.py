from pathlib import Path

from support.decide_facts import make_armed_send

from monitor.decide import CallFacts, Policy, decide
from monitor.models import (
    Action,
    Destination,
    DestinationKind,
    EvidenceKind,
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
    """An external call made while armed (``kw`` override, as :func:`make_armed_send` reads them); the level
    before the call is the one the legs before it give."""
    kw.setdefault("level_before", level_of_legs(kw.get("legs_before", frozenset({P, U}))))
    return make_armed_send(**kw)


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


def test_enforce_keeps_a_confirm_for_exfiltration_that_is_not_to_the_attackers_destination() -> None:
    """Enforce mode blocks only sends to where the attacker pointed; private content to a destination nobody
    has seen, or into a shared place, is an exfiltration that the user may still approve."""
    fragment = FragmentMatch("c0", "x" * 30, Transform.VERBATIM)
    unseen = decide(Policy(enforce=True), facts(destinations=(dest(Origin.UNSEEN),), fragments=(fragment,)))
    assert (unseen.action, unseen.level) == (Action.CONFIRM, Level.EXFILTRATION)
    assert Reason.ENFORCED not in unseen.reasons
    shared = decide(
        Policy(enforce=True), facts(destinations=(dest(Origin.USER),), fragments=(fragment,), shared_place=True)
    )
    assert (shared.action, shared.level) == (Action.CONFIRM, Level.EXFILTRATION)
    nowhere = decide(Policy(enforce=True), facts(fragments=(fragment,)))
    assert (nowhere.action, nowhere.level) == (Action.CONFIRM, Level.EXFILTRATION)
    lookalike = decide(Policy(enforce=True), facts(destinations=(dest(Origin.LOOKALIKE),)))
    assert lookalike.action is Action.DENY


def test_what_was_not_examined_counts_against_the_call() -> None:
    """evidence-truncated: content a bound cut short is treated as if it held what would stop the call."""
    private = {"unexamined": frozenset({P}), "unexamined_sources": ("c9",)}
    untrusted = {"unexamined": frozenset({U}), "unexamined_sources": ("c9",)}
    cases = [
        # No readable destination: the call may carry the private content nobody read.
        (facts(**private), Action.CONFIRM),
        # The user named the recipient: private content may go there, read or not.
        (facts(destinations=(dest(Origin.USER),), **private), Action.ALLOW),
        (facts(destinations=(dest(Origin.ALLOWLIST),), **private), Action.ALLOW),
        # ... unless it is a place outsiders read.
        (facts(destinations=(dest(Origin.USER),), shared_place=True, **private), Action.CONFIRM),
        # A destination only a listing showed, in a send nobody asked for.
        (facts(destinations=(dest(Origin.LISTING),), action_asked=False, **private), Action.CONFIRM),
        (facts(destinations=(dest(Origin.LISTING),), **private), Action.ALLOW),
        # Untrusted text not read may be the attacker's mention of a listed or private-text destination.
        (facts(destinations=(dest(Origin.LISTING),), **untrusted), Action.CONFIRM),
        (facts(destinations=(dest(Origin.PRIVATE_TEXT),), **untrusted), Action.CONFIRM),
        (facts(destinations=(dest(Origin.DELEGATED),), **untrusted), Action.CONFIRM),
        (facts(destinations=(dest(Origin.USER),), **untrusted), Action.ALLOW),
        (facts(**untrusted), Action.ALLOW),
        # Not armed, or not a send: nothing to carry anywhere.
        (facts(legs_before=frozenset({P}), **private), Action.ALLOW),
        (facts(legs_call=frozenset({P}), **private), Action.ALLOW),
    ]
    for f, action in cases:
        d = decide(Policy(), f)
        assert d.action is action, f
        assert (Reason.EVIDENCE_TRUNCATED in d.reasons) is (action is Action.CONFIRM), f
    d = decide(Policy(), facts(**private))
    assert d.level is Level.TRIFECTA
    assert [(e.kind, e.from_call) for e in d.evidence] == [(EvidenceKind.UNEXAMINED, "c9")]
    # A source read at the attacker's suggestion: its unexamined content goes nowhere, even to the user's address.
    steered = facts(destinations=(dest(Origin.USER),), steered_sources=frozenset({"c9"}), **private)
    assert decide(Policy(), steered).action is Action.CONFIRM
    # The index dropped content: the same rule, with no call to name.
    dropped = decide(Policy(), facts(unexamined=frozenset({P, U}), unexamined_sources=("",)))
    assert dropped.action is Action.CONFIRM and dropped.evidence[0].from_call is None


def test_reasons_and_evidence() -> None:
    d = decide(Policy(), facts(destinations=(dest(Origin.ATTACKER),)))
    assert d.reasons == (Reason.DESTINATION_ATTACKER_SUGGESTED,)
    assert d.evidence[0].detail == "a@b.example at /to: attacker-suggested"


def test_a_baseline_client_adds_its_own_confirmations_and_the_stricter_action_wins() -> None:
    from monitor.clients import Client
    from monitor.models import ToolAnnotations

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

    samples = Path(__file__).resolve().parents[2] / "samples" / "sessions"
    result = CliRunner().invoke(main, ["analyze", str(samples), "--baseline", "claude"])
    assert result.exit_code == 0, result.output
    assert "Claude alone would have asked before 12 of these calls; the monitor alone before 3" in result.output


def image_host(origin: Origin) -> LabelledDestination:
    return LabelledDestination(Destination(DestinationKind.DOMAIN, "img.example", "/text", keyed=False), origin, "c0")


def test_private_content_in_an_image_url_goes_only_to_a_host_the_user_named() -> None:
    channel = LabelledDestination(Destination(DestinationKind.NAME, "c03eng", "/channel"), Origin.USER, None)
    leak = (FragmentMatch("c0", "x" * 30, Transform.URL),)

    def post(origin: Origin, fragments: tuple[FragmentMatch, ...] = leak, **kw: object):
        host = image_host(origin)
        return decide(
            Policy(),
            facts(destinations=(channel, host), fragments=leak, embedded=(host,), embedded_fragments=fragments, **kw),
        )

    for origin in (Origin.LISTING, Origin.PRIVATE_TEXT, Origin.DELEGATED, Origin.UNSEEN):
        d = post(origin)
        assert (d.action, d.level) == (Action.CONFIRM, Level.EXFILTRATION), origin
        assert Reason.PRIVATE_IN_EMBEDDED_URL in d.reasons
    for origin in (Origin.USER, Origin.ALLOWLIST):
        assert post(origin).action is Action.ALLOW, origin
    # An image URL that carries nothing private goes where it likes (the post's own text may be private).
    clean = post(Origin.UNSEEN, fragments=())
    assert clean.action is Action.ALLOW and Reason.PRIVATE_IN_EMBEDDED_URL not in clean.reasons
    # What a bound left unexamined may be in the image URL too.
    assert post(Origin.UNSEEN, fragments=(), unexamined=frozenset({P}), unexamined_sources=("c9",)).action is (
        Action.CONFIRM
    )
