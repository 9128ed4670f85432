"""The progress display of ``trifecta analyze`` on standard error: records, sessions, rate and errors, redrawn a
few times a second from the counters the analysis keeps (nothing is formatted per record)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator

from rich.console import Console
from rich.live import Live
from rich.text import Text

from monitor.analysis import AnalysisProgress

REFRESH_PER_SECOND = 4
"""How often the display is redrawn (by rich's refresh thread, not by the analysis)."""
_MIN_RATE_SECONDS = 0.5  # a rate over less time says nothing


class ProgressLine:
    """One line saying how far the analysis is; rich renders it at each refresh."""

    def __init__(self, progress: AnalysisProgress, clock: Callable[[], float] = time.monotonic) -> None:
        self._progress = progress
        self._clock = clock
        self._start = clock()

    def __rich__(self) -> Text:
        """Render the counters as they are now."""
        p = self._progress
        elapsed = max(self._clock() - self._start, 1e-9)
        rate = f"{p.records / elapsed:,.0f}" if elapsed >= _MIN_RATE_SECONDS else "…"
        line = Text.assemble(
            ("analysing ", "bold"),
            f"{p.records:,} records · {p.sessions:,} sessions · {rate} records/s · ",
            (f"{p.errors:,} errors", "bold red" if p.errors else ""),
            f" · {int(elapsed) // 60}:{int(elapsed) % 60:02d}",
        )
        return line


@contextlib.contextmanager
def show_progress(progress: AnalysisProgress, *, quiet: bool, console: Console | None = None) -> Iterator[None]:
    """Show the progress of ``progress`` on ``console`` (standard error by default) while the block runs, only
    when that console is a terminal and not ``quiet``; lines printed meanwhile go above the display, which is
    removed at the end."""
    console = console or Console(stderr=True)
    if quiet or not console.is_terminal:
        yield
        return
    with Live(ProgressLine(progress), console=console, refresh_per_second=REFRESH_PER_SECOND, transient=True):
        yield
