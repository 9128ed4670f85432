"""What the session engine gathers about a requested call for the policy."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from monitor.models import Effect, FragmentMatch, LabelledDestination, Leg, Level, ToolAnnotations


@dataclass(frozen=True)
class CallFacts:
    """What the engine knows about a requested call, gathered from the session state."""

    call_id: str
    level_before: Level
    """The level the session's context gives before this call: clean, partial or armed."""
    legs_before: frozenset[Leg]
    legs_call: frozenset[Leg]
    rule_ids: tuple[str, ...]
    arguments_available: bool
    destinations: Sequence[LabelledDestination]
    fragments: Sequence[FragmentMatch]
    steered_sources: frozenset[str] = frozenset()
    """Calls (among the fragments' sources) whose arguments untrusted content suggested."""
    shared_place: bool = False
    """The call's named destination is a place outsiders write to (and so can read)."""
    asked_sources: frozenset[str] = frozenset()
    """Calls whose content the user asked to move: places the user pointed at, and the destination place itself."""
    delegate_sources: frozenset[str] = frozenset()
    """Calls whose content a delegated recipient may get: places the user named by a value they typed, the
    destination place itself, and results that give their data under a label the user's words name; not a place of
    a kind the user's words name ("my inbox"), where the recipient was only found."""
    delegable: frozenset[str] = frozenset()
    """Fragments (their text) a delegated recipient may get wherever they came from: whole argument values the
    session listed (names of things: a repository, the user's address)."""
    annotations: ToolAnnotations | None = None
    """The tool's annotations as listed in the session (for the baseline client profile)."""
    targets: Sequence[LabelledDestination] = ()
    """For a call that names no recipient: the places it writes to (a file, a channel, a local path)."""
    nothing_new: bool = False
    """Every destination is a URL the session saw verbatim and nothing else in the call can carry data (nothing
    long, no value another result showed)."""
    action_asked: bool = True
    """The user's words ask for an action of this tool's kind (a send, an invitation, a payment, a booking)."""
    own_store: bool = False
    """The call names no recipient and writes one of the user's own things (a file, a note, an event)."""
    effects: frozenset[Effect] = frozenset()
    """What the call does beyond moving data (destructive, privileged, code execution)."""
    steered_by: tuple[str, str] | None = None
    """An argument value untrusted content chose, and the call whose content showed it."""
    unexamined: frozenset[Leg] = frozenset()
    """Legs (private data, untrusted content) whose content in the session a bound left partly unexamined."""
    unexamined_sources: tuple[str, ...] = ()
    """The calls whose results a bound cut short (``""``: content the session's index dropped)."""
    embedded: Sequence[LabelledDestination] = ()
    """Hosts of URLs in the call's content that whoever renders it fetches (markdown images, HTML ``src``, CSS
    ``url()``), other than URLs the session saw whole; they are among ``destinations`` too."""
    embedded_fragments: Sequence[FragmentMatch] = ()
    """Private content inside those URLs (their path, query or fragment)."""
    reviewed: bool = False
    """``reviewed-only``: a reviewed rule covers the tool (its pin, if any, checked)."""
    writes: bool = True
    """``reviewed-only``: the call writes (its reviewed rule, annotations or effects do not make it a read)."""
    approved: bool = False
    """``reviewed-only``: an approval on record covers this tool and these arguments (the session uses it once the
    call is decided, unless it is denied)."""
    retry_of: str | None = None
    """``reviewed-only``: an earlier identical write whose outcome is unknown, the tool declaring no retry contract."""
    outside_scope: tuple[str, ...] = ()
    """``reviewed-only``: what of the call lies outside the session's scope."""
    review_requested: bool = False
    """``reviewed-only``: the tool's action metadata asks for a person's confirmation (``requiresReview``)."""
    returned_sources: frozenset[str] = frozenset()
    """Calls (among the fragments' sources) made on the server this call goes to, when the call names no one else
    but the user's own and parties of the record the content came from: their content goes back to its origin."""
    secret_sources: frozenset[str] = frozenset()
    """Calls (among the fragments' sources) whose content the call carries a secret of (a password, a token, a
    key, a one-time code)."""
    secret_asked: bool = False
    """The user's words speak of a secret: the user may have asked for one to be sent."""
    composed: bool = True
    """The call carries text the agent may have composed (a value longer than an identifier that the user did not
    type and the session never saw whole), which can restate private data where no evidence tells; or it moves
    money (a payment, an account as recipient)."""
