"""The session engine (docs/design.md, "The session engine"): per-session state, the levels it moves through,
the monitor that hosts tell what happens and ask before each tool call, the one value that configures it, and
the table of sessions (one lock each) that the monitor and the Claude Code hook engine hold theirs in."""

from monitor.session._config import MonitorConfig, RuleChoice
from monitor.session._monitor import SessionMonitor
from monitor.session._state import level_of_legs
from monitor.session._table import SessionSlot, SessionTable

__all__ = ["MonitorConfig", "RuleChoice", "SessionMonitor", "SessionSlot", "SessionTable", "level_of_legs"]
