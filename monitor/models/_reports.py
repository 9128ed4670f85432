"""What the monitor reports about a session: its calls, their legs and decisions, its alerts, and its capability
graph (DESIGN §4): who called what, which legs it gave, what flowed where."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from monitor.models._decisions import Alert, Decision, Level
from monitor.models._legs import Leg, Provenance
from monitor.models._tools import Finding

if TYPE_CHECKING:
    import networkx as nx


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
    findings: tuple[Finding, ...] = ()
    """Problems with the request for the report (``unknown-session``: the monitor does not hold the session)."""

    @property
    def graph(self) -> nx.MultiDiGraph:
        """The session's capability graph (networkx ``MultiDiGraph``)."""
        return build_graph(self)


def build_graph(report: SessionReport) -> nx.MultiDiGraph:
    """Build the session's ``MultiDiGraph``.

    Nodes: ``session:…``, ``server:…``, ``tool:server/name``, ``call:…`` and ``leg:…``. Edges: ``next``
    (call order, from the session node), ``invokes`` (call → tool), ``hosts`` (server → tool),
    ``provides`` (tool → leg, with provenance) and ``flows_to`` (call → call, with the evidence).
    """
    import networkx as nx  # imported when a graph is asked for: most runs never draw one

    g = nx.MultiDiGraph(session_id=report.session_id, level=report.level.value)
    session_node = f"session:{report.session_id}"
    g.add_node(session_node, kind="session", level=report.level.value, exposed=report.exposed)
    previous = session_node
    for call in report.calls:
        call_node = f"call:{call.call_id}"
        server_node = f"server:{call.server}"
        tool_node = f"tool:{call.server}/{call.tool}"
        g.add_node(
            call_node, kind="call", index=call.index, action=call.decision.action.value, level=call.decision.level.value
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
                source=prov.source.value,
                rule=prov.rule,
            )
        for item in call.decision.evidence:
            if item.from_call:
                g.add_edge(
                    f"call:{item.from_call}", call_node, kind="flows_to", evidence=item.kind.value, detail=item.detail
                )
        previous = call_node
    return g


def export_node_link(graph: nx.MultiDiGraph) -> dict[str, Any]:
    """Return the graph as node-link JSON data (edges under ``edges``)."""
    import networkx as nx

    data: dict[str, Any] = nx.node_link_data(graph, edges="edges")
    return data
