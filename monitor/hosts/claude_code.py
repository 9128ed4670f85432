"""Claude Code: the hook (``trifecta hook claude-code``) and its settings (``trifecta install claude-code``).

:func:`run_hook` answers one hook event. :func:`install_hooks` adds the hook to a Claude Code ``settings.json``
(:func:`resolve_settings_path` says which file, :func:`build_hook_command` what it runs) and
:func:`uninstall_hooks` removes it; both return an :class:`InstallResult`.

This module imports the standard library only: the hook runs once per Claude Code event. The settings
functions are loaded on first use, so the hook never pays for them.
"""

from __future__ import annotations

from monitor.hosts._hook import run_hook

TYPE_CHECKING = False
if TYPE_CHECKING:
    from monitor.hosts._settings import (
        DEFAULT_TIMEOUT,
        HOOK_EVENTS,
        InstallResult,
        build_hook_command,
        find_install_problems,
        install_hooks,
        is_trifecta_hook,
        resolve_settings_path,
        uninstall_hooks,
    )

__all__ = [
    "DEFAULT_TIMEOUT",
    "HOOK_EVENTS",
    "InstallResult",
    "build_hook_command",
    "find_install_problems",
    "install_hooks",
    "is_trifecta_hook",
    "resolve_settings_path",
    "run_hook",
    "uninstall_hooks",
]

_SETTINGS_NAMES = frozenset(__all__) - {"run_hook"}


def __getattr__(name: str) -> object:
    """Load the settings functions on first use (the hook itself never needs them)."""
    if name in _SETTINGS_NAMES:
        from monitor.hosts import _settings

        return getattr(_settings, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
