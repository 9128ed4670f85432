"""Fitting a table to a terminal, for every command that prints one: the width to fit, and the widths of the
columns that share it.

The width is rich's console width (``COLUMNS`` when set, else the terminal's) when the output is a terminal or
``COLUMNS`` is set; other output, and ``--wide``, is not fitted. Columns keep their designed widths when these
fit; else they shrink toward their least widths (their cells wrap between words), and when even those do not
fit, toward their floors (their words fold). Content is wrapped, never cut.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import IO, NamedTuple

from rich.console import Console
from rich.table import Table
from rich.text import Text

PADDING = 3
"""Columns between two cells of a row in the house table style (a cell's padding and the divider)."""
FOLD_FLOOR = 4
"""The least a column keeps when even its longest word does not fit: words longer than this fold."""


class ColumnFit(NamedTuple):
    """How wide a column would be (``designed``), the least it keeps while its words stay whole (``least``), and
    the least it keeps at all (``floor``, its words folded)."""

    designed: int
    least: int
    floor: int


def measure_column(header: str, cells: Iterable[str], *, floor: int = FOLD_FLOOR) -> ColumnFit:
    """Return the fit of a column holding ``header`` and ``cells``: designed as wide as its longest line, at least
    as wide as its longest word, and never narrower than ``floor`` (nor than that word)."""
    texts = [header, *cells]
    designed = max((len(line) for text in texts for line in text.splitlines()), default=0)
    least = max((len(word) for text in texts for word in text.split()), default=0)
    return ColumnFit(designed, least, min(least, floor))


def fit_columns(width: int, columns: Sequence[ColumnFit], *, padding: int = PADDING) -> list[int]:
    """Return the widths of ``columns`` in a table ``width`` characters wide: the designed widths when they fit,
    else shrunk toward the least widths in proportion to what each column can give, else (the least widths do not
    fit either) from the least widths toward the floors in the same way, else the floors (the line overflows)."""
    room = width - padding * max(len(columns) - 1, 0)
    designed = [c.designed for c in columns]
    for upper, lower in (
        (designed, [c.least for c in columns]),
        ([c.least for c in columns], [c.floor for c in columns]),
    ):
        if sum(lower) <= room:
            return _shrink(upper, lower, room)
    return [c.floor for c in columns]


def _shrink(upper: list[int], lower: list[int], room: int) -> list[int]:
    """``upper`` reduced by at least its excess over ``room``, each column in proportion to ``upper - lower``."""
    excess = sum(upper) - room
    give = [u - low for u, low in zip(upper, lower, strict=True)]
    total = sum(give)
    if excess <= 0 or total == 0:
        return list(upper)
    return [u - min(g, -(-excess * g // total)) for u, g in zip(upper, give, strict=True)]


def fit_table(table: Table, width: int | None, *, floors: Mapping[int, int] | None = None) -> Table:
    """Set the widths of ``table``'s columns (filled) to fit ``width`` with :func:`fit_columns`, measured from
    their header and cells: cells wrap between words, and fold words only when even the longest words do not
    fit. ``floors``: by column index, the least a column keeps at all (default :data:`FOLD_FLOOR`; never more
    than its longest word). ``width`` None: every column as wide as its content, nothing wrapped."""
    if width is None:
        for column in table.columns:
            column.no_wrap = True
        return table
    fits = measure_table(table, floors)
    for column, fitted in zip(table.columns, fit_columns(width, fits), strict=True):
        column.width, column.no_wrap, column.overflow, column.ratio = fitted, False, "fold", None
    return table


def measure_table(table: Table, floors: Mapping[int, int] | None = None) -> list[ColumnFit]:
    """Return the fit of each column of ``table`` (filled), measured from its header and cells; ``floors`` as in
    :func:`fit_table`."""
    floors = floors or {}
    fits = []
    for i, column in enumerate(table.columns):
        fit = measure_column(_plain(column.header), (_plain(cell) for cell in column.cells))
        fits.append(fit._replace(floor=min(fit.least, floors.get(i, FOLD_FLOOR))))
    return fits


def fits_whole(width: int, columns: Sequence[ColumnFit], *, padding: int = PADDING) -> bool:
    """Return whether ``columns`` fit a table ``width`` characters wide at their least widths (no word folded)."""
    return sum(c.least for c in columns) + padding * max(len(columns) - 1, 0) <= width


def _plain(cell: object) -> str:
    return cell.plain if isinstance(cell, Text) else str(cell)


def resolve_width(out: IO[str], *, wide: bool = False, width: int | None = None) -> int | None:
    """Return the width to fit a table printed to ``out`` into: None (not fitted) with ``wide``; ``width`` when
    given; rich's console width when ``out`` is a terminal or ``COLUMNS`` is set; else None."""
    if wide:
        return None
    if width is not None:
        return width
    if not (os.environ.get("COLUMNS", "").strip().isdigit() or is_terminal(out)):
        return None
    return Console(file=out).width


UNBOUNDED = 100_000
"""The console width of output that is not fitted: nothing wraps."""


def make_console(out: IO[str], width: int | None, *, color: bool | None = None, markup: bool = True) -> Console:
    """Return the console every table is printed with: ``width`` wide (None: unbounded, nothing wraps or is cut),
    colour as ``color`` says (None: when ``out`` is a terminal), never highlighting numbers or words; with
    ``markup=False`` text in brackets is printed as it is."""
    return Console(
        file=out,
        no_color=color is False,
        force_terminal=color,
        width=width or UNBOUNDED,
        highlight=False,
        markup=markup,
        soft_wrap=width is None,
    )


def is_terminal(out: IO[str]) -> bool:
    """Return whether ``out`` is a terminal (False for anything that cannot tell)."""
    try:
        return out.isatty()
    except (AttributeError, ValueError):
        return False
