"""The human-readable table of ``analyze --format table``: one row per session, streamed."""

from __future__ import annotations

import shutil
from typing import IO

from rich.console import Console
from rich.table import Table
from rich.text import Text

from monitor.models import Action, AnalysisSummary, Leg, Level, RecordError, SessionReport
from monitor.report._table_style import ALLOWED_TRIFECTA_STYLE, LEVEL_STYLE, make_table

LEG_LETTER = {Leg.PRIVATE_DATA: "P", Leg.UNTRUSTED_CONTENT: "U", Leg.EXTERNAL_COMMUNICATION: "X"}
CALL_ID_WIDTH = 16
"""Characters of a call id the default table shows (longer ids keep their start and end around ``…``)."""
SOURCE_WIDTH = 32
"""Characters of a session's source file the default table shows (longer paths keep their last parts)."""
# (header, width); 0: as wide as its content. The session id comes last, so that long ids are never cut.
_COLUMNS = (
    ("level", 12),
    ("legs", 4),
    ("calls", 5),
    ("confirm", 7),
    ("deny", 4),
    ("raised by", 44),
    ("source", SOURCE_WIDTH),
    ("session", 0),
)
_UNBOUNDED = 100_000  # the console never squeezes a row: long session ids stay whole
_MIN_SESSION = 24  # columns kept for the session id when the table is fitted to a terminal
_MIN_RAISED, _MIN_SOURCE = 12, 10  # what the two shrinkable columns keep at the least
_PADDING = 3  # each column's cell padding and separator


def fit_columns(width: int) -> tuple[int, int]:
    """The widths of the "raised by" and "source" columns in a table ``width`` columns wide: as designed when they
    fit beside the other columns and a session id of :data:`_MIN_SESSION` characters, else shrunk in proportion
    (never below a few characters: a very narrow terminal wraps the rest)."""
    fixed = sum(w + _PADDING for name, w in _COLUMNS if name not in ("raised by", "source", "session"))
    raised, source = dict(_COLUMNS)["raised by"], dict(_COLUMNS)["source"]
    room = width - fixed - 2 * _PADDING - _MIN_SESSION
    if room >= raised + source:
        return raised, source
    shrunk = max(_MIN_RAISED, room * raised // (raised + source))
    return shrunk, max(_MIN_SOURCE, room - shrunk)


def format_leg_letters(legs: tuple[Leg, ...] | frozenset[Leg]) -> str:
    """Legs as letters, e.g. ``PUX`` or ``P-X``."""
    return "".join(LEG_LETTER[leg] if leg in legs else "-" for leg in Leg)


def shorten_call_id(call_id: str, width: int = CALL_ID_WIDTH) -> str:
    """Return ``call_id`` as is when it fits ``width``, else its start and end around a visible ``…``."""
    if len(call_id) <= width:
        return call_id
    tail = (width - 1) // 3
    return call_id[: width - 1 - tail] + "…" + call_id[len(call_id) - tail :]


def shorten_source(source: str, width: int = SOURCE_WIDTH) -> str:
    """Return a path as is when it fits ``width``, else ``…/`` and as many of its last parts as fit (the end of
    the file name when even that is too long)."""
    if len(source) <= width:
        return source
    parts = source.replace("\\", "/").split("/")
    kept = parts[-1]
    for part in reversed(parts[:-1]):
        if len(part) + 1 + len(kept) + 2 > width:
            break
        kept = f"{part}/{kept}"
    shown = "…/" + kept
    return shown if len(shown) <= width else "…" + source[len(source) - width + 1 :]


class TableWriter:
    """Prints a header, then a row per session as it finishes, then the totals.

    By default long call ids and source paths are shortened with a visible ``…``; ``wide`` shows them whole.
    ``width``: the columns to fit the "raised by" and "source" columns into (by default the terminal's, when
    ``out`` is one; other output keeps their designed widths, and session ids are never cut).
    """

    def __init__(
        self, out: IO[str], *, color: bool | None = None, wide: bool = False, width: int | None = None
    ) -> None:
        self._wide = wide
        self._shown = 0
        if width is None and _is_terminal(out):
            width = shutil.get_terminal_size().columns
        self._raised_width, self._source_width = fit_columns(width) if width else fit_columns(_UNBOUNDED)
        self._console = Console(
            file=out,
            no_color=color is False,
            force_terminal=color,
            width=_UNBOUNDED,
            highlight=False,
            soft_wrap=True,
        )
        self._console.print(self._table(show_header=True))

    def _table(self, *cells: Text, show_header: bool = False) -> Table:
        table = make_table(show_header=show_header)
        fitted = {"raised by": self._raised_width, "source": self._source_width}
        for name, designed in _COLUMNS:
            width = fitted.get(name, designed)
            if width and not (self._wide and name in ("raised by", "source")):
                table.add_column(name, width=width, no_wrap=True, overflow="ellipsis")
            else:
                table.add_column(name, min_width=width or None, no_wrap=True)
        if cells:
            table.add_row(*cells)
        return table

    def write_session(self, report: SessionReport) -> None:
        """Print one session's row."""
        self._shown += 1
        actions = [c.decision.action for c in report.calls]
        raised = next((c for c in report.calls if c.call_id == report.raised_by), None)
        if raised:
            call_id = raised.call_id if self._wide else shorten_call_id(raised.call_id)
            raised_by = f"{raised.tool} ({call_id})"
        else:
            raised_by = "user message" if report.legs else ""
        source = report.source or ""
        self._console.print(
            self._table(
                Text(report.level.value, style=_level_style(report.level, actions)),
                Text(format_leg_letters(report.legs)),
                Text(str(len(report.calls))),
                Text(str(sum(a.asked_as is Action.CONFIRM for a in actions))),
                Text(str(actions.count(Action.DENY))),
                Text(raised_by),
                Text(source if self._wide else shorten_source(source, self._source_width)),
                Text(report.session_id),
            )
        )

    def write_error(self, error: RecordError) -> None:
        """Errors are printed to standard error by the command, not in the table."""

    def close(self, summary: AnalysisSummary) -> None:
        """Print the totals (of every session analysed, shown or not) and how many sessions were shown."""
        levels = ", ".join(f"{lv.value} {summary.by_level.get(lv.value, 0)}" for lv in Level)
        shown = [a for a in Action if a is not Action.REVIEW or summary.by_action.get(a.value)]  # review: when used
        actions = ", ".join(f"{a.value} {summary.by_action.get(a.value, 0)}" for a in shown)
        self._console.print(
            f"\n{summary.sessions} sessions ({levels}); {summary.calls} calls ({actions}); "
            f"{summary.errors} input errors"
        )
        if self._shown != summary.sessions:
            self._console.print(f"{self._shown} of {summary.sessions} sessions shown (the others were filtered out)")
        if summary.baseline:
            self._console.print(
                f"{summary.baseline} alone would have asked before {summary.client_asked} of these calls; "
                f"the monitor alone before {summary.monitor_asked}; with both, the stricter action was taken."
            )


def _is_terminal(out: IO[str]) -> bool:
    try:
        return out.isatty()
    except (AttributeError, ValueError):
        return False


def _level_style(level: Level, actions: list[Action]) -> str:
    if level is Level.TRIFECTA and all(action is Action.ALLOW for action in actions):
        return ALLOWED_TRIFECTA_STYLE
    return LEVEL_STYLE[level]
