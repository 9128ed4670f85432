"""Decisions, levels, reasons, evidence and alerts: what the engine says about a call and a session.

``Reason`` and ``EvidenceKind`` are defined beside the reasons' words (``_reasons``) and re-exported here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import StrEnum
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, field_serializer

from monitor.models._legs import Leg, sort_legs
from monitor.models._ranked import RankedStrEnum
from monitor.models._reasons import REASON_WORDING
from monitor.models._reasons import EvidenceKind as EvidenceKind
from monitor.models._reasons import Reason as Reason
from monitor.models._tools import Finding, Severity


class Action(RankedStrEnum):
    """What a host should do with a requested call; ``rank`` orders them by strictness."""

    ALLOW = "allow"
    CONFIRM = "confirm"
    REVIEW = "review"
    """The tool has no reviewed record (``reviewed-only`` policy): hosts ask, as for ``confirm``. Stricter than
    ``confirm``, since a reviewed record is missing whatever the call's arguments; less strict than ``deny``."""
    DENY = "deny"

    @property
    def asked_as(self) -> Action:
        """What a host does with it: ``review`` is asked about as ``confirm`` is; the others are themselves."""
        return Action.CONFIRM if self is Action.REVIEW else self


class Level(RankedStrEnum):
    """How far a session (or the call that got it there) has gone towards the trifecta; ``rank`` orders
    clean < partial < armed < trifecta < exfiltration."""

    CLEAN = "clean"
    PARTIAL = "partial"
    ARMED = "armed"
    TRIFECTA = "trifecta"
    EXFILTRATION = "exfiltration"


class Evidence(BaseModel):
    """One piece of evidence: private content found in a call's arguments, or a destination's origin."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: EvidenceKind
    from_call: str | None
    detail: str

    def split_detail(self) -> EvidenceDetail:
        """Return the parts of ``detail``. A destination's detail reads ``value at /path: origin``; a fragment's
        or a steering value's ``text (how)`` (the transform, or the effects). A detail of another form is all
        ``text``."""
        detail = self.detail
        if self.kind is EvidenceKind.DESTINATION:
            head, sep, origin = detail.rpartition(": ")
            value, at_sep, path = head.rpartition(" at ")
            if sep and at_sep and origin and " " not in origin:
                return EvidenceDetail(value, path, origin)
        elif self.kind in (EvidenceKind.FRAGMENT, EvidenceKind.STEERING) and detail.endswith(")"):
            text, sep, how = detail[:-1].rpartition(" (")
            if sep and how:
                return EvidenceDetail(text, "", how)
        return EvidenceDetail(detail, "", "")


class EvidenceDetail(NamedTuple):
    """The parts of an evidence item's ``detail`` (see :meth:`Evidence.split_detail`)."""

    text: str
    """The value or text found."""
    at: str
    """Where in the call's arguments (destinations), else empty."""
    how: str
    """Who chose a destination (its origin), how a fragment was found (its transform), or a steered value's
    effects; empty when the detail does not say."""


class Decision(BaseModel):
    """The verdict on one requested call: a pure function of the session state and the call."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    call_id: str
    action: Action
    level: Level
    legs_before: frozenset[Leg]
    legs_call: frozenset[Leg]
    reasons: tuple[Reason, ...]
    rule_ids: tuple[str, ...] = ()
    evidence: tuple[Evidence, ...] = ()
    monitor_action: Action | None = None
    """With a baseline client profile: what the monitor alone decided (``action`` is the stricter)."""
    findings: tuple[Finding, ...] = ()
    """Problems with the request as the host made it (e.g. ``call-id-reused``: ``call_id`` is not the id given)."""

    @field_serializer("legs_before", "legs_call", when_used="json")
    def serialize_legs(self, legs: frozenset[Leg]) -> list[Leg]:
        """Legs in JSON in their canonical order (a set has none of its own), the same in every process."""
        return sort_legs(legs)

    def describe(self, tool: str = "tool", tools_by_call: Mapping[str, str] | None = None) -> str:
        """One line a person understands: what this call of ``tool`` would do and why the monitor allows, asks or
        blocks it (who chose where it sends, which earlier calls the private data in it came from), at most 600
        characters. ``tools_by_call`` names the tool of each earlier call id, so the line can say where data came
        from ("it carries private data from read_inbox"). Hosts show it where they ask the user."""
        return _describe_decision(self, tool, tools_by_call)


class AlertKind(StrEnum):
    """Kinds of alert a session raises."""

    EXPOSED = "exposed"
    ARMED = "armed"
    TRIFECTA = "trifecta"
    EXFILTRATION = "exfiltration"
    HIJACK = "hijack"
    INVALID_ANNOTATION = "invalid-annotation"
    DEFINITION_CHANGED = "definition-changed"
    EVIDENCE_TRUNCATED = "evidence-truncated"
    MONITORING_GAP = "monitoring-gap"
    PIN_UNCHECKED = "pin-unchecked"
    """A pinned rule covers a tool whose definition the session never listed, so its pin could not be checked."""


ALERT_SEVERITY: dict[AlertKind, Severity] = {
    AlertKind.EXPOSED: Severity.INFO,
    AlertKind.ARMED: Severity.WARNING,
    AlertKind.TRIFECTA: Severity.HIGH,
    AlertKind.EXFILTRATION: Severity.CRITICAL,
    AlertKind.HIJACK: Severity.HIGH,
    AlertKind.INVALID_ANNOTATION: Severity.WARNING,
    AlertKind.DEFINITION_CHANGED: Severity.HIGH,
    AlertKind.EVIDENCE_TRUNCATED: Severity.INFO,
    AlertKind.MONITORING_GAP: Severity.HIGH,
    AlertKind.PIN_UNCHECKED: Severity.INFO,
}


class PathRole(StrEnum):
    """What a call is on an alert's path: where untrusted content or private data came in, a call the data
    passed through, or the call that sent it out."""

    UNTRUSTED_SOURCE = "untrusted-source"
    PRIVATE_SOURCE = "private-source"
    RELAY = "relay"
    SINK = "sink"


class PathStep(BaseModel):
    """One call on an alert's path: its id, tool, server and index in the session, and its role.

    ``via`` says how the data reached the next step (``to``): ``flows_to:<evidence kinds>`` (evidence links this
    call's output to that call's arguments, e.g. ``flows_to:fragment+secret``) or ``order`` (no evidence edge:
    the later call merely came after it, with this call's content in the context); empty on the sink."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    call_id: str
    tool: str
    server: str
    index: int
    role: PathRole
    via: str = ""
    to: str = ""
    """The id of the call the data went to next (empty on the sink)."""


class Alert(BaseModel):
    """An alert raised in a session, with the call path and the evidence behind it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: AlertKind
    severity: Severity
    call_id: str | None
    message: str
    path: tuple[str, ...] = ()
    evidence: tuple[Evidence, ...] = ()
    steps: tuple[PathStep, ...] = ()
    """The path found by a search on the capability graph, from the untrusted and private sources to the sink
    (trifecta, exfiltration and hijack alerts; empty otherwise)."""


# -- the one line of a decision (Decision.describe): hosts show it where they ask ------------------------------
# Claude Code shows a hook's ``permissionDecisionReason`` to the user when it asks, and to the model when it
# denies; the MCP proxy and guard put it in their answers; ``trifecta explain`` prints it. It is built from the
# decision's reasons and evidence: where the call sends and who chose that destination, which earlier calls the
# private data in it came from (by the tool that returned it), and what else counted against it. Reason codes
# without a wording of their own are given as they are.

_MAX_LINE_CHARS = 600
_EXCERPT_CHARS = 48
_SPACES = re.compile(r"\s+")

# What the line says of a destination, by who chose it (monitor.models.Origin values), and of a reason: the
# clauses of REASON_WORDING, where each reason's words are kept beside its explanation.
_ORIGINS = {w.origin.value: w.clause for w in REASON_WORDING.values() if w.origin is not None and w.clause}
_CLAUSES = {r: w.clause for r, w in REASON_WORDING.items() if w.origin is None and w.clause}


def _describe_decision(decision: Decision, tool: str, tools_by_call: Mapping[str, str] | None = None) -> str:
    """Return the one-line reason for ``decision`` on a call of ``tool`` (the name the host gave it);
    ``tools_by_call`` names the tool of each earlier call, so that evidence can say where data came from."""
    tools_by_call = tools_by_call or {}
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
    return text if len(text) <= _MAX_LINE_CHARS else text[: _MAX_LINE_CHARS - 1] + "…"
