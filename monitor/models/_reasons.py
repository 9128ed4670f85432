"""Reason codes, and what each means to a person: one wording per code, the one home of those words.

Each :class:`Reason` has a :class:`ReasonWording` in :data:`REASON_WORDING`: the short ``clause`` that
:meth:`monitor.models.Decision.describe` puts in the one line hosts show where they ask the user (the Claude Code
hook, the MCP proxy and guard, the adapters), and the longer ``text`` that ``trifecta explain`` and the HTML
report give: what the reason means and what would change the decision.

A clause may name ``{source}``: `` (from <tool>)`` when the host knows the tool whose output the evidence came
from, else nothing. A text may name ``{tool}`` (the decided call's tool), ``{source}`` (the calls whose output
the reason's evidence came from) and ``{destination}`` (the address the reason is about); the evidence a
wording draws on is named beside it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from monitor.models._evidence import Origin


class Reason(StrEnum):
    """Reason codes attached to a decision."""

    NO_EXTERNAL_COMMUNICATION = "no-external-communication"
    NOT_ARMED = "not-armed"
    DESTINATION_USER_SANCTIONED = "destination-user-sanctioned"
    DESTINATION_ALLOWLISTED = "destination-allowlisted"
    DESTINATION_FROM_LISTING = "destination-from-listing"
    DESTINATION_FROM_PRIVATE_CONTENT = "destination-from-private-content"
    DESTINATION_ATTACKER_SUGGESTED = "destination-attacker-suggested"
    DESTINATION_UNSEEN = "destination-unseen"
    NO_DESTINATION = "no-destination"
    NO_PRIVATE_FRAGMENT = "no-private-fragment"
    PRIVATE_FRAGMENT = "private-fragment"
    PRIVATE_SOURCE_STEERED = "private-source-steered"
    PRIVATE_TO_SHARED_PLACE = "private-to-shared-place"
    PRIVATE_PARAPHRASE = "private-paraphrase"
    PRIVATE_FILE_SENT = "private-file-sent"
    PRIVATE_IN_UNREQUESTED_SEND = "private-in-unrequested-send"
    PRIVATE_IN_EMBEDDED_URL = "private-in-embedded-url"
    """Private content rides in a URL that whoever renders the content fetches (an image, ``src=``), to a host
    the user did not name."""
    REQUEST_CARRIES_NOTHING_NEW = "request-carries-nothing-new"
    DESTINATION_USER_DELEGATED = "destination-user-delegated"
    RETURNED_TO_ORIGIN = "returned-to-origin"
    """The call names no recipient, and the private content it carries goes back to the server it came from (a
    one-time code typed into the service that mailed it, a booking's ids passed back to the booking tool)."""
    SECRET_TO_RECIPIENT = "secret-to-recipient"
    """A secret (a password, a token, a key, a one-time code) goes to a named recipient or a place others read,
    and the user's words do not ask for a secret to be sent: whoever chose the recipient, a person confirms."""
    PRIVATE_BEYOND_DELEGATION = "private-beyond-delegation"
    """A recipient the user delegated (taken from a place the user pointed at) gets private content from
    elsewhere than that place: the user delegated where to send, not what."""
    DESTINATION_LOOKALIKE = "destination-lookalike"
    DESTINATION_LOCAL = "destination-local"
    DESTINATION_OWN_ACCOUNT = "destination-own-account"
    STEERED_ACTION = "steered-action"
    ARGUMENTS_UNAVAILABLE = "arguments-unavailable"
    EVIDENCE_TRUNCATED = "evidence-truncated"
    """Content a bound left unexamined could carry what would stop the call: it counts against it."""
    ENFORCED = "enforced"
    BASELINE_ASKS = "baseline-client-asks"
    BASELINE_BLOCKS = "baseline-client-blocks"
    MONITOR_ERROR = "monitor-error"
    TOOL_UNREVIEWED = "tool-unreviewed"
    """``reviewed-only`` policy: no reviewed rule covers the tool, whatever its annotations claim."""
    APPROVAL_REQUIRED = "approval-required"
    """``reviewed-only`` policy: the call writes, and no approval for it (tool and arguments) is on record."""
    APPROVAL_USED = "approval-used"
    """``reviewed-only`` policy: the call writes, and an approval on record covers it (used by the call, unless
    the call is denied: then it stays on record)."""
    RECONCILE = "reconcile"
    """``reviewed-only`` policy: the same write was requested before and its outcome is unknown (no result, or
    an error), and the tool's reviewed rule declares no retry contract: state must be reconciled first."""
    OUT_OF_SCOPE = "out-of-scope"
    """``reviewed-only`` policy: the call's server, tool or a destination is outside the scope the user gave."""
    REVIEW_REQUESTED = "review-requested"
    """``reviewed-only`` policy: the tool's action metadata (``requiresReview: true``) asks for a person's
    confirmation before each call."""


class EvidenceKind(StrEnum):
    """What an evidence item shows."""

    FRAGMENT = "fragment"
    DESTINATION = "destination"
    STEERING = "steering"
    """An argument value of a steered action, and the call whose untrusted content chose it."""
    UNEXAMINED = "unexamined"
    """Content of the session that a bound left unexamined, and the call that returned it."""
    SCOPE = "scope"
    """What lies outside the scope the user gave (a server, a tool, a destination)."""
    RETRY = "retry"
    """The earlier attempt of a repeated write whose outcome is unknown (named in the detail: not a data flow)."""


@dataclass(frozen=True, slots=True)
class ReasonWording:
    """The plain words for one reason code: the host line's short clause and the longer explanation, and which
    evidence fills their ``{source}`` and ``{destination}``."""

    text: str
    """What the reason means and what would change the decision (``trifecta explain``, the HTML report)."""
    evidence: EvidenceKind | None = None
    """The kind of evidence the explanation's ``{source}`` and ``{destination}`` are taken from (None: any)."""
    origin: Origin | None = None
    """For a destination reason: the origin of the destination the reason is about."""
    clause: str | None = field(kw_only=True)
    """What :meth:`~monitor.models.Decision.describe` says of the reason, in the one line a host shows when it
    asks or blocks. A reason with an ``origin`` is said after each destination of that origin ("it sends to
    eve@x.example, an address only untrusted content suggested"); another is said after the evidence. None: the
    line has no words of its own for it, either because the reason allows (an allowed call's line lists its
    reasons by code) or because the evidence the line tells already says it (a fragment carried, a steered
    target, a scope left)."""


_DEST = EvidenceKind.DESTINATION
_FRAGMENT = EvidenceKind.FRAGMENT

# One entry per reason, all of one shape: data, not repeated code.
REASON_WORDING: dict[Reason, ReasonWording] = {
    Reason.NO_EXTERNAL_COMMUNICATION: ReasonWording(
        clause=None,
        text="{tool} cannot send anything out (it has no external-communication leg), so it is allowed whatever "
        "the session holds; only a call that can send is judged on its destinations and content.",
    ),
    Reason.NOT_ARMED: ReasonWording(
        clause=None,
        text="When {tool} was called the session had not yet read both untrusted content and private data; order "
        "matters: a send before untrusted content arrived was not steered by it. The same send after both would "
        "be judged on its destinations and content.",
    ),
    Reason.DESTINATION_USER_SANCTIONED: ReasonWording(
        clause="which you named",
        text="The user named {destination} in their own words, so the user chose it; had it appeared only in tool "
        "output written by someone else, the send would be asked about.",
        evidence=_DEST,
        origin=Origin.USER,
    ),
    Reason.DESTINATION_ALLOWLISTED: ReasonWording(
        clause="which is allowlisted",
        text="{destination} is on the allowlist; without that entry it would be judged by where the session first "
        "saw it.",
        evidence=_DEST,
        origin=Origin.ALLOWLIST,
    ),
    Reason.DESTINATION_FROM_LISTING: ReasonWording(
        clause="taken from a listing{source}",
        text="{destination} came from {source}, a listing of the user's own things; had it appeared only in text "
        "someone else wrote, the send would be asked about.",
        evidence=_DEST,
        origin=Origin.LISTING,
    ),
    Reason.DESTINATION_FROM_PRIVATE_CONTENT: ReasonWording(
        clause="taken from private content{source}",
        text="{destination} came from the user's private content ({source}); had it appeared only in text someone "
        "else wrote, the send would be asked about.",
        evidence=_DEST,
        origin=Origin.PRIVATE_TEXT,
    ),
    Reason.DESTINATION_ATTACKER_SUGGESTED: ReasonWording(
        clause="an address only untrusted content{source} suggested",
        text="The user never named {destination}; it appeared only in the output of {source}, written by someone "
        "else. "
        "Had the user typed it, or were it on the allowlist, it would count as the user's.",
        evidence=_DEST,
        origin=Origin.ATTACKER,
    ),
    Reason.DESTINATION_UNSEEN: ReasonWording(
        clause="a destination that appears nowhere in the session",
        text="{destination} appears nowhere the session has seen; had the user named it, it would count as the user's.",
        evidence=_DEST,
        origin=Origin.UNSEEN,
    ),
    Reason.NO_DESTINATION: ReasonWording(
        clause=None,
        text="The call names no recipient; a readable address would be judged by where the session first saw it.",
    ),
    Reason.NO_PRIVATE_FRAGMENT: ReasonWording(
        clause=None,
        text="Nothing private the session read is in the arguments; private content in them would have the call "
        "asked about.",
    ),
    Reason.PRIVATE_FRAGMENT: ReasonWording(
        clause=None,  # the line names the fragments: "it carries private data from read_inbox (“…”, verbatim)"
        text="The call carries text read from {source} (verbatim or encoded); without it the call would be judged "
        "on its destinations alone.",
        evidence=_FRAGMENT,
    ),
    Reason.PRIVATE_SOURCE_STEERED: ReasonWording(
        clause="that data was read where untrusted content pointed",
        text="Untrusted content chose what {source} read, so the user never asked for the private data it "
        "returned; had the user chosen what to read, its content could go where the user sends it.",
        evidence=_FRAGMENT,
    ),
    Reason.PRIVATE_TO_SHARED_PLACE: ReasonWording(
        clause="it puts private data where others can read it",
        text="Private content read from {source} would be put where outsiders read; only what the user pointed "
        "at, or what that place itself returned, may go back there.",
        evidence=_FRAGMENT,
    ),
    Reason.PRIVATE_PARAPHRASE: ReasonWording(
        clause="it paraphrases private data of the session",
        text="The arguments restate rare tokens, numbers or identifiers read from {source}: weaker evidence, which "
        "tells only on a send somewhere suspect.",
        evidence=_FRAGMENT,
    ),
    Reason.PRIVATE_FILE_SENT: ReasonWording(
        clause="it uploads a private file",
        text="The call sends a file by reference: its content leaves, not its name; without that file reference "
        "nothing private would go.",
        evidence=_FRAGMENT,
    ),
    Reason.PRIVATE_IN_UNREQUESTED_SEND: ReasonWording(
        clause="you did not ask for a send of this kind, and it carries private data",
        text="The call carries private content read from {source}, the user never asked for an action of its "
        "kind, and only a listing showed its destination; had the user asked for such a send, it would be allowed.",
        evidence=_FRAGMENT,
    ),
    Reason.PRIVATE_IN_EMBEDDED_URL: ReasonWording(
        clause="a URL in it that is fetched when shown (an image) carries private data to a host you did not name",
        text="Private content read from {source} rides in a URL that whoever renders the content fetches (an "
        "image, src=), to a host the user did not name; had the user named that host, it could go.",
        evidence=_FRAGMENT,
    ),
    Reason.REQUEST_CARRIES_NOTHING_NEW: ReasonWording(
        clause=None,
        text="The call fetches a URL exactly as the session saw it, with nothing else that can carry data; private "
        "data added to it would have it asked about.",
    ),
    Reason.DESTINATION_USER_DELEGATED: ReasonWording(
        clause="from a place you pointed at",
        text="The user asked for an action of this kind and pointed at the place ({source}) that shows "
        "{destination}; had the user named a destination of that kind, or were it money or a credential, it "
        "would be asked about.",
        evidence=_DEST,
        origin=Origin.DELEGATED,
    ),
    Reason.RETURNED_TO_ORIGIN: ReasonWording(
        clause=None,
        text="The private content the call carries goes back to the server it came from, with no other recipient; "
        "the same content to anyone else would be asked about.",
    ),
    Reason.SECRET_TO_RECIPIENT: ReasonWording(
        clause=None,  # the line names the recipient and the secret carried (“…”, secret)
        text="The call carries a secret (a password, a token, a key, a one-time code) to a recipient, and the "
        "user's words ask for no secret to be sent; had they, it could go.",
    ),
    Reason.PRIVATE_BEYOND_DELEGATION: ReasonWording(
        clause=None,  # the line names the delegated recipient and the private data carried
        text="The user delegated where to send (a place they pointed at), not what: the call carries private "
        "content from elsewhere.",
    ),
    Reason.DESTINATION_LOOKALIKE: ReasonWording(
        clause="which imitates a destination you named",
        text="{destination} imitates a destination the user sanctioned (a prefix or suffix, a homoglyph, a hidden "
        "character or a small edit); only the address exactly as the user typed it counts as the user's.",
        evidence=_DEST,
        origin=Origin.LOOKALIKE,
    ),
    Reason.DESTINATION_LOCAL: ReasonWording(
        clause=None,
        text="The call writes a local path, a place of the user's own; a remote recipient would be judged by where "
        "the session first saw it.",
    ),
    Reason.DESTINATION_OWN_ACCOUNT: ReasonWording(
        clause=None,
        text="The call writes a place of the user's own (a note or an event of the user's), with no recipient; a "
        "recipient would be judged by where the session first saw it.",
    ),
    Reason.STEERED_ACTION: ReasonWording(
        clause=None,  # the line names the steered value: "untrusted content (from read_doc) chose its target (…)"
        text="A destructive, privileged or code-execution call whose target untrusted content ({source}) chose; "
        "had the user named the target, it would not be asked about.",
        evidence=EvidenceKind.STEERING,
    ),
    Reason.ARGUMENTS_UNAVAILABLE: ReasonWording(
        clause="its arguments could not all be examined",
        text="The trace does not record the call's arguments, so nothing shows what it sends; with them recorded "
        "the monitor would judge what they carry.",
    ),
    Reason.EVIDENCE_TRUNCATED: ReasonWording(
        clause="content of the session too large to examine in full could be in it",
        text="Content a bound left unexamined ({source}) could carry what would stop the call: it counts against "
        "it. Examined in full, the call would be judged on what it holds.",
        evidence=EvidenceKind.UNEXAMINED,
    ),
    Reason.ENFORCED: ReasonWording(
        clause="enforce mode blocks it",
        text="In enforce mode an exfiltration to the attacker's destination is denied; without enforcement it "
        "would be asked about.",
    ),
    Reason.BASELINE_ASKS: ReasonWording(
        clause="your client's own rules ask about it",
        text="The baseline client profile asks about this call itself; without the baseline the monitor's own "
        "action would stand.",
    ),
    Reason.BASELINE_BLOCKS: ReasonWording(
        clause="your client's own rules block it",
        text="The baseline client profile blocks this call; without the baseline the monitor's own action would stand.",
    ),
    Reason.MONITOR_ERROR: ReasonWording(
        clause="the monitor failed while checking it",
        text="The engine failed on this call and asks rather than let it go unjudged; the error is printed on "
        "standard error (--debug shows the traceback).",
    ),
    Reason.TOOL_UNREVIEWED: ReasonWording(
        clause="the tool has no reviewed record (reviewed-only policy)",
        text="Under the reviewed-only policy, {tool} has no reviewed rule, so it goes to review whatever its "
        "annotations claim; a reviewed rule covering it would let its reads through.",
    ),
    Reason.APPROVAL_REQUIRED: ReasonWording(
        clause="it writes and no approval for it is on record",
        text="Under the reviewed-only policy, {tool} writes and no approval for this tool with these arguments is "
        "on record; an approval the host records would let it run once.",
    ),
    Reason.APPROVAL_USED: ReasonWording(
        clause=None,
        text="Under the reviewed-only policy, {tool} writes, and an approval on record for this tool with these "
        "arguments was used; the next such call needs a new one.",
    ),
    Reason.RECONCILE: ReasonWording(
        clause="the same call was made before and its outcome is unknown: reconcile first",
        text="The same {tool} call was made before and its outcome is unknown (no result, or an error): what the "
        "first attempt did must be checked before it is repeated; a retry contract in the tool's reviewed rule "
        "allows it.",
    ),
    Reason.REVIEW_REQUESTED: ReasonWording(
        clause="the tool asks for your confirmation before each call",
        text="Under the reviewed-only policy, {tool} asks for a person's confirmation before each call (its action "
        "metadata says requiresReview), and a request that only adds a confirmation is taken from any server.",
    ),
    Reason.OUT_OF_SCOPE: ReasonWording(
        clause=None,  # the line names what lies outside: "it is outside the scope you gave (…)"
        text="Under the reviewed-only policy, the call reaches outside the scope the user gave (a server, tool or "
        "destination not in it), so it is denied; widening the scope would change that.",
    ),
}
"""One wording per :class:`Reason` member: the host line's clause and the explanation side by side."""
