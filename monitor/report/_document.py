"""The JSON contract of ``analyze --format json|jsonl`` (docs/design.md, "JSON output").

Schema version 2 adds, and changes nothing else: ``source`` of a session (the input file its first record was
read from), ``source``, ``time`` and ``arguments`` of a call (where its record was read, when it was made, its
arguments bounded), ``steps`` of an alert (the path found on the capability graph: ``call_id``, ``tool``,
``server``, ``index``, ``role``, ``via``, ``to``) and ``shown`` in the summary (sessions written after
``--level``/``--min-severity``). A field the input did not carry is ``null``.
"""

from __future__ import annotations

import hashlib
from typing import IO, Any

import orjson

from monitor.models import AnalysisSummary, Posture, RecordError, SessionReport

SCHEMA_VERSION = 2


def hash_ruleset(canonical_rules: list[Any]) -> str:
    """sha256 of the canonical JSON of the loaded rules (an empty list when none are loaded)."""
    return hashlib.sha256(orjson.dumps(canonical_rules, option=orjson.OPT_SORT_KEYS)).hexdigest()


def session_to_json(report: SessionReport) -> dict[str, Any]:
    """One session object of the JSON document."""
    return {
        "session_id": report.session_id,
        "source": report.source,
        "level": report.level.value,
        "legs": [leg.value for leg in report.legs],
        "exposed": report.exposed,
        "calls": [
            {
                "call_id": call.call_id,
                "index": call.index,
                "server": call.server,
                "tool": call.tool,
                "legs": [leg.value for leg in call.legs],
                "provenance": {
                    leg.value: {"source": call.provenance[leg].source.value, "rule": call.provenance[leg].rule}
                    for leg in call.legs
                },
                "decision": {
                    "action": call.decision.action.value,
                    "level": call.decision.level.value,
                    "reasons": [r.value for r in call.decision.reasons],
                },
                "source": call.source,
                "time": call.time.isoformat() if call.time else None,
                "arguments": call.arguments,
            }
            for call in report.calls
        ],
        "alerts": [
            {
                "kind": alert.kind.value,
                "severity": alert.severity.value,
                "call_id": alert.call_id,
                "message": alert.message,
                "path": list(alert.path),
                "evidence": [
                    {"kind": e.kind.value, "from_call": e.from_call, "detail": e.detail} for e in alert.evidence
                ],
                "steps": [
                    {
                        "call_id": step.call_id,
                        "tool": step.tool,
                        "server": step.server,
                        "index": step.index,
                        "role": step.role.value,
                        "via": step.via,
                        "to": step.to,
                    }
                    for step in alert.steps
                ],
            }
            for alert in report.alerts
        ],
    }


class JsonDocumentWriter:
    """Writes the single JSON document incrementally: sessions as they finish, errors and summary last."""

    def __init__(self, out: IO[bytes], *, tool_version: str, ruleset_sha256: str, posture: Posture) -> None:
        self._out = out
        self._first = True
        self._shown = 0
        self._errors: list[RecordError] = []
        head = {
            "schema_version": SCHEMA_VERSION,
            "tool_version": tool_version,
            "ruleset_sha256": ruleset_sha256,
            "posture": posture.value,
        }
        out.write(orjson.dumps(head)[:-1] + b', "sessions": [')

    def write_session(self, report: SessionReport) -> None:
        """Append one session to the ``sessions`` array."""
        self._out.write((b"\n" if self._first else b",\n") + orjson.dumps(session_to_json(report)))
        self._first = False
        self._shown += 1

    def write_error(self, error: RecordError) -> None:
        """Keep an error for the ``errors`` array."""
        self._errors.append(error)

    def close(self, summary: AnalysisSummary) -> None:
        """Write ``errors`` and ``summary`` and end the document."""
        errors = orjson.dumps([e.model_dump() for e in self._errors])
        tail = orjson.dumps(summary_to_json(summary, shown=self._shown))
        self._out.write(b'\n], "errors": ' + errors + b', "summary": ' + tail + b"}\n")


class JsonLinesWriter:
    """Writes one session object per line, as sessions finish."""

    def __init__(self, out: IO[bytes]) -> None:
        self._out = out

    def write_session(self, report: SessionReport) -> None:
        """Write one session line."""
        self._out.write(orjson.dumps(session_to_json(report)) + b"\n")

    def write_error(self, error: RecordError) -> None:
        """Errors are not part of the JSON lines stream (they go to standard error)."""

    def close(self, summary: AnalysisSummary) -> None:
        """Nothing to close."""


def summary_to_json(summary: AnalysisSummary, *, shown: int | None = None) -> dict[str, Any]:
    """The ``summary`` object: counts over every session analysed; ``shown`` the sessions written (all of them
    when not given)."""
    return {
        "sessions": summary.sessions,
        "shown": summary.sessions if shown is None else shown,
        "calls": summary.calls,
        "by_level": dict(sorted(summary.by_level.items())),
        "by_action": dict(sorted(summary.by_action.items())),
    }
