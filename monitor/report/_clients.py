"""``trifecta clients``: what each MCP client would do before calling each tool, and what the monitor adds.

For every tool of every tool list: its annotations, the baseline action of each client profile of
DESIGN §9 (:mod:`monitor.clients`: run, ask, block, or leave it to the model), the tool's legs (classified
with the built-in rule packs, then annotations and heuristics), and what the monitor adds once a session is
armed: a tool that communicates externally is confirmed when it sends to a destination the user did not
name or carries private data; any other tool gets nothing more.

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

from pydantic import BaseModel, ConfigDict
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from monitor.classify._engine import Classifier
from monitor.classify._layers import ToolContext
from monitor.classify._loader import load_builtin_rules
from monitor.clients import CLIENT_TITLES, Client, ClientAction, decide_for_client
from monitor.ingest._toolslist import ToolList
from monitor.lint import ToolListing
from monitor.models._legs import Leg, Posture, Provenance, sort_legs
from monitor.models._tools import HINT_MEMBERS, ToolAnnotations, parse_tool
from monitor.report._table import format_legs

SCHEMA_VERSION = 1

MONITOR_ASKS = "asks when it sends to a destination the user did not name, or carries private data"
"""What the monitor adds, once a session is armed, to a tool with the external_communication leg."""

MONITOR_NOTHING = "nothing: no external communication"
"""What the monitor adds to a tool without the external_communication leg."""

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


class ClientRow(BaseModel):
    """One tool: its annotations, each client's action before calling it, its legs and the monitor's addition."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str
    annotations: ToolAnnotations
    actions: dict[Client, ClientAction]
    legs: tuple[Leg, ...]
    provenance: dict[Leg, Provenance]
    monitor: str


class ClientTable(BaseModel):
    """The rows of one tool list (one server file)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    file: str
    line: int | None = None
    server: str
    rows: tuple[ClientRow, ...]


def default_classifier() -> Classifier:
    """A balanced-posture classifier with the built-in rule packs."""
    return Classifier(Posture.BALANCED, load_builtin_rules())


def describe_monitor(legs: Sequence[Leg] | frozenset[Leg]) -> str:
    """Return what the monitor adds, once a session is armed, before calling a tool with ``legs``."""
    return MONITOR_ASKS if Leg.EXTERNAL_COMMUNICATION in legs else MONITOR_NOTHING


def build_client_table(tool_list: ToolListing | ToolList, classifier: Classifier | None = None) -> ClientTable:
    """Compute the rows of one tool list. Entries without a usable name are left out."""
    classifier = classifier or default_classifier()
    if isinstance(tool_list, ToolList):
        file, line, server = str(tool_list.path), None, tool_list.server or tool_list.path.stem
    else:
        file, line, server = tool_list.file, tool_list.line, tool_list.server_name
    trusted = classifier.trust_for(server, False)
    rows: list[ClientRow] = []
    for raw in tool_list.tools:
        definition, _ = parse_tool(raw)
        if definition is None:
            continue
        result = classifier.classify(ToolContext(server, definition.name, definition, trusted=trusted))
        legs = tuple(sort_legs(result.classification.legs))
        rows.append(
            ClientRow(
                tool=definition.name,
                annotations=definition.annotations,
                actions={client: decide_for_client(client, definition.annotations) for client in Client},
                legs=legs,
                provenance=dict(result.classification.provenance),
                monitor=describe_monitor(legs),
            )
        )
    return ClientTable(file=file, line=line, server=server, rows=tuple(rows))


def clients_to_json(
    tool_lists: Sequence[ToolListing | ToolList], classifier: Classifier | None = None
) -> dict[str, Any]:
    """The JSON form of ``trifecta clients`` (shape in this module's docstring)."""
    classifier = classifier or default_classifier()
    tables = [build_client_table(tool_list, classifier) for tool_list in tool_lists]
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
    tool_lists: Sequence[ToolListing | ToolList],
    out: IO[str],
    *,
    color: bool | None = None,
    width: int = 220,
    classifier: Classifier | None = None,
) -> None:
    """Print ``trifecta clients``: per tool list, one row per tool with its hints, each client's action
    (run / ask / block / model), the tool's legs and what the monitor adds once a session is armed."""
    classifier = classifier or default_classifier()
    console = Console(file=out, no_color=color is False, force_terminal=color, width=width, highlight=False)
    for tool_list in tool_lists:
        table = build_client_table(tool_list, classifier)
        where = table.file if table.line is None else f"{table.file}:{table.line}"
        console.print(Text.assemble((table.server, "bold"), f" ({where})"))
        grid = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
        grid.add_column("tool", no_wrap=True)
        for hint in HINT_MEMBERS:
            grid.add_column(_HINT_HEADERS[hint], no_wrap=True)
        for client in Client:
            grid.add_column(CLIENT_TITLES[client], no_wrap=True)
        grid.add_column("legs", no_wrap=True)
        grid.add_column("with the monitor, once armed", overflow="fold", ratio=1)
        for row in table.rows:
            grid.add_row(
                Text(row.tool),
                *(_hint_text(getattr(row.annotations, hint)) for hint in HINT_MEMBERS),
                *(Text(row.actions[c].value, style=_ACTION_STYLE[row.actions[c]]) for c in Client),
                Text(format_legs(row.legs)),
                Text(row.monitor),
            )
        console.print(grid)
        asks = {c: sum(r.actions[c] is ClientAction.ASK for r in table.rows) for c in Client}
        console.print(
            f"{len(table.rows)} tool{'' if len(table.rows) == 1 else 's'}; asks before: "
            + ", ".join(f"{CLIENT_TITLES[c]} {asks[c]}" for c in Client)
            + f"; the monitor can ask before {sum(r.monitor == MONITOR_ASKS for r in table.rows)}"
        )
        console.print()
