"""The session engine (docs/design.md, "The session engine"): per-session state, the levels it moves through,
and the monitor that hosts tell what happens and ask before each tool call."""

from monitor.session._monitor import SessionMonitor
from monitor.session._state import level_of_legs

__all__ = ["SessionMonitor", "level_of_legs"]
