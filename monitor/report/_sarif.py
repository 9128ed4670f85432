"""SARIF 2.1.0 of ``trifecta analyze --format sarif``: one result per alert, for code scanning dashboards.

The log holds one run of the tool ``trifecta-monitor`` with one rule per alert kind (``trifecta/<kind>``, its
default level from the kind's severity) and one result per alert of every session written:

- ``level``: ``error`` for critical and high alerts, ``warning`` for warnings, ``note`` for information;
  ``properties.security-severity`` gives code scanning the severity as a number.
- ``locations``: where the record of the alert's call was read (see :func:`parse_source`): the input file,
  with ``region.startLine`` for a line format; an archive member, an AgentDojo message, a span of an OTLP
  document or a hook store record as a logical location. An alert without a call points at the session's
  first call, else at the session's input file.
- ``codeFlows``: the alert's path (``Alert.steps``: from untrusted content and private sources to the sink,
  else its call ids) as one thread flow, one location per call: its call id, tool, server, role and source.
- ``partialFingerprints``: ``trifectaAlert/v1``, a hash of the session id, the alert kind and the calls
  involved: the same alert keeps its fingerprint when lines move or the analysis runs again.
- ``properties``: the session id, its level, the alert's call id and severity.

Results are kept until :meth:`SarifWriter.close`, which writes the whole log (input errors are not results:
they go to standard error as for the table).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import IO, Any

import orjson

from monitor.models import (
    ALERT_SEVERITY,
    Alert,
    AlertKind,
    AnalysisSummary,
    CallReport,
    RecordError,
    SessionReport,
    Severity,
)
from monitor.report._sarif_log import build_physical_location, build_rule, build_sarif_log

FINGERPRINT_KEY = "trifectaAlert/v1"
"""The ``partialFingerprints`` key of an alert: session id, alert kind and the calls involved, hashed."""
RULE_PREFIX = "trifecta/"

_LEVEL = {Severity.CRITICAL: "error", Severity.HIGH: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
_SECURITY_SEVERITY = {Severity.CRITICAL: "9.5", Severity.HIGH: "8.0", Severity.WARNING: "5.0", Severity.INFO: "2.0"}

_RULE_TEXT: dict[AlertKind, tuple[str, str]] = {
    AlertKind.EXPOSED: (
        "The session's tools cover all three legs",
        "The tools available in the session can read private data, take in untrusted content and communicate "
        "externally: an injected instruction could chain them.",
    ),
    AlertKind.ARMED: (
        "Untrusted content and private data are both in the context",
        "The session has taken in untrusted content and private data: the next external communication would "
        "complete the lethal trifecta.",
    ),
    AlertKind.TRIFECTA: (
        "External communication while untrusted content and private data are in the context",
        "A call that communicates externally was requested after untrusted content and private data entered "
        "the context: the lethal trifecta.",
    ),
    AlertKind.EXFILTRATION: (
        "Private data sent out, or sent where only untrusted content pointed",
        "An external call carries private content, or sends to a destination that only untrusted content "
        "suggested, while the session is armed.",
    ),
    AlertKind.HIJACK: (
        "A consequential action steered by untrusted content",
        "A call with an effect (writing, deleting, paying, running code) takes its target or content from "
        "untrusted content the user never asked for.",
    ),
    AlertKind.INVALID_ANNOTATION: (
        "A tool's annotations are malformed",
        "A tool listing carries annotations that cannot be read as MCP tool annotations; they were ignored.",
    ),
    AlertKind.DEFINITION_CHANGED: (
        "A tool's definition changed during the session",
        "A server listed a tool again with a different description or schema (a possible rug pull).",
    ),
    AlertKind.EVIDENCE_TRUNCATED: (
        "Evidence was cut to its bounds",
        "The session held more content than the evidence bounds keep: some flows may be missed.",
    ),
    AlertKind.MONITORING_GAP: (
        "Calls the monitor could not see in full",
        "The session has calls whose arguments or results were not recorded: decisions may rest on less than "
        "what happened.",
    ),
    AlertKind.PIN_UNCHECKED: (
        "A pinned rule's tool was never listed",
        "A reviewed rule pins a tool definition, but the session never listed that tool, so the pin could not "
        "be checked.",
    ),
}

_LINE = re.compile(r"(.+):(\d+)")
_ARCHIVE_MEMBER = re.compile(r"(.+?\.(?:tar\.gz|tgz|tar))!(.+)")


@dataclass(frozen=True, slots=True)
class SourcePlace:
    """Where a record was read, taken apart: the input file, the line, the member of an archive and the place
    inside the file or member (an AgentDojo message, an OTLP span pointer, a hook store ``seq=N``)."""

    file: str
    line: int | None = None
    member: str | None = None
    pointer: str | None = None


def parse_source(source: str) -> SourcePlace:
    """Take an event's ``source`` apart: ``file:line``, ``file#pointer``, ``archive!member`` or
    ``archive!member#pointer`` (the forms the readers write); anything else is a file name."""
    match = _LINE.fullmatch(source)
    if match is not None:
        return SourcePlace(match.group(1), line=int(match.group(2)))
    where, hash_sign, pointer = source.rpartition("#")
    if not hash_sign or not where:
        where, pointer = source, ""
    archive = _ARCHIVE_MEMBER.fullmatch(where)
    if archive is not None:
        return SourcePlace(archive.group(1), member=archive.group(2), pointer=pointer or None)
    return SourcePlace(where, pointer=pointer or None)


def build_location(source: str, *, message: str | None = None) -> dict[str, Any]:
    """A SARIF ``location`` for an event's ``source``: the file (and line), and a logical location for what is
    inside it."""
    place = parse_source(source)
    location: dict[str, Any] = {"physicalLocation": build_physical_location(place.file, place.line)}
    inner = "#".join(p for p in (place.member, place.pointer) if p)
    if inner:
        logical: dict[str, Any] = {"fullyQualifiedName": inner, "kind": "element"}
        if place.member is not None:
            logical["name"] = place.member
        location["logicalLocations"] = [logical]
    if message is not None:
        location["message"] = {"text": message}
    return location


def compute_fingerprint(session_id: str, alert: Alert) -> str:
    """The stable fingerprint of an alert: its session, kind and the ids of the calls involved (path, then
    the alert's call), hashed; never a line number or a time."""
    calls = [step.call_id for step in alert.steps] or list(alert.path)
    key = orjson.dumps([session_id, alert.kind.value, calls, alert.call_id])
    return hashlib.sha256(key).hexdigest()


def build_rules() -> list[dict[str, Any]]:
    """The ``rules`` of the driver: one per :class:`~monitor.models.AlertKind`, in the enum's order."""
    rules = []
    for kind in AlertKind:
        short, full = _RULE_TEXT[kind]
        severity = ALERT_SEVERITY[kind]
        properties = {"tags": ["security", "mcp", "lethal-trifecta"], "security-severity": _SECURITY_SEVERITY[severity]}
        rules.append(
            build_rule(
                RULE_PREFIX + kind.value,
                slug=kind.value,
                short=short,
                full=full,
                level=_LEVEL[severity],
                properties=properties,
            )
        )
    return rules


def _flow_steps(alert: Alert, calls: dict[str, CallReport]) -> list[tuple[str, str, str, str]]:
    """``(call id, tool, server, role)`` of each call on the alert's path; the alert's call when it has no
    path."""
    if alert.steps:
        return [(s.call_id, s.tool, s.server, s.role.value) for s in alert.steps]
    ids = list(alert.path) or ([alert.call_id] if alert.call_id else [])
    return [(i, calls[i].tool, calls[i].server, "") if i in calls else (i, "", "", "") for i in ids]


def build_result(report: SessionReport, alert: Alert, rule_index: dict[str, int]) -> dict[str, Any]:
    """One SARIF result: an alert of a session, located at its call, with its path as a code flow."""
    calls = {call.call_id: call for call in report.calls}
    call = calls.get(alert.call_id) if alert.call_id else None
    anchor = call or (report.calls[0] if report.calls else None)
    source = (anchor.source if anchor else None) or report.source
    steps = _flow_steps(alert, calls)
    flow_locations = []
    for call_id, tool, server, role in steps:
        step_source = calls[call_id].source if call_id in calls else None
        text = f"{call_id}: {server}/{tool}" + (f" ({role})" if role else "")
        location = (
            build_location(step_source, message=text)
            if step_source
            else {"logicalLocations": [{"name": call_id, "kind": "function"}], "message": {"text": text}}
        )
        properties = {"callId": call_id, "tool": tool, "server": server, "role": role, "source": step_source}
        flow_locations.append({"location": location, "properties": {k: v for k, v in properties.items() if v}})
    if not flow_locations:  # an alert about the session as a whole: the flow is the session
        where = build_location(source) if source else {"logicalLocations": [{"name": report.session_id}]}
        flow_locations.append({"location": {**where, "message": {"text": f"session {report.session_id}"}}})
    rule_id = RULE_PREFIX + alert.kind.value
    result: dict[str, Any] = {
        "ruleId": rule_id,
        "ruleIndex": rule_index[rule_id],
        "level": _LEVEL[alert.severity],
        "message": {"text": f"{report.session_id}: {alert.message}"},
        "codeFlows": [{"threadFlows": [{"locations": flow_locations}]}],
        "partialFingerprints": {FINGERPRINT_KEY: compute_fingerprint(report.session_id, alert)},
        "properties": {
            "sessionId": report.session_id,
            "sessionLevel": report.level.value,
            "severity": alert.severity.value,
            "callId": alert.call_id,
        },
    }
    if source:
        result["locations"] = [build_location(source)]
    else:
        result["locations"] = [{"logicalLocations": [{"name": report.session_id, "kind": "module"}]}]
    return result


class SarifWriter:
    """Writes ``trifecta analyze --format sarif``: a SARIF 2.1.0 log, one result per alert (see the module)."""

    def __init__(self, out: IO[bytes]) -> None:
        self._out = out
        self._rules = build_rules()
        self._rule_index = {rule["id"]: i for i, rule in enumerate(self._rules)}
        self._results: list[dict[str, Any]] = []

    def write_session(self, report: SessionReport) -> None:
        """Add a result for each alert of the session."""
        for alert in report.alerts:
            self._results.append(build_result(report, alert, self._rule_index))

    def write_error(self, error: RecordError) -> None:
        """Input errors are not results of the log."""

    def close(self, summary: AnalysisSummary) -> None:
        """Write the log."""
        log = build_sarif_log(
            self._rules,
            self._results,
            invocation={"executionSuccessful": True},
            properties={"sessions": summary.sessions, "calls": summary.calls},
        )
        self._out.write(orjson.dumps(log, option=orjson.OPT_INDENT_2) + b"\n")
