"""The names the span processor writes (span, log and metric attributes), and the alert it reports."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from monitor.models import LEG_ORDER, Alert, AlertRaised, CallDecided, Decision, Leg, Level
from monitor.spans import SESSION_KEYS

_EVIDENCE_SUMMARY = 1024  # characters

# -- our own names (opentelemetry-semantic-conventions marks the GenAI ones as moved: none are imported) -----

ATTR_SESSION_ID = "trifecta.session_id"
"""Span and log attribute: the session the span belongs to, as the monitor resolved it."""
ATTR_LEVEL = "trifecta.level"
"""Span and log attribute: the session's level (``clean`` … ``exfiltration``)."""
LEVEL_PENDING = "pending"
"""The ``trifecta.level`` stamped on a span that starts before the engine caught up with its session (it has not
analysed every span of the session that ended before): no ``trifecta.legs`` with it. The span gets its true
level and legs if the engine catches up while it is still recording."""
LEVEL_UNKNOWN = "unknown"
"""The ``trifecta.level`` stamped on a span whose session lost spans before the engine saw them (dropped from a
full queue, or with an engine process that died), until the engine ends the session: no ``trifecta.legs``."""
ATTR_LEGS = "trifecta.legs"
"""Span and log attribute: the legs in the session's context, as one string: their names in the order
``private_data``, ``untrusted_content``, ``external_communication``, joined by commas (``""``: none yet).

One string rather than an array: every tracing backend can filter on it, and exporters encode it several
times faster (an OTLP array of strings costs the exporter about 4 µs more per span)."""
ATTR_ALERT_KIND = "trifecta.alert.kind"
"""Log and metric attribute: the alert's kind (``armed``, ``trifecta``, ``exfiltration``, …)."""
ATTR_ALERT_SEVERITY = "trifecta.alert.severity"
"""Log and metric attribute: the alert's severity (``info``, ``warning``, ``high``, ``critical``)."""
ATTR_ALERT_PATH = "trifecta.alert.path"
"""Log attribute: the call path behind the alert (call ids)."""
ATTR_TOOL = "trifecta.tool"
"""Log attribute: the tool of the call the alert is about."""
ATTR_SERVER = "trifecta.server"
"""Log attribute: the server of the call the alert is about."""
ATTR_CALL_ID = "trifecta.call_id"
"""Log attribute: the call the alert is about (the monitor's call id)."""
ATTR_EVIDENCE = "trifecta.evidence"
"""Log attribute: a one-line summary of the alert's evidence."""
ATTR_ACTION = "trifecta.action"
"""Log and metric attribute: the decision's action (``allow``, ``confirm``, ``deny``)."""
ATTR_ERROR_KIND = "trifecta.error.kind"
"""Metric attribute: where an internal error happened (``on_start``, ``on_end``, ``engine``, …)."""

ALERT_EVENT_NAME = "trifecta.alert"
"""The event name of the log record emitted for each alert."""
DECISION_EVENT_NAME = "trifecta.decision"
"""The event name of the log record emitted for each decided call (only with ``guardrail_attributes``)."""
EVENT_NOT_INSTALLED = "trifecta.not_installed"
"""The event name of the ERROR log record that says the span processor could not be installed."""

METRIC_ALERTS = "trifecta.alerts"
"""Counter: alerts raised, by kind and severity."""
METRIC_DECISIONS = "trifecta.decisions"
"""Counter: tool calls decided, by action."""
METRIC_INTERNAL_ERRORS = "trifecta.internal_errors"
"""Counter: failures inside the processor or the engine, by kind. None of them reaches the application."""

METRIC_DROPPED = "trifecta.dropped"
"""Counter: spans not analysed because the queue to the engine was full (each session hit gets an alert)."""

BAGGAGE_SESSION_KEYS = (ATTR_SESSION_ID, *SESSION_KEYS)
"""Baggage entries that name a session, in precedence order."""


@dataclass(frozen=True, slots=True)
class TrifectaAlert:
    """One alert as the span processor reports it: the engine's :class:`Alert` and where it happened.

    ``trace_id`` and ``span_id`` (lowercase hex) name the span that triggered it; ``server``, ``tool`` and
    ``decision`` describe the call the alert is about, when it is about one.
    """

    alert: Alert
    session_id: str
    level: Level
    legs: tuple[Leg, ...]
    server: str | None
    tool: str | None
    decision: Decision | None
    trace_id: str
    span_id: str


def format_legs(legs: Iterable[Leg | str]) -> str:
    """The ``trifecta.legs`` value for these legs (``"private_data,untrusted_content"``)."""
    present = {Leg(leg) for leg in legs}
    return ",".join(leg.value for leg in LEG_ORDER if leg in present)


def read_legs(value: str) -> tuple[Leg, ...]:
    """The legs a ``trifecta.legs`` value names (raises ``ValueError`` for a name that is not a leg)."""
    return tuple(Leg(name) for name in value.split(",")) if value else ()


def summarize_evidence(alert: Alert, limit: int = _EVIDENCE_SUMMARY) -> str:
    """Summarize an alert's evidence on one line (``fragment from call-2: …; destination: …``)."""
    parts = []
    for item in alert.evidence:
        source = f" from {item.from_call}" if item.from_call else ""
        parts.append(f"{item.kind.value}{source}: {item.detail}")
    text = "; ".join(parts)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def make_alert_attributes(notice: AlertRaised, level: str, legs: str) -> dict[str, Any]:
    """The attributes of an alert's log record: the alert, its session with the ``level`` and ``legs`` it
    stands at, and the call the alert is about, when it is about one."""
    alert, decision = notice.alert, notice.decision
    attributes: dict[str, Any] = {
        ATTR_ALERT_KIND: alert.kind.value,
        ATTR_ALERT_SEVERITY: alert.severity.value,
        ATTR_SESSION_ID: notice.session_id,
        ATTR_LEVEL: level,
        ATTR_LEGS: legs,
        ATTR_EVIDENCE: summarize_evidence(alert),
        ATTR_ALERT_PATH: list(alert.path),
    }
    if alert.call_id is not None:
        attributes[ATTR_CALL_ID] = alert.call_id
    if notice.tool is not None:
        attributes[ATTR_TOOL] = notice.tool
    if notice.server is not None:
        attributes[ATTR_SERVER] = notice.server
    if decision is not None:
        attributes[ATTR_ACTION] = decision.action.value
    return attributes


def make_decision_attributes(notice: CallDecided) -> dict[str, Any]:
    """The ``trifecta.*`` attributes of a decided call's log record: its session, call, tool, server, action
    and the level the decision gives the call."""
    decision = notice.decision
    return {
        ATTR_SESSION_ID: notice.session_id,
        ATTR_CALL_ID: decision.call_id,
        ATTR_TOOL: notice.tool,
        ATTR_SERVER: notice.server,
        ATTR_ACTION: decision.action.value,
        ATTR_LEVEL: decision.level.value,
    }
