"""The decision table of docs/decisions.md as data: what an external call made while armed carries and to whom
(:class:`CallView`), the findings reported whenever they hold, and the verdicts, the first of which decides."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from monitor.decide._facts import CallFacts
from monitor.models import Action, DestinationKind, FragmentMatch, LabelledDestination, Origin, Reason, Transform

_SANCTIONED_REASON = {
    Origin.USER: Reason.DESTINATION_USER_SANCTIONED,
    Origin.ALLOWLIST: Reason.DESTINATION_ALLOWLISTED,
    Origin.LISTING: Reason.DESTINATION_FROM_LISTING,
    Origin.PRIVATE_TEXT: Reason.DESTINATION_FROM_PRIVATE_CONTENT,
    Origin.DELEGATED: Reason.DESTINATION_USER_DELEGATED,
}
# Destinations the user chose in words (typed, allowlisted, delegated), as opposed to ones a listing showed.
_CHOSEN = frozenset({Origin.USER, Origin.ALLOWLIST, Origin.DELEGATED})
# Recipients that are the user's own (typed, allowlisted, listed among the user's things): beside them, content may
# go back to the server it came from.
_OWN = frozenset({Origin.USER, Origin.ALLOWLIST, Origin.LISTING})
# Destinations the user named (typed or allowlisted): the only hosts private content may ride to in an image.
_NAMED = frozenset({Origin.USER, Origin.ALLOWLIST})
# Origins that rest on where content showed a destination: content a bound left unexamined could change them.
_SEEN_IN_CONTENT = frozenset({Origin.LISTING, Origin.PRIVATE_TEXT, Origin.DELEGATED, Origin.UNSEEN})


@dataclass(frozen=True)
class CallView:
    """What the decision table reads of one external call made while armed: its recipients, who chose each, and
    what it carries (docs/decisions.md)."""

    facts: CallFacts
    keyed: Sequence[LabelledDestination]
    """Named recipients: destinations under a destination argument."""
    attacker: Sequence[LabelledDestination]
    lookalike: Sequence[LabelledDestination]
    unseen: Sequence[LabelledDestination]
    targets: Sequence[LabelledDestination]
    """With no named recipient: the places the call writes to."""
    fragments: Sequence[FragmentMatch]
    """Private content the call carries to someone outside its readers (content returned to its origin left out)."""
    returned: Sequence[FragmentMatch]
    """Private content the call only hands back to the server it came from."""
    strong: Sequence[FragmentMatch]
    unasked: Sequence[FragmentMatch]
    embedded_leak: Sequence[LabelledDestination]
    secrets: bool
    beyond_delegation: bool
    nothing_new: bool
    foreign_target: bool


def view_call(facts: CallFacts) -> CallView:
    """Return what the decision table reads of an external call made while armed: its recipients, who chose
    each, and the private content it carries to someone outside its readers."""
    route, cargo, intent = facts.route, facts.cargo, facts.intent
    # Addresses found only inside content (not under a destination argument) can show the attacker's hand,
    # but they neither sanction the call nor make it unreadable-destination-free.
    keyed = [d for d in route.destinations if d.destination.keyed]
    targets = [] if keyed else list(route.targets)
    # A place named only by untrusted content (or imitating one of the user's) is never the user's own.
    foreign_target = any(d.origin in (Origin.ATTACKER, Origin.LOOKALIKE) for d in targets)
    # With no recipient but the server, the user's own and parties of the user's records (no other named
    # destination, no place others read, no image host, no place written but the user's own), content that
    # server returned goes back where it came from (the engine names which sources may, in returned_sources).
    only_server = (
        all(d.origin in _OWN or d.origin is Origin.PRIVATE_TEXT for d in keyed)
        and not route.shared_place
        and not route.embedded
        and all(_is_own_place(d) for d in targets)
        and facts.request.arguments_available
    )
    returned = [
        f
        for f in cargo.fragments
        if only_server and f.from_call in cargo.returned_sources and f.transform is not Transform.FILE
    ]
    fragments = [f for f in cargo.fragments if f not in returned]
    # Private content the user did not ask for: read by a call whose target untrusted content chose, or
    # put where outsiders read (naming a public place does not ask for private data to be published there).
    unasked = [
        f
        for f in fragments
        if f.from_call in cargo.steered_sources or (route.shared_place and f.from_call not in intent.asked_sources)
    ]
    # Private content in a URL that rendering the content fetches goes to that URL's host, wherever the content
    # is posted: only a host the user named may receive it.
    embedded_leak = [d for d in route.embedded if d.origin not in _NAMED] if cargo.embedded_fragments else []
    # A secret leaves for a named recipient or a place others read only when the user's words speak of one.
    secret_carried = any(
        f.from_call in cargo.secret_sources and f.transform is not Transform.PARAPHRASE for f in fragments
    )
    # (A recipient untrusted content or nobody chose is stopped by an earlier row; one a listing of the user's own
    # things showed, such as the account's own address, is where the service sends its codes.)
    secrets = (
        secret_carried and (route.shared_place or any(d.origin in _CHOSEN for d in keyed)) and not intent.secret_asked
    )
    # A delegated recipient gets what comes from a place the user named, nothing from elsewhere.
    delegated = any(d.origin is Origin.DELEGATED for d in keyed)
    beyond_delegation = delegated and any(
        f.from_call not in intent.delegate_sources
        and f.transform is not Transform.PARAPHRASE
        and f.text not in intent.delegable
        for f in fragments
    )
    return CallView(
        facts=facts,
        keyed=keyed,
        attacker=[d for d in route.destinations if d.origin is Origin.ATTACKER],
        lookalike=[d for d in route.destinations if d.origin is Origin.LOOKALIKE],
        unseen=[d for d in keyed if d.origin is Origin.UNSEEN],
        targets=targets,
        fragments=fragments,
        returned=returned,
        # Paraphrase is weak evidence: it tells on a send somewhere suspect, not on a send with no readable address.
        strong=[f for f in fragments if f.transform is not Transform.PARAPHRASE],
        unasked=unasked,
        embedded_leak=embedded_leak,
        secrets=secrets,
        beyond_delegation=beyond_delegation,
        # A fetch of a URL exactly as the session saw it, with nothing else that can carry data, tells whoever
        # wrote that URL nothing they did not have.
        nothing_new=route.nothing_new
        and not fragments
        and not any(d.origin is Origin.LOOKALIKE for d in route.destinations),
        foreign_target=foreign_target,
    )


def _add_no_reason(view: CallView) -> tuple[Reason, ...]:
    """No reason code of the row's own: the findings say why."""
    return ()


@dataclass(frozen=True)
class Finding:
    """A row of the decision table's first part: something a call carries or a recipient it has, named by its
    reason code whenever it holds (docs/decisions.md)."""

    reason: Reason
    holds: Callable[[CallView], bool]


@dataclass(frozen=True)
class Verdict:
    """A row of the decision table's second part: the first row that holds decides the action; its reasons
    join the findings' (docs/decisions.md)."""

    id: str
    holds: Callable[[CallView], bool]
    action: Action
    reasons: Callable[[CallView], tuple[Reason, ...]] = _add_no_reason
    """The reason codes the row adds when it decides (by default none: the findings say why)."""


FINDINGS: tuple[Finding, ...] = (
    Finding(Reason.DESTINATION_ATTACKER_SUGGESTED, lambda v: bool(v.attacker)),
    Finding(Reason.DESTINATION_LOOKALIKE, lambda v: bool(v.lookalike)),
    Finding(Reason.DESTINATION_UNSEEN, lambda v: bool(v.unseen)),
    Finding(
        Reason.PRIVATE_FRAGMENT,
        lambda v: any(f.transform not in (Transform.PARAPHRASE, Transform.FILE) for f in v.fragments),
    ),
    Finding(Reason.PRIVATE_PARAPHRASE, lambda v: any(f.transform is Transform.PARAPHRASE for f in v.fragments)),
    Finding(Reason.PRIVATE_FILE_SENT, lambda v: any(f.transform is Transform.FILE for f in v.fragments)),
    Finding(
        Reason.PRIVATE_SOURCE_STEERED, lambda v: any(f.from_call in v.facts.cargo.steered_sources for f in v.unasked)
    ),
    Finding(Reason.PRIVATE_TO_SHARED_PLACE, lambda v: bool(v.unasked) and v.facts.route.shared_place),
    Finding(Reason.PRIVATE_IN_EMBEDDED_URL, lambda v: bool(v.embedded_leak)),
    Finding(Reason.ARGUMENTS_UNAVAILABLE, lambda v: not v.facts.request.arguments_available),
)
"""What the decision reports about an external call made while armed, in this order."""

VERDICTS: tuple[Verdict, ...] = (
    Verdict(
        "recipient-not-the-users",
        lambda v: (
            bool(v.lookalike or v.unasked or v.embedded_leak)
            # A recipient untrusted content chose gets anything more than a URL copied as it was seen; one nobody
            # chose, private content, text the agent wrote (which can restate it where no evidence tells) or money.
            or (bool(v.attacker) and not v.nothing_new)
            or (bool(v.unseen) and not v.nothing_new and (bool(v.fragments) or v.facts.cargo.composed))
        ),
        Action.CONFIRM,
    ),
    # A URL fetched exactly as the session saw it, or a recipient nobody chose sent only identifiers the session
    # listed and what the user typed: the request tells its recipient nothing private.
    Verdict(
        "carries-nothing-new",
        lambda v: bool(v.attacker or v.unseen),
        Action.ALLOW,
        lambda _: (Reason.REQUEST_CARRIES_NOTHING_NEW,),
    ),
    Verdict("secret-leaves", lambda v: v.secrets, Action.CONFIRM, lambda _: (Reason.SECRET_TO_RECIPIENT,)),
    Verdict(
        "beyond-delegation",
        lambda v: v.beyond_delegation,
        Action.CONFIRM,
        lambda _: (Reason.PRIVATE_BEYOND_DELEGATION,),
    ),
    Verdict(
        "unrequested-send",
        # Nobody asked for a call of this kind, and it carries private content: the destination being one the
        # session listed does not make the call the user's.
        lambda v: (
            bool(v.keyed and v.fragments)
            and not v.facts.intent.action_asked
            and not any(d.origin in _CHOSEN for d in v.keyed)
        ),
        Action.CONFIRM,
        lambda _: (Reason.PRIVATE_IN_UNREQUESTED_SEND,),
    ),
    Verdict(
        "recipients-sanctioned",
        lambda v: bool(v.keyed),
        Action.ALLOW,
        lambda v: tuple(dict.fromkeys(_SANCTIONED_REASON[d.origin] for d in v.keyed)),
    ),
    Verdict(
        "own-places",
        lambda v: bool(v.targets) and all(_is_own_place(d) for d in v.targets) and not v.foreign_target,
        Action.ALLOW,
        lambda v: tuple(dict.fromkeys(_target_reason(d) for d in v.targets)),
    ),
    Verdict(
        "own-store",
        lambda v: v.facts.route.own_store and v.facts.request.arguments_available and not v.foreign_target,
        Action.ALLOW,
        lambda _: (Reason.DESTINATION_OWN_ACCOUNT,),
    ),
    Verdict(
        "returned-to-origin",
        lambda v: bool(v.returned) and not v.strong,
        Action.ALLOW,
        lambda _: (Reason.RETURNED_TO_ORIGIN,),
    ),
    Verdict("carries-private", lambda v: bool(v.strong) or not v.facts.request.arguments_available, Action.CONFIRM),
    Verdict(
        "carries-nothing", lambda _: True, Action.ALLOW, lambda _: (Reason.NO_DESTINATION, Reason.NO_PRIVATE_FRAGMENT)
    ),
)
"""How an external call made while armed is decided: the first row that holds."""


def is_exfiltration(v: CallView) -> bool:
    """Private content leaves for someone nobody but the attacker chose, or the attacker chose what to read."""
    return (
        bool(v.attacker and not v.nothing_new)
        or bool(v.lookalike)
        or bool(v.unasked)
        or bool(v.embedded_leak)
        or (bool(v.fragments) and bool(v.unseen))
        or (bool(v.strong) and not v.keyed)
        or v.secrets
        or v.beyond_delegation
    )


def _is_own_place(target: LabelledDestination) -> bool:
    if target.destination.kind is DestinationKind.PATH:
        return True
    return target.origin in _SANCTIONED_REASON


def _target_reason(target: LabelledDestination) -> Reason:
    if target.destination.kind is DestinationKind.PATH:
        return Reason.DESTINATION_LOCAL
    return _SANCTIONED_REASON[target.origin]


def find_verdict(facts: CallFacts) -> Verdict:
    """Return the row of :data:`VERDICTS` that decides an external call made while armed (the first that holds)."""
    view = view_call(facts)
    return next(row for row in VERDICTS if row.holds(view))
