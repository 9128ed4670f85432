"""The one table style of every command's terminal output: a bold header over a rule, no frame, and the same
colours for levels, severities and actions everywhere."""

from __future__ import annotations

from collections.abc import Iterable

from rich import box
from rich.table import Table

from monitor.models import Action, Level, Severity

LEVEL_STYLE = {
    Level.CLEAN: "green",
    Level.PARTIAL: "cyan",
    Level.ARMED: "yellow",
    Level.TRIFECTA: "bold red",
    Level.EXFILTRATION: "bold white on red",
}
SEVERITY_STYLE = {
    Severity.INFO: "dim",
    Severity.WARNING: "yellow",
    Severity.HIGH: "bold red",
    Severity.CRITICAL: "bold white on red",
}
ALLOWED_TRIFECTA_STYLE = "yellow"
"""A trifecta session in which nothing was asked or blocked (the user asked for the send): told apart from one the
monitor stopped, which stays bold red."""
ACTION_STYLE = {Action.ALLOW: "green", Action.CONFIRM: "yellow", Action.REVIEW: "magenta", Action.DENY: "bold red"}
HEADER_STYLE = "bold"
TABLE_BOX = box.SIMPLE_HEAD


def style_level(level: Level, actions: Iterable[Action]) -> str:
    """Return the style of a session's level given the actions taken on its calls: a trifecta session in which
    every call was allowed gets :data:`ALLOWED_TRIFECTA_STYLE`, not the bold red of one the monitor stopped; with
    no action known, the level's own style."""
    taken = list(actions)
    if level is Level.TRIFECTA and taken and all(action is Action.ALLOW for action in taken):
        return ALLOWED_TRIFECTA_STYLE
    return LEVEL_STYLE[level]


def make_table(title: str | None = None, *, show_header: bool = True) -> Table:
    """Return an empty table in the house style (columns are added by the caller)."""
    return Table(
        title=title,
        title_justify="left",
        title_style="bold",
        box=TABLE_BOX,
        show_edge=False,
        pad_edge=False,
        show_header=show_header,
        header_style=HEADER_STYLE,
    )
