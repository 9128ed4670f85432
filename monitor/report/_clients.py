"""Output formats of ``trifecta clients``: a rich table and a JSON document of the client tables.

The tables are computed in :mod:`monitor.clients` (:func:`~monitor.clients.build_client_tables`): for every tool of
every tool list, its annotations, the baseline action of each client profile (run, ask, block, or leave it to the model;
docs/design.md, "Client profiles"), the tool's legs and what the monitor adds once a session is armed. This module only
renders them.

JSON form (``schema_version`` 1)::

    {"schema_version": 1,
     "clients": [{"id": "vscode", "title": "VS Code Copilot"}, …],
     "listings": [{"file": "…", "line": null, "server": "fetch",
                   "tools": [{"name": "fetch",
                              "annotations": {"readOnlyHint": true, "destructiveHint": false,
                                              "idempotentHint": true, "openWorldHint": true},
                              "clients": {"vscode": "run", "claude": "run", …},
                              "legs": ["private_data", …],
                              "provenance": {"private_data": {"source": "override", "rule": "…"}, …},
                              "monitor": "asks when …"}]}]}

A hint that is absent (or not a boolean) is ``null``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import IO, Any

from rich.table import Table
from rich.text import Text

from monitor.clients import CLIENT_TITLES, MONITOR_ASKS, Client, ClientAction, ClientTable
from monitor.models import HINT_MEMBERS
from monitor.report._fit import fit_table, fits_whole, make_console, measure_table, resolve_width
from monitor.report._table import format_leg_letters
from monitor.report._table_style import make_table

SCHEMA_VERSION = 1

_ACTION_STYLE = {
    ClientAction.RUN: "green",
    ClientAction.ASK: "yellow",
    ClientAction.BLOCK: "red",
    ClientAction.MODEL: "cyan",
}
_HINT_HEADERS = {
    "readOnlyHint": "readOnly",
    "destructiveHint": "destr.",
    "idempotentHint": "idemp.",
    "openWorldHint": "openWorld",
}


def clients_to_json(tables: Sequence[ClientTable]) -> dict[str, Any]:
    """Return the JSON form of ``trifecta clients`` (shape in this module's docstring)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "clients": [{"id": client.value, "title": CLIENT_TITLES[client]} for client in Client],
        "listings": [
            {
                "file": table.file,
                "line": table.line,
                "server": table.server,
                "tools": [
                    {
                        "name": row.tool,
                        "annotations": {hint: getattr(row.annotations, hint) for hint in HINT_MEMBERS},
                        "clients": {client.value: action.value for client, action in row.actions.items()},
                        "legs": [leg.value for leg in row.legs],
                        "provenance": {
                            leg.value: {"source": row.provenance[leg].source.value, "rule": row.provenance[leg].rule}
                            for leg in row.legs
                        },
                        "monitor": row.monitor,
                    }
                    for row in table.rows
                ],
            }
            for table in tables
        ],
    }


def _hint_text(value: bool | None) -> Text:
    if value is None:
        return Text("-", style="dim")
    return Text(str(value).lower())


def render_clients(
    tables: Sequence[ClientTable],
    out: IO[str],
    *,
    color: bool | None = None,
    width: int | None = None,
    wide: bool = False,
) -> None:
    """Print ``trifecta clients``: per tool list, one row per tool with its hints, each client's action
    (run / ask / block / model), the tool's legs and what the monitor adds once a session is armed.

    ``width``: the columns to fit into (by default rich's console width when ``out`` is a terminal or ``COLUMNS``
    is set): cells wrap, and a terminal too narrow for every column gets two or three tables per tool list
    (hints and legs, the clients, the monitor), each naming the tool. ``wide``, or other output: nothing is wrapped."""
    width = resolve_width(out, wide=wide, width=width)
    console = make_console(out, width, color=color)
    for table in tables:
        where = table.file if table.line is None else f"{table.file}:{table.line}"
        console.print(Text.assemble((table.server, "bold"), f" ({where})"))
        for parts in _choose_layout(table, width):
            console.print(fit_table(_grid(table, parts), width, floors=_floors(parts)))
        asks = {c: sum(r.actions[c] is ClientAction.ASK for r in table.rows) for c in Client}
        console.print(
            f"{len(table.rows)} tool{'' if len(table.rows) == 1 else 's'}; asks before: "
            + ", ".join(f"{CLIENT_TITLES[c]} {asks[c]}" for c in Client)
            + f"; the monitor can ask before {sum(r.monitor == MONITOR_ASKS for r in table.rows)}"
        )
        console.print()


# The parts of a row in one table, else in two, else in three: the first layout whose words all fit.
_LAYOUTS = (
    (("hints", "clients", "legs", "monitor"),),
    (("hints", "legs", "monitor"), ("clients",)),
    (("hints", "legs"), ("clients",), ("monitor",)),
)
_FLOOR = {"tool": 12, "hints": 5, "clients": 5, "legs": 4, "monitor": 10}  # values such as "false" never fold


def _choose_layout(table: ClientTable, width: int | None) -> tuple[tuple[str, ...], ...]:
    """The tables to print a tool list's rows in: one, unless ``width`` is too narrow for its words."""
    for layout in _LAYOUTS:
        if width is None or all(fits_whole(width, measure_table(_grid(table, parts))) for parts in layout):
            return layout
    return _LAYOUTS[-1]


def _floors(parts: Sequence[str]) -> dict[int, int]:
    """The floor of each column of a grid of ``parts`` (:func:`~monitor.report._fit.fit_table`), by index."""
    kinds = ["tool"]
    for part in parts:
        kinds += [part] * {"hints": len(HINT_MEMBERS), "clients": len(Client)}.get(part, 1)
    return {i: _FLOOR[kind] for i, kind in enumerate(kinds)}


def _grid(table: ClientTable, parts: Sequence[str]) -> Table:
    """One tool list's rows: the tool, then the columns of ``parts``."""
    grid = make_table()
    grid.add_column("tool")
    for part in parts:
        if part == "hints":
            for hint in HINT_MEMBERS:
                grid.add_column(_HINT_HEADERS[hint])
        elif part == "clients":
            for client in Client:
                grid.add_column(CLIENT_TITLES[client])
        else:
            grid.add_column("legs" if part == "legs" else "with the monitor, once armed")
    for row in table.rows:
        cells = {
            "hints": [_hint_text(getattr(row.annotations, hint)) for hint in HINT_MEMBERS],
            "clients": [Text(row.actions[c].value, style=_ACTION_STYLE[row.actions[c]]) for c in Client],
            "legs": [Text(format_leg_letters(row.legs))],
            "monitor": [Text(row.monitor)],
        }
        grid.add_row(Text(row.tool), *(cell for part in parts for cell in cells[part]))
    return grid
