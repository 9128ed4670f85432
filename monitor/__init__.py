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

from __future__ import annotations

TYPE_CHECKING = False  # not imported from typing: the hook client must not pay for importing it
if TYPE_CHECKING:
    from typing import Any

    from monitor.classify import RuleSet, load_rules
    from monitor.decide import Policy, PolicyMode, Scope
    from monitor.errors import InputError, RuleLoadError, TrifectaError
    from monitor.evidence import ReadBounds
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
    from monitor.session import MonitorConfig, SessionMonitor
    from monitor.types import AlertSink, OverrideSource, ReportWriter

# The names below are imported when first used (PEP 562): ``import monitor.x`` costs nothing more than the
# modules it needs, so a lean entry point (the Claude Code hook client) starts in milliseconds.
_HOMES = {
    "Action": "monitor.models",
    "Alert": "monitor.models",
    "AlertKind": "monitor.models",
    "AlertRaised": "monitor.models",
    "AlertSink": "monitor.types",
    "CallDecided": "monitor.models",
    "CallReport": "monitor.models",
    "Decision": "monitor.models",
    "Evidence": "monitor.models",
    "InputError": "monitor.errors",
    "Leg": "monitor.models",
    "Level": "monitor.models",
    "LevelChanged": "monitor.models",
    "MonitorConfig": "monitor.session",
    "OverrideSource": "monitor.types",
    "Policy": "monitor.decide",
    "PolicyMode": "monitor.decide",
    "Posture": "monitor.models",
    "ReadBounds": "monitor.evidence",
    "Reason": "monitor.models",
    "ReportWriter": "monitor.types",
    "RuleLoadError": "monitor.errors",
    "RuleSet": "monitor.classify",
    "SessionMonitor": "monitor.session",
    "Scope": "monitor.decide",
    "SessionReport": "monitor.models",
    "TrifectaError": "monitor.errors",
    "load_rules": "monitor.classify",
}


# The PEP 562 loader monitor.otel has too: each package keeps its own, as neither may import the other.
def __getattr__(name: str) -> Any:
    """Import a public name on first use."""
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("trifecta-monitor")
        except PackageNotFoundError:  # pragma: no cover - running from a source tree
            found = "0.0.0"
        globals()["__version__"] = found
        return found
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'monitor' has no attribute {name!r}")
    import importlib  # here, not above: the hook client never gets this far

    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


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
    "MonitorConfig",
    "OverrideSource",
    "Policy",
    "PolicyMode",
    "Posture",
    "ReadBounds",
    "Reason",
    "ReportWriter",
    "RuleLoadError",
    "RuleSet",
    "Scope",
    "SessionMonitor",
    "SessionReport",
    "TrifectaError",
    "__version__",
    "load_rules",
]
