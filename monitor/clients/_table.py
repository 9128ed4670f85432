"""The ``trifecta clients`` table: for every tool of a tool list, its annotations, what each client profile
does before calling it, the tool's legs and what the monitor adds once a session is armed.

The legs are classified with the built-in rule packs (then annotations and heuristics), at the balanced
posture, unless a classifier is given. A tool that communicates externally is confirmed by the monitor when
it sends to a destination the user did not name or carries private data; any other tool gets nothing more.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict

from monitor.classify import Classifier, load_builtin_rules
from monitor.clients._profiles import Client, ClientAction, decide_for_client
from monitor.ingest import ToolList
from monitor.models import Leg, Posture, Provenance, ToolAnnotations, ToolContext, parse_tool, sort_legs

MONITOR_ASKS = "asks when it sends to a destination the user did not name, or carries private data"
"""What the monitor adds, once a session is armed, to a tool with the external_communication leg."""

MONITOR_NOTHING = "nothing: no external communication"
"""What the monitor adds to a tool without the external_communication leg."""


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
    """Return a balanced-posture classifier with the built-in rule packs."""
    return Classifier(Posture.BALANCED, load_builtin_rules())


def describe_monitor(legs: Sequence[Leg] | frozenset[Leg]) -> str:
    """Return what the monitor adds, once a session is armed, before calling a tool with ``legs``."""
    return MONITOR_ASKS if Leg.EXTERNAL_COMMUNICATION in legs else MONITOR_NOTHING


def build_client_table(tool_list: ToolList, classifier: Classifier | None = None) -> ClientTable:
    """Return the rows of one tool list (the server is the file's name when the file names none). Entries
    without a usable name are left out."""
    classifier = classifier or default_classifier()
    server = tool_list.server_name
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
    return ClientTable(file=tool_list.file, line=tool_list.line, server=server, rows=tuple(rows))


def build_client_tables(tool_lists: Iterable[ToolList], classifier: Classifier | None = None) -> list[ClientTable]:
    """Return the table of each tool list, all classified with one classifier (default:
    :func:`default_classifier`)."""
    classifier = classifier or default_classifier()
    return [build_client_table(tool_list, classifier) for tool_list in tool_lists]
