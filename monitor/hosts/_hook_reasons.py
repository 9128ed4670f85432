"""One line a person understands, from a :class:`~monitor.models.Decision`: what the call would do and why.

Claude Code shows a hook's ``permissionDecisionReason`` to the user when it asks, and to the model when it
denies. The line is built from the decision's reasons and evidence: where the call sends and who chose that
destination, which earlier calls the private data in it came from (by the tool that returned it), and what
else counted against it. Reason codes without a wording of their own are given as they are.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from monitor.models import Action, Decision, Evidence, EvidenceKind, Reason

MAX_REASON_CHARS = 600
_EXCERPT_CHARS = 48
_SPACES = re.compile(r"\s+")

# Who chose a destination, as the evidence says it (monitor.models.Origin values).
_ORIGINS = {
    "attacker-suggested": "an address only untrusted content{source} suggested",
    "unseen": "a destination that appears nowhere in the session",
    "lookalike": "which imitates a destination you named",
    "listing": "taken from a listing{source}",
    "private-text": "taken from private content{source}",
    "user-delegated": "from a place you pointed at",
    "user-sanctioned": "which you named",
    "allowlisted": "which is allowlisted",
}
_CLAUSES: dict[Reason, str] = {
    Reason.PRIVATE_SOURCE_STEERED: "that data was read where untrusted content pointed",
    Reason.PRIVATE_TO_SHARED_PLACE: "it puts private data where others can read it",
    Reason.PRIVATE_PARAPHRASE: "it paraphrases private data of the session",
    Reason.PRIVATE_FILE_SENT: "it uploads a private file",
    Reason.PRIVATE_IN_UNREQUESTED_SEND: "you did not ask for a send of this kind, and it carries private data",
    Reason.PRIVATE_IN_EMBEDDED_URL: "a URL in it that is fetched when shown (an image) carries private data to a "
    "host you did not name",
    Reason.ARGUMENTS_UNAVAILABLE: "its arguments could not all be examined",
    Reason.EVIDENCE_TRUNCATED: "content of the session too large to examine in full could be in it",
    Reason.MONITOR_ERROR: "the monitor failed while checking it",
    Reason.BASELINE_ASKS: "your client's own rules ask about it",
    Reason.BASELINE_BLOCKS: "your client's own rules block it",
    Reason.ENFORCED: "enforce mode blocks it",
    Reason.TOOL_UNREVIEWED: "the tool has no reviewed record (reviewed-only policy)",
    Reason.APPROVAL_REQUIRED: "it writes and no approval for it is on record",
    Reason.RECONCILE: "the same call was made before and its outcome is unknown: reconcile first",
    Reason.REVIEW_REQUESTED: "the tool asks for your confirmation before each call",
}


def describe_decision(decision: Decision, tool: str, tools_by_call: Mapping[str, str]) -> str:
    """Return the one-line reason for ``decision`` on a call of ``tool`` (the name the host gave it);
    ``tools_by_call`` names the tool of each earlier call, so that evidence can say where data came from."""
    if decision.action is Action.ALLOW:
        codes = ", ".join(r.value for r in decision.reasons) or "no concern"
        return _one_line(f"trifecta-monitor: no trifecta concern for this {tool} call ({codes})")
    verb = "blocked" if decision.action is Action.DENY else "asks about"
    clauses: list[str] = []
    destinations = [
        _describe_destination(e, tools_by_call) for e in decision.evidence if e.kind is EvidenceKind.DESTINATION
    ]
    if destinations:
        clauses.append("it sends to " + ", ".join(destinations))
    fragments = [e for e in decision.evidence if e.kind is EvidenceKind.FRAGMENT]
    if fragments:
        clauses.append(f"it carries private data from {_sources(fragments, tools_by_call)} ({_excerpt(fragments[0])})")
    for item in decision.evidence:
        if item.kind is EvidenceKind.STEERING:
            clauses.append(f"untrusted content{_source(item, tools_by_call)} chose its target ({_excerpt(item)})")
        elif item.kind is EvidenceKind.UNEXAMINED:
            clauses.append(f"content{_source(item, tools_by_call)} too large to examine could be in it")
        elif item.kind is EvidenceKind.SCOPE:
            clauses.append(f"it is outside the scope you gave ({item.detail})")
    for reason in decision.reasons:
        clause = _CLAUSES.get(reason)
        if clause is not None and clause not in clauses:
            clauses.append(clause)
    if not clauses:
        clauses.append(", ".join(r.value for r in decision.reasons) or "no reason given")
    context = f"the session is at level {decision.level.value}"
    return _one_line(f"trifecta-monitor {verb} this {tool} call: {'; '.join(clauses)} ({context})")


def _describe_destination(item: Evidence, tools_by_call: Mapping[str, str]) -> str:
    value, _, origin = item.split_detail()
    wording = _ORIGINS.get(origin)
    if wording is None:
        return value
    return f"{value}, {wording.format(source=_source(item, tools_by_call))}"


def _source(item: Evidence, tools_by_call: Mapping[str, str]) -> str:
    tool = tools_by_call.get(item.from_call or "")
    return f" (from {tool})" if tool else ""


def _sources(items: list[Evidence], tools_by_call: Mapping[str, str]) -> str:
    names = list(dict.fromkeys(tools_by_call.get(e.from_call or "", "the conversation") for e in items))
    return " and ".join(names) if len(names) <= 2 else ", ".join(names[:-1]) + " and " + names[-1]


def _excerpt(item: Evidence) -> str:
    text, _, how = item.split_detail()  # how the text was found: "verbatim", "base64", "secret", ...
    body = _SPACES.sub(" ", text).strip()
    if len(body) > _EXCERPT_CHARS:
        body = body[: _EXCERPT_CHARS - 1] + "…"
    return f"“{body}”, {how}" if how else f"“{body}”"


def _one_line(text: str) -> str:
    text = _SPACES.sub(" ", text).strip()
    return text if len(text) <= MAX_REASON_CHARS else text[: MAX_REASON_CHARS - 1] + "…"
