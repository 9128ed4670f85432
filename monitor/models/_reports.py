"""What the monitor reports about a session: its calls, their legs and decisions, its alerts, and its capability
graph (docs/design.md, "The capability graph"): who called what, which legs it gave, what flowed where."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from monitor.models._decisions import Alert, Decision, Level
from monitor.models._flows import MAX_GRAPH_CALLS, describe_flows
from monitor.models._legs import Leg, Provenance
from monitor.models._tools import Finding

if TYPE_CHECKING:
    import networkx as nx


ARGUMENT_TEXT_LIMIT = 1_000
"""Characters kept of one string argument value in a report; the rest is replaced by a visible marker."""
ARGUMENT_KEY_LIMIT = 64
"""Keys kept of one mapping (and items of one list) in a report's arguments."""
ARGUMENT_DEPTH_LIMIT = 4
"""Levels of nesting kept in a report's arguments; a deeper container becomes a marker string."""
ARGUMENT_VALUE_LIMIT = 512
"""Values kept in all of one call's reported arguments; the rest become markers."""


def bound_arguments(arguments: dict[str, Any] | None) -> dict[str, Any] | None:
    """Return a JSON-safe copy of a call's arguments, bounded for reports: strings cut to
    :data:`ARGUMENT_TEXT_LIMIT` characters (``…[cut N characters]`` marks the cut), at most
    :data:`ARGUMENT_KEY_LIMIT` keys per mapping and items per list (a ``"…"`` key or item says how many more),
    :data:`ARGUMENT_DEPTH_LIMIT` levels of nesting and :data:`ARGUMENT_VALUE_LIMIT` values in all. A report
    never grows by more than about half a megabyte per call, whatever the call carried."""
    if arguments is None:
        return None
    budget = [ARGUMENT_VALUE_LIMIT]
    bounded = _bound_value(arguments, 1, budget)
    return bounded if isinstance(bounded, dict) else {"…": bounded}


def _bound_value(value: Any, depth: int, budget: list[int]) -> Any:
    if budget[0] <= 0:
        return "…[cut: too many values]"
    budget[0] -= 1
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, dict | list | tuple):
        if depth > ARGUMENT_DEPTH_LIMIT:
            return f"…[cut: nested deeper than {ARGUMENT_DEPTH_LIMIT}]"
        if isinstance(value, dict):
            items = list(value.items())
            kept = {
                str(k)[:ARGUMENT_TEXT_LIMIT]: _bound_value(v, depth + 1, budget) for k, v in items[:ARGUMENT_KEY_LIMIT]
            }
            if len(items) > ARGUMENT_KEY_LIMIT:
                kept["…"] = f"{len(items) - ARGUMENT_KEY_LIMIT} more keys"
            return kept
        listed = [_bound_value(v, depth + 1, budget) for v in value[:ARGUMENT_KEY_LIMIT]]
        if len(value) > ARGUMENT_KEY_LIMIT:
            listed.append(f"…[{len(value) - ARGUMENT_KEY_LIMIT} more items]")
        return listed
    text = value if isinstance(value, str) else repr(value)
    if len(text) > ARGUMENT_TEXT_LIMIT:
        return f"{text[:ARGUMENT_TEXT_LIMIT]}…[cut {len(text) - ARGUMENT_TEXT_LIMIT} characters]"
    return text


class CallReport(BaseModel):
    """One call of a session as the monitor saw and decided it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    call_id: str
    index: int
    server: str
    tool: str
    legs: tuple[Leg, ...]
    provenance: dict[Leg, Provenance]
    decision: Decision
    evidence_from: tuple[str, ...] = ()
    source: str | None = None
    """Where the call's record was read (``file:line``, ``archive!member``, ``file#seq=N``), when known."""
    time: datetime | None = None
    """When the call was made, if the event said."""
    arguments: dict[str, Any] | None = None
    """The call's arguments, bounded (see :func:`monitor.models.bound_arguments`); None when not recorded."""


class SessionReport(BaseModel):
    """A snapshot of one session: legs exercised, level reached, whether it was exposed, calls and alerts."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    session_id: str
    level: Level
    legs: tuple[Leg, ...]
    exposed: bool
    calls: tuple[CallReport, ...]
    alerts: tuple[Alert, ...]
    evidence_truncated: bool = False
    raised_by: str | None = None
    source: str | None = None
    """The input file the session's first record was read from, when known."""
    findings: tuple[Finding, ...] = ()
    """Problems with the request for the report (``unknown-session``: the monitor does not hold the session)."""

    @property
    def graph(self) -> nx.MultiDiGraph:
        """The session's capability graph (networkx ``MultiDiGraph``)."""
        return build_graph(self)


def build_graph(report: SessionReport) -> nx.MultiDiGraph:
    """Build the session's ``MultiDiGraph``, the record of who called what and what flowed where.

    Nodes: ``session:…``, ``server:…``, ``tool:server/name``, ``call:…`` (attributes ``call_id``, ``tool``,
    ``server``, ``index``, ``action``, ``level``, ``legs`` and ``reasons`` (comma-separated values), ``time``
    (ISO 8601 or empty), ``source``) and ``leg:…``. Every attribute is a scalar, so the graph writes as GraphML.
    Edges: ``next`` (call order, from the session node), ``invokes`` (call → tool), ``hosts`` (server → tool),
    ``provides`` (tool → leg; ``provenance`` is ``layer:rule``, e.g. ``annotation:openWorldHint``) and
    ``flows_to`` (call → call; ``evidence`` is the kind of link, ``transform`` and ``text`` what matched: see
    :class:`Flow`).

    Bounded: at most :data:`MAX_GRAPH_CALLS` call nodes; a longer session's graph keeps the first ones and has
    ``truncated=True`` and ``calls_dropped`` set. The graph is built when asked for (``report.graph``); its
    ``flows_to`` edges come from each call's evidence by the same rule (:func:`describe_flows`) as the record the
    engine keeps while it decides (:class:`FlowRecord`), so they are the same edges.
    """
    import networkx as nx  # imported when a graph is asked for: most runs never draw one

    kept = report.calls[:MAX_GRAPH_CALLS]
    g = nx.MultiDiGraph(
        session_id=report.session_id,
        level=report.level.value,
        truncated=len(report.calls) > len(kept),
        calls_dropped=len(report.calls) - len(kept),
    )
    session_node = f"session:{report.session_id}"
    g.add_node(session_node, kind="session", level=report.level.value, exposed=report.exposed)
    previous = session_node
    for call in kept:
        call_node = f"call:{call.call_id}"
        server_node = f"server:{call.server}"
        tool_node = f"tool:{call.server}/{call.tool}"
        g.add_node(
            call_node,
            kind="call",
            call_id=call.call_id,
            tool=call.tool,
            server=call.server,
            index=call.index,
            action=call.decision.action.value,
            level=call.decision.level.value,
            legs=",".join(leg.value for leg in call.legs),
            reasons=",".join(reason.value for reason in call.decision.reasons),
            time=call.time.isoformat() if call.time else "",
            source=call.source or "",
        )
        g.add_node(server_node, kind="server", name=call.server)
        g.add_node(tool_node, kind="tool", server=call.server, name=call.tool)
        g.add_edge(previous, call_node, key="next", kind="next")
        g.add_edge(call_node, tool_node, key="invokes", kind="invokes")
        g.add_edge(server_node, tool_node, key="hosts", kind="hosts")
        for leg, prov in call.provenance.items():
            leg_node = f"leg:{leg.value}"
            g.add_node(leg_node, kind="leg", leg=leg.value)
            g.add_edge(
                tool_node,
                leg_node,
                key=f"provides:{prov.source.value}:{prov.rule}",
                kind="provides",
                provenance=f"{prov.source.value}:{prov.rule}",
                source=prov.source.value,
                rule=prov.rule,
            )
        for n, flow in enumerate(describe_flows(call)):
            if f"call:{flow.source}" in g:
                g.add_edge(
                    f"call:{flow.source}",
                    call_node,
                    key=f"flows_to:{n}",
                    kind="flows_to",
                    evidence=flow.evidence,
                    transform=flow.transform,
                    text=flow.text,
                )
        previous = call_node
    return g


def export_node_link(graph: nx.MultiDiGraph) -> dict[str, Any]:
    """Return the graph as node-link JSON data (edges under ``edges``)."""
    import networkx as nx

    data: dict[str, Any] = nx.node_link_data(graph, edges="edges")
    return data
