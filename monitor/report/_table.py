"""The human-readable table of ``analyze --format table``: one row per session, streamed."""

from __future__ import annotations

from typing import IO

from rich.console import Console
from rich.table import Table
from rich.text import Text

from monitor.models import Action, AnalysisSummary, Leg, Level, RecordError, SessionReport

LEG_LETTER = {Leg.PRIVATE_DATA: "P", Leg.UNTRUSTED_CONTENT: "U", Leg.EXTERNAL_COMMUNICATION: "X"}
LEVEL_STYLE = {
    Level.CLEAN: "green",
    Level.PARTIAL: "cyan",
    Level.ARMED: "yellow",
    Level.TRIFECTA: "bold red",
    Level.EXFILTRATION: "bold white on red",
}
# The session id comes last, so that long ids are never cut.
_COLUMNS = (("level", 12), ("legs", 4), ("calls", 5), ("confirm", 7), ("deny", 4), ("raised by", 36), ("session", 0))


def format_leg_letters(legs: tuple[Leg, ...] | frozenset[Leg]) -> str:
    """Legs as letters, e.g. ``PUX`` or ``P-X``."""
    return "".join(LEG_LETTER[leg] if leg in legs else "-" for leg in Leg)


class TableWriter:
    """Prints a header, then a row per session as it finishes, then the totals."""

    def __init__(self, out: IO[str], *, color: bool | None = None) -> None:
        self._console = Console(
            file=out, no_color=color is False, force_terminal=color, width=200, highlight=False, soft_wrap=True
        )
        self._console.print(self._row([Text(name, style="bold") for name, _ in _COLUMNS]))

    def _row(self, cells: list[Text]) -> Table:
        table = Table.grid(padding=(0, 1))
        for _, width in _COLUMNS:
            if width:
                table.add_column(width=width, no_wrap=True, overflow="ellipsis")
            else:
                table.add_column(no_wrap=True)
        table.add_row(*cells)
        return table

    def write_session(self, report: SessionReport) -> None:
        """Print one session's row."""
        actions = [c.decision.action for c in report.calls]
        raised = next((c for c in report.calls if c.call_id == report.raised_by), None)
        raised_by = f"{raised.tool} ({raised.call_id})" if raised else ("user message" if report.legs else "")
        self._console.print(
            self._row(
                [
                    Text(report.level.value, style=LEVEL_STYLE[report.level]),
                    Text(format_leg_letters(report.legs)),
                    Text(str(len(report.calls))),
                    Text(str(actions.count(Action.CONFIRM))),
                    Text(str(actions.count(Action.DENY))),
                    Text(raised_by),
                    Text(report.session_id),
                ]
            )
        )

    def write_error(self, error: RecordError) -> None:
        """Errors are printed to standard error by the command, not in the table."""

    def close(self, summary: AnalysisSummary) -> None:
        """Print the totals."""
        levels = ", ".join(f"{lv.value} {summary.by_level.get(lv.value, 0)}" for lv in Level)
        actions = ", ".join(f"{a.value} {summary.by_action.get(a.value, 0)}" for a in Action)
        self._console.print(
            f"\n{summary.sessions} sessions ({levels}); {summary.calls} calls ({actions}); "
            f"{summary.errors} input errors"
        )
        if summary.baseline:
            self._console.print(
                f"{summary.baseline} alone would have asked before {summary.client_asked} of these calls; "
                f"the monitor alone before {summary.monitor_asked}; with both, the stricter action was taken."
            )
