"""The human-readable table of ``analyze --format table``: one row per session, streamed."""

from __future__ import annotations

from typing import IO

from rich.table import Table
from rich.text import Text

from monitor.models import Action, AnalysisSummary, Leg, Level, RecordError, SessionReport
from monitor.report._fit import PADDING, ColumnFit, fit_columns, make_console, resolve_width
from monitor.report._table_style import make_table, style_level

LEG_LETTER = {Leg.PRIVATE_DATA: "P", Leg.UNTRUSTED_CONTENT: "U", Leg.EXTERNAL_COMMUNICATION: "X"}
CALL_ID_WIDTH = 16
"""Characters of a call id the default table shows (longer ids keep their start and end around ``…``)."""
SOURCE_WIDTH = 32
"""Characters of a session's source file the default table shows (longer paths keep their last parts)."""
# (header, fit): the designed width, the least it keeps while its text stays whole, the least it keeps at all. The
# session id comes last and takes what the others leave (at least its designed width when the terminal has room):
# it wraps, never is cut; output that is not fitted keeps the designed widths, and session ids on one line.
_COLUMNS = (
    ("level", ColumnFit(12, 12, 12)),
    ("legs", ColumnFit(4, 4, 4)),
    ("calls", ColumnFit(5, 5, 5)),
    ("confirm", ColumnFit(7, 7, 7)),
    ("deny", ColumnFit(4, 4, 4)),
    ("raised by", ColumnFit(44, 12, 9)),
    ("source", ColumnFit(SOURCE_WIDTH, 10, 6)),
    ("session", ColumnFit(24, 24, 12)),
)
_SOURCE = [header for header, _ in _COLUMNS].index("source")


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

    By default long call ids and source paths are shortened with a visible ``…``; ``wide`` shows them whole and
    fits nothing. ``width``: the columns to fit the table into (by default rich's console width when ``out`` is a
    terminal or ``COLUMNS`` is set; other output keeps the designed widths). A fitted table wraps its cells:
    session ids and tool names are never cut.
    """

    def __init__(
        self, out: IO[str], *, color: bool | None = None, wide: bool = False, width: int | None = None
    ) -> None:
        self._wide = wide
        self._shown = 0
        self._width = resolve_width(out, wide=wide, width=width)
        fits = [fit for _, fit in _COLUMNS]
        self._widths = fit_columns(self._width, fits) if self._width else [fit.designed for fit in fits]
        if self._width:  # the session id takes the rest of the line
            self._widths[-1] = max(self._widths[-1], self._width - sum(self._widths[:-1]) - PADDING * len(fits[1:]))
        self._console = make_console(out, self._width or None, color=color)
        self._console.print(self._table(show_header=True))

    def _table(self, *cells: Text, show_header: bool = False) -> Table:
        table = make_table(show_header=show_header)
        for (name, _), width in zip(_COLUMNS, self._widths, strict=True):
            if self._wide and name in ("raised by", "source"):
                table.add_column(name, no_wrap=True)
            elif name == "session":
                table.add_column(name, max_width=width if self._width else None, overflow="fold")
            else:
                table.add_column(name, width=width, overflow="fold")
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
                Text(report.level.value, style=style_level(report.level, actions)),
                Text(format_leg_letters(report.legs)),
                Text(str(len(report.calls))),
                Text(str(sum(a.asked_as is Action.CONFIRM for a in actions))),
                Text(str(actions.count(Action.DENY))),
                Text(raised_by),
                Text(source if self._wide else shorten_source(source, self._widths[_SOURCE])),
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
