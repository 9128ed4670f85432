"""Claude Code: the hook (``trifecta hook claude-code``) and its settings (``trifecta install claude-code``).

This module imports the standard library only: the hook runs once per Claude Code event.
"""

from __future__ import annotations

from monitor.hosts._hook import run_hook

__all__ = ["run_hook"]
