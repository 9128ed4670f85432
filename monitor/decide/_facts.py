"""What the session engine gathers about a requested call for the policy: one :class:`CallFacts`, made of a few
groups, each read by its own part of the policy (docs/decisions.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from monitor.models import Effect, FragmentMatch, LabelledDestination, Leg, Level, ToolAnnotations


@dataclass(frozen=True)
class ContextFacts:
    """What the session's context holds before the call: its legs, the level they give, and what of it a bound
    left unexamined (read by the gates and by the ``evidence-truncated`` overlay)."""

    level: Level
    """The level the session's context gives before this call: clean, partial or armed."""
    legs: frozenset[Leg]
    """The legs in the session's context before this call."""
    unexamined: frozenset[Leg] = frozenset()
    """Legs (private data, untrusted content) whose content in the session a bound left partly unexamined."""
    unexamined_sources: tuple[str, ...] = ()
    """The calls whose results a bound cut short (``""``: content the session's index dropped)."""


@dataclass(frozen=True)
class RequestFacts:
    """What the call is: its legs and the rules that gave them, the tool's annotations, whether its arguments
    were examined, and what it does beyond moving data."""

    legs: frozenset[Leg]
    """The legs the classification gives the call itself."""
    rule_ids: tuple[str, ...]
    """The reviewed rules that decided the call's legs (none: no reviewed rule covers the tool)."""
    arguments_available: bool
    """The call's arguments were recorded and examined whole (no bound cut them)."""
    annotations: ToolAnnotations | None = None
    """The tool's annotations as listed in the session (for the baseline client profile)."""
    effects: frozenset[Effect] = frozenset()
    """What the call does beyond moving data (destructive, privileged, code execution)."""
    steered_by: tuple[str, str] | None = None
    """An argument value untrusted content chose, and the call whose content showed it (a steered action)."""


@dataclass(frozen=True)
class RouteFacts:
    """Where the call sends: its destinations labelled by who chose them, the places it writes to, the hosts that
    rendering its content fetches, and what kind of place it reaches."""

    destinations: Sequence[LabelledDestination] = ()
    """Every destination the call names, under a destination argument (keyed) or only inside its content."""
    targets: Sequence[LabelledDestination] = ()
    """For a call that names no recipient: the places it writes to (a file, a channel, a local path)."""
    embedded: Sequence[LabelledDestination] = ()
    """Hosts of URLs in the call's content that whoever renders it fetches (markdown images, HTML ``src``, CSS
    ``url()``), other than URLs the session saw whole; they are among ``destinations`` too."""
    shared_place: bool = False
    """The call's named destination is a place outsiders write to (and so can read)."""
    nothing_new: bool = False
    """Every destination is a URL the session saw verbatim and nothing else in the call can carry data (nothing
    long, no value another result showed)."""
    own_store: bool = False
    """The call names no recipient and writes one of the user's own things (a file, a note, an event)."""


@dataclass(frozen=True)
class CargoFacts:
    """What the call carries: the private content found in its arguments, and what is known of the calls that
    content came from."""

    fragments: Sequence[FragmentMatch] = ()
    """Private content found in the call's arguments (verbatim, encoded, split, paraphrased, files uploaded)."""
    embedded_fragments: Sequence[FragmentMatch] = ()
    """Private content inside the URLs of :attr:`RouteFacts.embedded` (their path, query or fragment)."""
    composed: bool = True
    """The call carries text the agent may have composed (a value longer than an identifier that the user did not
    type and the session never saw whole), which can restate private data where no evidence tells; or it moves
    money (a payment, an account as recipient)."""
    steered_sources: frozenset[str] = frozenset()
    """Calls (among the fragments' sources) whose arguments untrusted content suggested."""
    returned_sources: frozenset[str] = frozenset()
    """Calls (among the fragments' sources) made on the server this call goes to, when the call names no one else
    but the user's own and parties of the record the content came from: their content goes back to its origin."""
    secret_sources: frozenset[str] = frozenset()
    """Calls (among the fragments' sources) whose content the call carries a secret of (a password, a token, a
    key, a one-time code)."""


@dataclass(frozen=True)
class IntentFacts:
    """What the user's words ask for or allow: the content they asked to move, what a delegated recipient may
    get, and whether they asked for an action of this kind or spoke of a secret."""

    asked_sources: frozenset[str] = frozenset()
    """Calls whose content the user asked to move: places the user pointed at, and the destination place itself."""
    delegate_sources: frozenset[str] = frozenset()
    """Calls whose content a delegated recipient may get: places the user named by a value they typed, the
    destination place itself, and results that give their data under a label the user's words name; not a place of
    a kind the user's words name ("my inbox"), where the recipient was only found."""
    delegable: frozenset[str] = frozenset()
    """Fragments (their text) a delegated recipient may get wherever they came from: whole argument values the
    session listed (names of things: a repository, the user's address)."""
    action_asked: bool = True
    """The user's words ask for an action of this tool's kind (a send, an invitation, a payment, a booking)."""
    secret_asked: bool = False
    """The user's words speak of a secret: the user may have asked for one to be sent."""


@dataclass(frozen=True)
class ReviewFacts:
    """What the ``reviewed-only`` policy reads of the call (docs/policy.md); under any other policy the defaults
    stand and nothing reads them."""

    reviewed: bool = False
    """A reviewed rule covers the tool (its pin, if any, checked)."""
    writes: bool = True
    """The call writes (its reviewed rule, annotations or effects do not make it a read)."""
    approved: bool = False
    """An approval on record covers this tool and these arguments (the session uses it once the call is decided,
    unless it is denied)."""
    retry_of: str | None = None
    """An earlier identical write whose outcome is unknown, the tool declaring no retry contract."""
    outside_scope: tuple[str, ...] = ()
    """What of the call lies outside the session's scope."""
    review_requested: bool = False
    """The tool's action metadata asks for a person's confirmation (``requiresReview``)."""


@dataclass(frozen=True)
class CallFacts:
    """What the engine knows about a requested call, gathered from the session state: the one value
    :func:`~monitor.decide.decide` reads."""

    call_id: str
    context: ContextFacts
    """What the session's context holds before the call."""
    request: RequestFacts
    """What the call is."""
    route: RouteFacts = field(default_factory=RouteFacts)
    """Where the call sends (nowhere, by default)."""
    cargo: CargoFacts = field(default_factory=CargoFacts)
    """What the call carries (no private content, by default)."""
    intent: IntentFacts = field(default_factory=IntentFacts)
    """What the user's words ask for or allow."""
    review: ReviewFacts = field(default_factory=ReviewFacts)
    """What the ``reviewed-only`` policy reads."""
