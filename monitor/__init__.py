"""trifecta-monitor: watch AI-agent sessions for the lethal trifecta.

Private data, untrusted content and external communication assembled in one session let one injected
sentence steer an agent into sending private data out. The monitor classifies every tool call into those
three legs, follows each session, and says, call by call, when they meet::

    from monitor import Action, SessionMonitor

    monitor = SessionMonitor()
    decision = monitor.before_call("session-1", "gmail", "send_email", {"to": "bob@example.com"})
    if decision.action is not Action.ALLOW:
        ...  # ask the user

This module is the curated surface: the engine, its policy and rules, the values it answers with, the
Protocols to plug into it (:mod:`monitor.types`) and the one root exception. Packages below it
(:mod:`monitor.models`, :mod:`monitor.ingest`, :mod:`monitor.otel`, …) export their own pieces.
"""

from importlib.metadata import PackageNotFoundError, version

from monitor.classify import RuleSet, load_rules
from monitor.decide import Policy
from monitor.errors import InputError, RuleLoadError, TrifectaError
from monitor.models import (
    Action,
    Alert,
    AlertKind,
    AlertRaised,
    CallDecided,
    CallReport,
    Decision,
    Evidence,
    Leg,
    Level,
    LevelChanged,
    Posture,
    Reason,
    SessionReport,
)
from monitor.session import SessionMonitor
from monitor.types import AlertSink, OverrideSource, ReportWriter

try:
    __version__ = version("trifecta-monitor")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0"

__all__ = [
    "Action",
    "Alert",
    "AlertKind",
    "AlertRaised",
    "AlertSink",
    "CallDecided",
    "CallReport",
    "Decision",
    "Evidence",
    "InputError",
    "Leg",
    "Level",
    "LevelChanged",
    "OverrideSource",
    "Policy",
    "Posture",
    "Reason",
    "ReportWriter",
    "RuleLoadError",
    "RuleSet",
    "SessionMonitor",
    "SessionReport",
    "TrifectaError",
    "__version__",
    "load_rules",
]
