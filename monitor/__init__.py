"""trifecta-monitor: watch AI-agent sessions for the lethal trifecta.

Private data, untrusted content and external communication assembled in one session let one injected
sentence steer an agent into sending private data out. The monitor classifies every tool call into those
three legs, follows each session, and says, call by call, when they meet.
"""

from importlib.metadata import PackageNotFoundError, version

from monitor.classify._loader import load_rules
from monitor.classify._overrides import RuleSet
from monitor.decide import Policy
from monitor.errors import InputError, RuleLoadError, TrifectaError
from monitor.models._decisions import Action, Alert, AlertKind, Decision, Evidence, Level, Reason
from monitor.models._legs import Leg, Posture
from monitor.models._reports import CallReport, SessionReport
from monitor.session._monitor import SessionMonitor

try:
    __version__ = version("trifecta-monitor")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0"

__all__ = [
    "Action",
    "Alert",
    "AlertKind",
    "CallReport",
    "Decision",
    "Evidence",
    "InputError",
    "Leg",
    "Level",
    "Policy",
    "Posture",
    "Reason",
    "RuleLoadError",
    "RuleSet",
    "SessionMonitor",
    "SessionReport",
    "TrifectaError",
    "__version__",
    "load_rules",
]
