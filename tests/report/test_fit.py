"""``monitor.report._fit``: the one way every table is fitted to a terminal's width."""

from __future__ import annotations

import io

import pytest

from monitor.report._fit import (
    PADDING,
    ColumnFit,
    fit_columns,
    fit_table,
    fits_whole,
    measure_column,
    resolve_width,
)
from monitor.report._table_style import make_table

COLUMNS = [ColumnFit(12, 12, 12), ColumnFit(44, 12, 9), ColumnFit(32, 10, 6), ColumnFit(24, 24, 12)]


def _line(widths: list[int]) -> int:
    return sum(widths) + PADDING * (len(widths) - 1)


def test_designed_widths_when_they_fit() -> None:
    assert fit_columns(200, COLUMNS) == [12, 44, 32, 24]
    assert fit_columns(_line([12, 44, 32, 24]), COLUMNS) == [12, 44, 32, 24]


def test_shrinking_toward_the_least_widths_in_proportion_to_what_each_can_give() -> None:
    widths = fit_columns(100, COLUMNS)
    assert _line(widths) <= 100
    assert widths[0] == 12 and widths[3] == 24  # nothing to give
    assert widths[1] > widths[2] and widths[1] >= 12 and widths[2] >= 10
    assert fit_columns(_line([12, 12, 10, 24]), COLUMNS) == [12, 12, 10, 24]


def test_below_the_least_widths_toward_the_floors_and_never_below() -> None:
    widths = fit_columns(60, COLUMNS)
    assert _line(widths) <= 60 and widths[0] == 12
    assert all(w >= c.floor for w, c in zip(widths, COLUMNS, strict=True))
    assert widths[3] < 24  # the session id wraps when even its least width does not fit
    assert fit_columns(20, COLUMNS) == [12, 9, 6, 12]  # narrower than the floors: the floors (the line overflows)


@pytest.mark.parametrize("width", range(30, 160, 7))
def test_every_width_the_floors_allow_is_kept(width: int) -> None:
    widths = fit_columns(width, COLUMNS)
    if _line([c.floor for c in COLUMNS]) <= width:
        assert _line(widths) <= width
    assert all(c.floor <= w <= c.designed for w, c in zip(widths, COLUMNS, strict=True))


def test_a_column_is_measured_by_its_longest_line_and_word() -> None:
    assert measure_column("with the monitor", ["asks when it sends", "nothing"]) == ColumnFit(18, 7, 4)
    assert measure_column("tool", ["search_gmail_messages"], floor=16) == ColumnFit(21, 21, 16)
    assert measure_column("id", ["ab"]) == ColumnFit(2, 2, 2)  # a floor is never more than the longest word
    assert fits_whole(30, [ColumnFit(40, 10, 4), ColumnFit(40, 14, 4)]) and not fits_whole(
        26, [ColumnFit(40, 10, 4), ColumnFit(40, 14, 4)]
    )


def test_a_fitted_table_wraps_its_cells_and_an_unfitted_one_wraps_nothing() -> None:
    from rich.console import Console

    def render(width: int | None) -> list[str]:
        table = make_table()
        table.add_column("tool")
        table.add_column("message")
        table.add_row("search_gmail_messages", "readOnlyHint is missing; clients assume false")
        out = io.StringIO()
        Console(file=out, width=width or 1000, no_color=True).print(fit_table(table, width))
        return out.getvalue().splitlines()

    narrow = render(40)
    assert max(map(len, narrow)) <= 40 and narrow[2].startswith("search_gmail_messages")  # the word stays whole
    assert len(narrow) > 3
    assert render(None)[2].rstrip().endswith("readOnlyHint is missing; clients assume false")


def test_the_width_is_rich_s_console_width_only_for_a_terminal_or_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("COLUMNS", raising=False)
    assert resolve_width(io.StringIO()) is None  # a pipe or a file: not fitted
    assert resolve_width(io.StringIO(), width=90) == 90
    assert resolve_width(io.StringIO(), wide=True, width=90) is None
    monkeypatch.setenv("COLUMNS", "97")
    assert resolve_width(io.StringIO()) == 97
    assert resolve_width(Terminal()) == 97
    assert resolve_width(Terminal(), wide=True) is None
    monkeypatch.setenv("COLUMNS", "wide")  # not a number: as if unset
    assert resolve_width(io.StringIO()) is None
