"""What each reason code means in plain words, and what would change the decision: one wording per reason.

A wording may name ``{tool}`` (the decided call's tool), ``{source}`` (the calls whose output the reason's
evidence came from) and ``{destination}`` (the address the reason is about); the evidence a wording draws on
is named beside it.
"""

from __future__ import annotations

from dataclasses import dataclass

from monitor.models import EvidenceKind, Origin, Reason


@dataclass(frozen=True, slots=True)
class ReasonWording:
    """The plain words for one reason code, and which evidence fills its ``{source}`` and ``{destination}``."""

    text: str
    evidence: EvidenceKind | None = None
    origin: Origin | None = None
    """For a destination reason: the origin of the destination the reason is about."""


_DEST = EvidenceKind.DESTINATION
_FRAGMENT = EvidenceKind.FRAGMENT

REASON_WORDING: dict[Reason, ReasonWording] = {
    Reason.NO_EXTERNAL_COMMUNICATION: ReasonWording(
        "{tool} cannot send anything out (it has no external-communication leg), so it is allowed whatever the "
        "session holds; only a call that can send is judged on its destinations and content."
    ),
    Reason.NOT_ARMED: ReasonWording(
        "When {tool} was called the session had not yet read both untrusted content and private data; order "
        "matters: a send before untrusted content arrived was not steered by it. The same send after both would "
        "be judged on its destinations and content."
    ),
    Reason.DESTINATION_USER_SANCTIONED: ReasonWording(
        "The user named {destination} in their own words, so the user chose it; had it appeared only in tool "
        "output written by someone else, the send would be asked about.",
        _DEST,
        Origin.USER,
    ),
    Reason.DESTINATION_ALLOWLISTED: ReasonWording(
        "{destination} is on the allowlist; without that entry it would be judged by where the session first saw it.",
        _DEST,
        Origin.ALLOWLIST,
    ),
    Reason.DESTINATION_FROM_LISTING: ReasonWording(
        "{destination} came from {source}, a listing of the user's own things; had it appeared only in text "
        "someone else wrote, the send would be asked about.",
        _DEST,
        Origin.LISTING,
    ),
    Reason.DESTINATION_FROM_PRIVATE_CONTENT: ReasonWording(
        "{destination} came from the user's private content ({source}); had it appeared only in text someone "
        "else wrote, the send would be asked about.",
        _DEST,
        Origin.PRIVATE_TEXT,
    ),
    Reason.DESTINATION_ATTACKER_SUGGESTED: ReasonWording(
        "The user never named {destination}; it appeared only in the output of {source}, written by someone "
        "else. "
        "Had the user typed it, or were it on the allowlist, it would count as the user's.",
        _DEST,
        Origin.ATTACKER,
    ),
    Reason.DESTINATION_UNSEEN: ReasonWording(
        "{destination} appears nowhere the session has seen; had the user named it, it would count as the user's.",
        _DEST,
        Origin.UNSEEN,
    ),
    Reason.NO_DESTINATION: ReasonWording(
        "The call names no recipient; a readable address would be judged by where the session first saw it."
    ),
    Reason.NO_PRIVATE_FRAGMENT: ReasonWording(
        "Nothing private the session read is in the arguments; private content in them would have the call asked about."
    ),
    Reason.PRIVATE_FRAGMENT: ReasonWording(
        "The call carries text read from {source} (verbatim or encoded); without it the call would be judged "
        "on its destinations alone.",
        _FRAGMENT,
    ),
    Reason.PRIVATE_SOURCE_STEERED: ReasonWording(
        "Untrusted content chose what {source} read, so the user never asked for the private data it returned; "
        "had the user chosen what to read, its content could go where the user sends it.",
        _FRAGMENT,
    ),
    Reason.PRIVATE_TO_SHARED_PLACE: ReasonWording(
        "Private content read from {source} would be put where outsiders read; only what the user pointed at, "
        "or what that place itself returned, may go back there.",
        _FRAGMENT,
    ),
    Reason.PRIVATE_PARAPHRASE: ReasonWording(
        "The arguments restate rare tokens, numbers or identifiers read from {source}: weaker evidence, which "
        "tells only on a send somewhere suspect.",
        _FRAGMENT,
    ),
    Reason.PRIVATE_FILE_SENT: ReasonWording(
        "The call sends a file by reference: its content leaves, not its name; without that file reference "
        "nothing private would go.",
        _FRAGMENT,
    ),
    Reason.PRIVATE_IN_UNREQUESTED_SEND: ReasonWording(
        "The call carries private content read from {source}, the user never asked for an action of its kind, "
        "and only a listing showed its destination; had the user asked for such a send, it would be allowed.",
        _FRAGMENT,
    ),
    Reason.PRIVATE_IN_EMBEDDED_URL: ReasonWording(
        "Private content read from {source} rides in a URL that whoever renders the content fetches (an image, "
        "src=), to a host the user did not name; had the user named that host, it could go.",
        _FRAGMENT,
    ),
    Reason.REQUEST_CARRIES_NOTHING_NEW: ReasonWording(
        "The call fetches a URL exactly as the session saw it, with nothing else that can carry data; private "
        "data added to it would have it asked about."
    ),
    Reason.DESTINATION_USER_DELEGATED: ReasonWording(
        "The user asked for an action of this kind and pointed at the place ({source}) that shows "
        "{destination}; had the user named a destination of that kind, or were it money or a credential, it "
        "would be asked about.",
        _DEST,
        Origin.DELEGATED,
    ),
    Reason.RETURNED_TO_ORIGIN: ReasonWording(
        "The private content the call carries goes back to the server it came from, with no other recipient; the "
        "same content to anyone else would be asked about."
    ),
    Reason.SECRET_TO_RECIPIENT: ReasonWording(
        "The call carries a secret (a password, a token, a key, a one-time code) to a recipient, and the user's "
        "words ask for no secret to be sent; had they, it could go."
    ),
    Reason.PRIVATE_BEYOND_DELEGATION: ReasonWording(
        "The user delegated where to send (a place they pointed at), not what: the call carries private content "
        "from elsewhere."
    ),
    Reason.DESTINATION_LOOKALIKE: ReasonWording(
        "{destination} imitates a destination the user sanctioned (a prefix or suffix, a homoglyph, a hidden "
        "character or a small edit); only the address exactly as the user typed it counts as the user's.",
        _DEST,
        Origin.LOOKALIKE,
    ),
    Reason.DESTINATION_LOCAL: ReasonWording(
        "The call writes a local path, a place of the user's own; a remote recipient would be judged by where "
        "the session first saw it."
    ),
    Reason.DESTINATION_OWN_ACCOUNT: ReasonWording(
        "The call writes a place of the user's own (a note or an event of the user's), with no recipient; a "
        "recipient would be judged by where the session first saw it."
    ),
    Reason.STEERED_ACTION: ReasonWording(
        "A destructive, privileged or code-execution call whose target untrusted content ({source}) chose; had "
        "the user named the target, it would not be asked about.",
        EvidenceKind.STEERING,
    ),
    Reason.ARGUMENTS_UNAVAILABLE: ReasonWording(
        "The trace does not record the call's arguments, so nothing shows what it sends; with them recorded the "
        "monitor would judge what they carry."
    ),
    Reason.EVIDENCE_TRUNCATED: ReasonWording(
        "Content a bound left unexamined ({source}) could carry what would stop the call: it counts against "
        "it. Examined in full, the call would be judged on what it holds.",
        EvidenceKind.UNEXAMINED,
    ),
    Reason.ENFORCED: ReasonWording(
        "In enforce mode an exfiltration to the attacker's destination is denied; without enforcement it "
        "would be asked about."
    ),
    Reason.BASELINE_ASKS: ReasonWording(
        "The baseline client profile asks about this call itself; without the baseline the monitor's own "
        "action would stand."
    ),
    Reason.BASELINE_BLOCKS: ReasonWording(
        "The baseline client profile blocks this call; without the baseline the monitor's own action would stand."
    ),
    Reason.MONITOR_ERROR: ReasonWording(
        "The engine failed on this call and asks rather than let it go unjudged; the error is printed on "
        "standard error (--debug shows the traceback)."
    ),
    Reason.TOOL_UNREVIEWED: ReasonWording(
        "Under the reviewed-only policy, {tool} has no reviewed rule, so it goes to review whatever its annotations "
        "claim; a reviewed rule covering it would let its reads through."
    ),
    Reason.APPROVAL_REQUIRED: ReasonWording(
        "Under the reviewed-only policy, {tool} writes and no approval for this tool with these arguments is on "
        "record; an approval the host records would let it run once."
    ),
    Reason.APPROVAL_USED: ReasonWording(
        "Under the reviewed-only policy, {tool} writes, and an approval on record for this tool with these "
        "arguments was used; the next such call needs a new one."
    ),
    Reason.RECONCILE: ReasonWording(
        "The same {tool} call was made before and its outcome is unknown (no result, or an error): what the first "
        "attempt did must be checked before it is repeated; a retry contract in the tool's reviewed rule allows it."
    ),
    Reason.REVIEW_REQUESTED: ReasonWording(
        "Under the reviewed-only policy, {tool} asks for a person's confirmation before each call (its action "
        "metadata says requiresReview), and a request that only adds a confirmation is taken from any server."
    ),
    Reason.OUT_OF_SCOPE: ReasonWording(
        "Under the reviewed-only policy, the call reaches outside the scope the user gave (a server, tool or "
        "destination not in it), so it is denied; widening the scope would change that."
    ),
}
"""One wording per :class:`~monitor.models.Reason` member."""


def look_up_wording(reason: Reason) -> ReasonWording:
    """Return the wording of ``reason`` (a code the table does not know gets its code as its wording)."""
    return REASON_WORDING.get(reason, ReasonWording(reason.value))
