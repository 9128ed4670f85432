"""Claude Code's settings files as the hook's installer leaves them: read one, and find trifecta's own hooks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from monitor.hosts.claude_code import is_trifecta_hook


def read_settings(path: Path) -> Any:
    """The settings file at ``path``, parsed."""
    return json.loads(path.read_text(encoding="utf-8"))


def ours_in(settings: dict[str, Any]) -> dict[str, list[str]]:
    """Per event, the commands of trifecta's hooks."""
    return {
        event: [h["command"] for g in groups for h in g.get("hooks", []) if is_trifecta_hook(h)]
        for event, groups in settings.get("hooks", {}).items()
    }
