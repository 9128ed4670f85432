"""Where the store lives: the user's state directory, or the one ``TRIFECTA_STATE_DIR`` names."""

from __future__ import annotations

import os
from pathlib import Path

STATE_DIR_VARIABLE = "TRIFECTA_STATE_DIR"
STORE_NAME = "hooks.sqlite3"


def default_state_dir() -> Path:
    """Return the folder of trifecta-monitor's state: ``$TRIFECTA_STATE_DIR`` when it is set (and not empty),
    else the user's state directory (``platformdirs.user_state_dir("trifecta-monitor")``: e.g.
    ``~/.local/state/trifecta-monitor`` on Linux, ``~/Library/Application Support/trifecta-monitor`` on macOS).
    Nothing is created."""
    given = os.environ.get(STATE_DIR_VARIABLE, "")
    if given:
        return Path(given).expanduser()
    import platformdirs  # only when it is needed: the hook client starts without it when the variable is set

    return Path(platformdirs.user_state_dir("trifecta-monitor", appauthor=False))


def default_store_path(state_dir: Path | None = None) -> Path:
    """Return the path of the hook store: ``<state dir>/hooks.sqlite3``, in ``state_dir`` when given, else in
    :func:`default_state_dir`."""
    return (state_dir if state_dir is not None else default_state_dir()) / STORE_NAME
