"""The decision policy (DESIGN §4): from a call's facts to ``allow``, ``confirm`` or ``deny``, with reasons.

The session engine gathers the facts (:class:`CallFacts`); the policy only reads them, so the same facts always
give the same decision. For a call that cannot send out (no ``external_communication`` leg), or one made before
the context is armed, the answer is ``allow`` (``no-external-communication``, ``not-armed``): order matters, a
send before untrusted content arrived was not steered by it. For an external call while armed (level
``trifecta``):

- ``confirm`` when a destination is attacker-suggested or appears nowhere the session has seen
  (``destination-unseen``), unless the call only fetches URLs exactly as the session saw them with nothing else
  that can carry data (``request-carries-nothing-new``); always when a destination imitates one the user
  sanctioned (``destination-lookalike``); when private content the user did not ask for is in the arguments:
  read by a call whose target untrusted content chose (``private-source-steered``), or put where outsiders read
  (``private-to-shared-place``; what the user pointed at and what that place itself returned may go back); when
  a URL in the content that rendering fetches (an image, ``src=``) carries private content to a host the user
  did not name (``private-in-embedded-url``), wherever the content is posted; and when the arguments carry
  private content in a call of a kind the user never asked for whose destinations only a listing showed
  (``private-in-unrequested-send``);
- ``allow`` when every named destination is sanctioned (the user's words, the allowlist, a listing of the
  user's own things, the user's private content, a place the user pointed at for an action of this kind:
  ``destination-user-delegated``), saying which;
- with no recipient, ``allow`` when the call writes a place of the user's own (a listed file, a local path:
  ``destination-local``, a note or an event of the user's: ``destination-own-account``); otherwise ``confirm``
  if the arguments carry private content (verbatim, encoded, split, copied record fields, or files a shell
  command uploads: ``private-file-sent``) or are unavailable, else ``allow`` (``no-destination``,
  ``no-private-fragment``). Paraphrase evidence (``private-paraphrase``) is weaker: it tells on a send somewhere
  suspect, never on its own on a send with no readable address.

What was not examined counts against the call, never for it (``evidence-truncated``): when a bound left part
of the session's private data or untrusted content unexamined (a result over a size bound, a walk cut short, an
index over its budget), a call that would be allowed is decided again as if that content were in it: private
content not examined as a private fragment of the call that returned it, untrusted content not examined as the
attacker's mention of every destination that only a listing, private text or a delegation sanctioned. If that
decision is not ``allow``, the call is confirmed. A send to a destination the user typed or allowlisted (not a
place outsiders read), or a write to the user's own places, stays allowed; a fetch of a URL exactly as the
session saw it does not, since its other arguments could carry what was not examined.

The level is ``exfiltration`` only for a call the policy asks about or blocks, when a destination is the
attacker's (suggested or a look-alike), when private content the user did not ask for is in the arguments or
rides in an embedded URL to a host the user did not name, or when private content goes to an unseen destination
or to none that can be read; in enforce mode an exfiltration
to the attacker's destination is ``deny``.

The ``reviewed-only`` policy (:attr:`Policy.mode`, off by default) adds the application policy of
docs/policy.md on top, never weakening what the rules above decided (the final action is the stricter): a call
outside the user's scope is ``deny`` (``out-of-scope``); a tool no reviewed rule covers is ``review``
(``tool-unreviewed``); a write with no approval on record is ``confirm`` (``approval-required``); a repeated
write whose earlier outcome is unknown is ``confirm`` (``reconcile``) unless the tool's rule declares a retry
contract; a tool whose action metadata says ``requiresReview`` is ``confirm`` (``review-requested``).

A *steered action* (``steered-action``, on by default, :attr:`Policy.hijack`): a destructive, privileged or
code-execution call whose target (or, for code execution, content) untrusted content chose gets at least
``confirm``, whether or not it sends. A baseline client profile (:class:`~monitor.clients.Client`) may add its
own confirmations: the stricter action wins and the monitor's own is kept in ``monitor_action``.
"""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from monitor.classify import YamlLimits, YamlProblem, read_yaml_file
from monitor.clients import Client, ClientAction, decide_for_client
from monitor.errors import InputError
from monitor.evidence import is_allowlisted
from monitor.ingest import find_yaml_line
from monitor.models import (
    Action,
    Decision,
    Destination,
    DestinationKind,
    Effect,
    Evidence,
    EvidenceKind,
    FragmentMatch,
    LabelledDestination,
    Leg,
    Level,
    Origin,
    Reason,
    ToolAnnotations,
    Transform,
)

__all__ = [
    "CallFacts",
    "Policy",
    "PolicyMode",
    "Scope",
    "decide",
    "decide_on_monitor_error",
    "decide_trifecta",
    "load_scope",
]


class PolicyMode(StrEnum):
    """Which application policy applies on top of the trifecta rules: none (``default``), or ``reviewed-only``."""

    DEFAULT = "default"
    REVIEWED_ONLY = "reviewed-only"


class Scope(BaseModel):
    """What the user allowed a session to reach (``reviewed-only`` policy): each list, when given, is the whole
    of what is allowed; an absent list (None) does not restrict.

    ``servers`` and ``tools`` hold globs (``*``, ``?``, ``[...]``); a tool glob with a ``/`` is matched against
    ``server/tool``, else against the tool's name. ``destinations`` holds e-mail addresses and domains (a domain
    covers its subdomains), as the allowlist does; other addresses (IBANs, phone numbers) match exactly."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    servers: tuple[str, ...] | None = None
    tools: tuple[str, ...] | None = None
    destinations: tuple[str, ...] | None = None

    @model_validator(mode="after")
    def _check_restricts(self) -> Scope:
        if self.servers is None and self.tools is None and self.destinations is None:
            raise ValueError("a scope restricts nothing: give servers, tools or destinations")
        return self

    def find_outside(self, server: str, tool: str, destinations: Iterable[Destination]) -> tuple[str, ...]:
        """Return what of a call lies outside the scope (``server x``, ``tool x/y``, ``destination z``)."""
        outside: list[str] = []
        if self.servers is not None and not any(_glob(server, p) for p in self.servers):
            outside.append(f"server {server}")
        if self.tools is not None and not any(_glob(f"{server}/{tool}" if "/" in p else tool, p) for p in self.tools):
            outside.append(f"tool {server}/{tool}")
        if self.destinations is not None:
            for d in destinations:
                if d.keyed and d.kind is not DestinationKind.PATH and not is_allowlisted(d, self.destinations):
                    outside.append(f"destination {d.value}")
        return tuple(dict.fromkeys(outside))


def _glob(value: str, pattern: str) -> bool:
    return fnmatch.fnmatchcase(value.lower(), pattern.lower())


_SCOPE_LIMITS = YamlLimits(max_bytes=1 << 20)


def load_scope(path: str | Path) -> Scope:
    """Read a scope file (YAML, or JSON, which YAML reads): a mapping with optional ``servers``, ``tools`` and
    ``destinations`` lists. Raises :class:`~monitor.errors.InputError` naming the file and line of a problem."""
    try:
        node, value = read_yaml_file(path, _SCOPE_LIMITS)
    except YamlProblem as exc:
        raise InputError(f"{path}:{exc.line}", exc.message) from None
    if not isinstance(value, dict):
        raise InputError(f"{path}:{node.start_mark.line + 1}", "a scope file is a mapping")
    try:
        return Scope.model_validate(value)
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = tuple(error["loc"])
        where = ".".join(str(p) for p in loc) or "scope"
        raise InputError(f"{path}:{find_yaml_line(node, loc)}", f"{where}: {error['msg']}") from None


class Policy(BaseModel):
    """How the monitor decides.

    ``enforce`` turns the confirm on an exfiltration to an attacker-suggested destination into a deny.
    ``conversation_is_private`` counts user messages as private data in the context. ``allowlist`` holds
    e-mail addresses and domains (a domain covers its subdomains) that are always user-sanctioned.
    ``baseline`` is a client profile (DESIGN §9) whose own confirmations stay: the final action is the
    stricter of the client's and the monitor's. ``hijack`` (on by default) confirms a destructive,
    privileged or code-execution call whose target or content untrusted content chose.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    enforce: bool = False
    conversation_is_private: bool = True
    allowlist: tuple[str, ...] = ()
    baseline: Client | None = None
    hijack: bool = True
    """Confirm destructive, privileged and code-execution calls that untrusted content steered (``hijack``)."""
    mode: PolicyMode = PolicyMode.DEFAULT
    """``reviewed-only`` adds the application policy of docs/policy.md on top of the trifecta rules."""
    scope: Scope | None = None
    """With ``reviewed-only``: the scope of every session (a host may set one per session instead)."""


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
    annotations: ToolAnnotations | None = None
    """The tool's annotations as listed in the session (for the baseline client profile)."""
    targets: Sequence[LabelledDestination] = ()
    """For a call that names no recipient: the places it writes to (a file, a channel, a local path)."""
    nothing_new: bool = False
    """Every destination is a URL the session saw verbatim and nothing else in the call can carry data."""
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
    """Calls (among the fragments' sources) made on the server this call goes to: their content is its origin's."""
    secret_sources: frozenset[str] = frozenset()
    """Calls (among the fragments' sources) whose content the call carries a secret of (a password, a token, a
    key, a one-time code)."""
    secret_asked: bool = False
    """The user's words speak of a secret: the user may have asked for one to be sent."""
    composed: bool = True
    """The call carries text the agent may have composed (a value longer than an identifier that the user did not
    type and the session never saw whole): it can restate private data where no evidence tells."""


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
_CLIENT_ACTIONS = {
    ClientAction.ASK: (Action.CONFIRM, Reason.BASELINE_ASKS),
    ClientAction.BLOCK: (Action.DENY, Reason.BASELINE_BLOCKS),
}


def decide_on_monitor_error(call_id: str | None) -> Decision:
    """Return the fail-safe answer when the monitor itself failed: ``confirm``, reason ``monitor-error``
    (what could not be examined counts against the call, never for it)."""
    return Decision(
        call_id=call_id or "unknown",
        action=Action.CONFIRM,
        level=Level.CLEAN,
        legs_before=frozenset(),
        legs_call=frozenset(),
        reasons=(Reason.MONITOR_ERROR,),
    )


def decide(policy: Policy, facts: CallFacts) -> Decision:
    """Return the decision on one call: the monitor's, made stricter by the policy's baseline client if it has
    one. Pure: the same facts always give the same decision. Never raises on valid facts."""
    decision = decide_trifecta(policy, facts)
    if policy.hijack and facts.effects and facts.steered_by is not None:
        decision = _confirm_hijack(decision, facts.effects, facts.steered_by)
    if policy.mode is PolicyMode.REVIEWED_ONLY:
        decision = _apply_reviewed_only(decision, facts)
    if policy.baseline is None:
        return decision
    client = decide_for_client(policy.baseline, facts.annotations or ToolAnnotations())
    if client not in _CLIENT_ACTIONS:
        return decision
    action, reason = _CLIENT_ACTIONS[client]
    final = _stricter(decision.action, action)
    return decision.model_copy(
        update={"action": final, "reasons": (*decision.reasons, reason), "monitor_action": decision.action}
    )


def decide_trifecta(policy: Policy, facts: CallFacts) -> Decision:
    """Return what the monitor alone decides for one call (no baseline client), as the module describes."""
    decision = _decide_on_evidence(policy, facts)
    if decision.action is not Action.ALLOW or not facts.unexamined or decision.level is not Level.TRIFECTA:
        return decision
    # What was not examined counts as possibly carrying what would stop the call.
    if _decide_on_evidence(policy, _assume_unexamined(facts)).action is Action.ALLOW:
        return decision
    sources = facts.unexamined_sources or ("",)
    unexamined = tuple(
        Evidence(
            kind=EvidenceKind.UNEXAMINED,
            from_call=source or None,
            detail=(
                f"the result of {source} ({_describe_unexamined(facts.unexamined)}) was not fully examined"
                if source
                else f"content ({_describe_unexamined(facts.unexamined)}) the session's evidence index dropped"
            ),
        )
        for source in sources
    )
    return decision.model_copy(
        update={
            "action": Action.CONFIRM,
            "reasons": (*decision.reasons, Reason.EVIDENCE_TRUNCATED),
            "evidence": (*decision.evidence, *unexamined),
        }
    )


def _assume_unexamined(facts: CallFacts) -> CallFacts:
    """The facts as they would be if what was not examined held what matters: private content of each cut
    source in the call's arguments, and untrusted text naming every destination that only a listing, private
    text or a delegation sanctioned."""
    sources = facts.unexamined_sources or ("",)
    fragments, embedded_fragments = list(facts.fragments), list(facts.embedded_fragments)
    if Leg.PRIVATE_DATA in facts.unexamined:
        assumed = [FragmentMatch(source, "content not examined", Transform.VERBATIM) for source in sources]
        fragments.extend(assumed)
        embedded_fragments.extend(assumed)
    destinations, targets = list(facts.destinations), list(facts.targets)
    if Leg.UNTRUSTED_CONTENT in facts.unexamined:
        destinations = [_as_attackers(d, sources[0]) for d in destinations]
        targets = [_as_attackers(d, sources[0]) for d in targets]
    return dataclasses.replace(
        facts,
        fragments=fragments,
        destinations=destinations,
        targets=targets,
        embedded_fragments=embedded_fragments,
    )


def _as_attackers(labelled: LabelledDestination, source: str) -> LabelledDestination:
    if labelled.origin not in _SEEN_IN_CONTENT:
        return labelled
    return LabelledDestination(labelled.destination, Origin.ATTACKER, source or labelled.from_call)


def _describe_unexamined(legs: frozenset[Leg]) -> str:
    names = {Leg.PRIVATE_DATA: "private data", Leg.UNTRUSTED_CONTENT: "untrusted content"}
    return ", ".join(names[leg] for leg in sorted(legs & names.keys(), key=lambda leg: leg.value)) or "content"


@dataclass(frozen=True)
class _View:
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


def _view(facts: CallFacts) -> _View:
    # Addresses found only inside content (not under a destination argument) can show the attacker's hand,
    # but they neither sanction the call nor make it unreadable-destination-free.
    keyed = [d for d in facts.destinations if d.destination.keyed]
    targets = [] if keyed else list(facts.targets)
    # A place named only by untrusted content (or imitating one of the user's) is never the user's own.
    foreign_target = any(d.origin in (Origin.ATTACKER, Origin.LOOKALIKE) for d in targets)
    # With no recipient but the server and the user's own (no other named destination, no place others read, no
    # image host, no place written but the user's own), content that server returned goes back where it came from.
    only_server = (
        all(d.origin in _OWN for d in keyed)
        and not facts.shared_place
        and not facts.embedded
        and all(_is_own_place(d) for d in targets)
        and facts.arguments_available
    )
    returned = [
        f
        for f in facts.fragments
        if only_server and f.from_call in facts.returned_sources and f.transform is not Transform.FILE
    ]
    fragments = [f for f in facts.fragments if f not in returned]
    # Private content the user did not ask for: read by a call whose target untrusted content chose, or
    # put where outsiders read (naming a public place does not ask for private data to be published there).
    unasked = [
        f
        for f in fragments
        if f.from_call in facts.steered_sources or (facts.shared_place and f.from_call not in facts.asked_sources)
    ]
    # Private content in a URL that rendering the content fetches goes to that URL's host, wherever the content
    # is posted: only a host the user named may receive it.
    embedded_leak = [d for d in facts.embedded if d.origin not in _NAMED] if facts.embedded_fragments else []
    # A secret leaves for a named recipient or a place others read only when the user's words speak of one.
    secret_carried = any(
        f.from_call in facts.secret_sources and f.transform is not Transform.PARAPHRASE for f in fragments
    )
    # (A recipient untrusted content or nobody chose is stopped by an earlier row; one a listing of the user's own
    # things showed, such as the account's own address, is where the service sends its codes.)
    secrets = (
        secret_carried and (facts.shared_place or any(d.origin in _CHOSEN for d in keyed)) and not facts.secret_asked
    )
    # A delegated recipient gets what comes from the place the user pointed at, nothing from elsewhere.
    delegated = any(d.origin is Origin.DELEGATED for d in keyed)
    beyond_delegation = delegated and any(
        f.from_call not in facts.asked_sources and f.transform is not Transform.PARAPHRASE for f in fragments
    )
    return _View(
        facts=facts,
        keyed=keyed,
        attacker=[d for d in facts.destinations if d.origin is Origin.ATTACKER],
        lookalike=[d for d in facts.destinations if d.origin is Origin.LOOKALIKE],
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
        nothing_new=facts.nothing_new
        and not fragments
        and not any(d.origin is Origin.LOOKALIKE for d in facts.destinations),
        foreign_target=foreign_target,
    )


@dataclass(frozen=True)
class Finding:
    """A row of the decision table's first part: something a call carries or a recipient it has, named by its
    reason code whenever it holds (docs/decisions.md)."""

    reason: Reason
    holds: Callable[[_View], bool]


@dataclass(frozen=True)
class Verdict:
    """A row of the decision table's second part: the first row that holds decides the action; its reasons
    join the findings' (docs/decisions.md)."""

    id: str
    holds: Callable[[_View], bool]
    action: Action
    reasons: Callable[[_View], tuple[Reason, ...]] = lambda _: ()


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
    Finding(Reason.PRIVATE_SOURCE_STEERED, lambda v: any(f.from_call in v.facts.steered_sources for f in v.unasked)),
    Finding(Reason.PRIVATE_TO_SHARED_PLACE, lambda v: bool(v.unasked) and v.facts.shared_place),
    Finding(Reason.PRIVATE_IN_EMBEDDED_URL, lambda v: bool(v.embedded_leak)),
    Finding(Reason.ARGUMENTS_UNAVAILABLE, lambda v: not v.facts.arguments_available),
)
"""What the decision reports about an external call made while armed, in this order."""

VERDICTS: tuple[Verdict, ...] = (
    Verdict(
        "recipient-not-the-users",
        lambda v: (
            bool(v.lookalike or v.unasked or v.embedded_leak)
            or (bool(v.attacker) and not v.nothing_new)
            or (bool(v.unseen) and not v.nothing_new and (bool(v.fragments) or v.facts.composed))
        ),
        Action.CONFIRM,
    ),
    # A URL fetched exactly as the session saw it, or a recipient nobody chose sent only identifiers and what
    # the user typed: the request tells its recipient nothing private.
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
            bool(v.keyed and v.fragments) and not v.facts.action_asked and not any(d.origin in _CHOSEN for d in v.keyed)
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
        lambda v: v.facts.own_store and v.facts.arguments_available and not v.foreign_target,
        Action.ALLOW,
        lambda _: (Reason.DESTINATION_OWN_ACCOUNT,),
    ),
    Verdict(
        "returned-to-origin",
        lambda v: bool(v.returned) and not v.strong,
        Action.ALLOW,
        lambda _: (Reason.RETURNED_TO_ORIGIN,),
    ),
    Verdict("carries-private", lambda v: bool(v.strong) or not v.facts.arguments_available, Action.CONFIRM),
    Verdict(
        "carries-nothing", lambda _: True, Action.ALLOW, lambda _: (Reason.NO_DESTINATION, Reason.NO_PRIVATE_FRAGMENT)
    ),
)
"""How an external call made while armed is decided: the first row that holds."""


def _is_exfiltration(v: _View) -> bool:
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


def _decide_on_evidence(policy: Policy, facts: CallFacts) -> Decision:
    base_level = facts.level_before
    if Leg.EXTERNAL_COMMUNICATION not in facts.legs_call:
        return _decision(facts, Action.ALLOW, base_level, (Reason.NO_EXTERNAL_COMMUNICATION,))
    if base_level is not Level.ARMED:
        return _decision(facts, Action.ALLOW, base_level, (Reason.NOT_ARMED,))
    view = _view(facts)
    reasons = [finding.reason for finding in FINDINGS if finding.holds(view)]
    verdict = next(row for row in VERDICTS if row.holds(view))
    reasons.extend(verdict.reasons(view))
    exfiltration = _is_exfiltration(view)
    action = verdict.action
    if action is Action.CONFIRM and (view.attacker or view.lookalike) and exfiltration and policy.enforce:
        action = Action.DENY
        reasons.append(Reason.ENFORCED)
    # Exfiltration is a level of calls the policy asks about or blocks; an allowed send is a trifecta.
    level = Level.EXFILTRATION if exfiltration and action is not Action.ALLOW else Level.TRIFECTA
    return _decision(facts, action, level, tuple(reasons))


def _is_own_place(target: LabelledDestination) -> bool:
    if target.destination.kind is DestinationKind.PATH:
        return True
    return target.origin in _SANCTIONED_REASON


def _target_reason(target: LabelledDestination) -> Reason:
    if target.destination.kind is DestinationKind.PATH:
        return Reason.DESTINATION_LOCAL
    return _SANCTIONED_REASON[target.origin]


def _confirm_hijack(decision: Decision, effects: frozenset[Effect], steered_by: tuple[str, str]) -> Decision:
    """A destructive, privileged or code-execution call whose target or content untrusted content chose."""
    value, source = steered_by
    evidence = Evidence(
        kind=EvidenceKind.STEERING,
        from_call=source,
        detail=f"{value[:200]} ({', '.join(sorted(e.value for e in effects))})",
    )
    action = _stricter(decision.action, Action.CONFIRM)
    return decision.model_copy(
        update={
            "action": action,
            "reasons": (*decision.reasons, Reason.STEERED_ACTION),
            "evidence": (*decision.evidence, evidence),
        }
    )


def _apply_reviewed_only(decision: Decision, facts: CallFacts) -> Decision:
    """The ``reviewed-only`` rules: each adds its reason, and the stricter action wins (the level is kept)."""
    rules: list[tuple[Action, Reason]] = []
    evidence = list(decision.evidence)
    if facts.outside_scope:
        rules.append((Action.DENY, Reason.OUT_OF_SCOPE))
        evidence.extend(Evidence(kind=EvidenceKind.SCOPE, from_call=None, detail=o) for o in facts.outside_scope)
    if not facts.reviewed:
        rules.append((Action.REVIEW, Reason.TOOL_UNREVIEWED))
    if facts.review_requested:
        rules.append((Action.CONFIRM, Reason.REVIEW_REQUESTED))
    if facts.writes:
        rules.append(
            (Action.ALLOW, Reason.APPROVAL_USED) if facts.approved else (Action.CONFIRM, Reason.APPROVAL_REQUIRED)
        )
    if facts.writes and facts.retry_of is not None:
        rules.append((Action.CONFIRM, Reason.RECONCILE))
        # Not a data flow (from_call stays empty): the earlier attempt is named in the detail.
        detail = f"earlier attempt {facts.retry_of}: no result, or an error"
        evidence.append(Evidence(kind=EvidenceKind.RETRY, from_call=None, detail=detail))
    if not rules:
        return decision
    action = _stricter(decision.action, *(a for a, _ in rules))
    reasons = (*decision.reasons, *(r for _, r in rules))
    return decision.model_copy(update={"action": action, "reasons": reasons, "evidence": tuple(evidence)})


def _stricter(*actions: Action) -> Action:
    """The strictest of the actions (the earliest of equals)."""
    return max(actions, key=lambda a: a.rank)


def _decision(facts: CallFacts, action: Action, level: Level, reasons: tuple[Reason, ...]) -> Decision:
    evidence = [
        Evidence(
            kind=EvidenceKind.DESTINATION,
            from_call=d.from_call,
            detail=f"{d.destination.value} at {d.destination.path}: {d.origin.value}",
        )
        for d in facts.destinations
    ]
    evidence.extend(
        Evidence(kind=EvidenceKind.FRAGMENT, from_call=f.from_call, detail=f"{f.text[:200]} ({f.transform.value})")
        for f in facts.fragments
    )
    return Decision(
        call_id=facts.call_id,
        action=action,
        level=level,
        legs_before=facts.legs_before,
        legs_call=facts.legs_call,
        reasons=reasons,
        rule_ids=facts.rule_ids,
        evidence=tuple(evidence),
    )
