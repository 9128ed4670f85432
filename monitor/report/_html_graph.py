"""The capability graph of a session drawn as inline SVG, with a layered layout computed from its networkx graph.

Rows, top to bottom: the legs, the calls in call order, the tools they invoke, the servers that host them.
Edges: ``next`` (call order), ``invokes``, ``hosts``, ``provides`` (coloured by leg) and ``flows_to`` (arcs
above the calls, labelled with the kind of evidence). The calls and the flows of the alert path are
highlighted. At most :data:`MAX_GRAPH_CALLS` calls are drawn (those on an alert path first).

The drawing is as many columns wide as its widest row, so no two nodes overlap. In the page it shrinks to fit
its box down to :data:`SCALE_FLOOR` of its size (:data:`GRAPH_STYLE`); a wider one scrolls inside its box.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from html import escape
from typing import Any

from monitor.models import Action, Leg, SessionReport

MAX_GRAPH_CALLS = 40
"""Calls drawn per session; the others are counted under the drawing."""
SCALE_FLOOR = 0.7
"""A drawing shrinks to fit its box down to this share of its size, so that its labels stay legible."""
_COL = 185
_W = 150
_H = _W // 2
_ROW = {"leg": 40, "call": 150, "tool": 250, "server": 330}
_LABEL_CHARS = 24
LEG_CLASS = {
    Leg.PRIVATE_DATA.value: "leg-p",
    Leg.UNTRUSTED_CONTENT.value: "leg-u",
    Leg.EXTERNAL_COMMUNICATION.value: "leg-x",
}

_ACTIONS = {action.value: action for action in Action}
_MARGIN = 60


def _natural_width(columns: int) -> int:
    return _MARGIN + columns * _COL


GRAPH_STYLE = "svg.graph{display:block;max-width:100%;height:auto}" + "".join(
    f".g{n}{{min-width:{int(_natural_width(n) * SCALE_FLOOR)}px}}" for n in range(1, MAX_GRAPH_CALLS + 1)
)
"""The style of the drawings: the class ``gN`` of one N columns wide keeps it at least :data:`SCALE_FLOOR` of its
size."""


def _short(text: str) -> str:
    return text if len(text) <= _LABEL_CHARS else text[: _LABEL_CHARS - 1] + "…"


def select_alert_path(report: SessionReport) -> tuple[str, ...]:
    """Return the call ids of the most severe alert's path (its ``steps`` when it has them, else ``path``)."""
    best: tuple[str, ...] = ()
    best_rank = -1
    for alert in report.alerts:
        steps = getattr(alert, "steps", ())
        path = tuple(step.call_id for step in steps) if steps else alert.path
        if path and alert.severity.rank > best_rank:
            best, best_rank = path, alert.severity.rank
    return best


def _drawn_calls(call_nodes: list[str], highlighted: set[str]) -> list[str]:
    if len(call_nodes) <= MAX_GRAPH_CALLS:
        return call_nodes
    keep = {n for n in call_nodes if n in highlighted}
    for node in call_nodes:
        if len(keep) >= MAX_GRAPH_CALLS:
            break
        keep.add(node)
    return [n for n in call_nodes if n in keep]


def compute_layout(graph: Any, calls: list[str]) -> dict[str, tuple[float, float]]:
    """Place the drawn calls in order, then their tools, servers and legs under or over their neighbours; each
    row is spread over the width of the widest one."""
    pos: dict[str, tuple[float, float]] = {}
    rows: dict[str, list[str]] = {"tool": [], "server": [], "leg": []}
    for node in calls:
        for _, tool in graph.out_edges(node):
            if graph.nodes[tool].get("kind") == "tool" and tool not in rows["tool"]:
                rows["tool"].append(tool)
    for tool in rows["tool"]:
        for server, _ in graph.in_edges(tool):
            if graph.nodes[server].get("kind") == "server" and server not in rows["server"]:
                rows["server"].append(server)
        for _, leg in graph.out_edges(tool):
            if graph.nodes[leg].get("kind") == "leg" and leg not in rows["leg"]:
                rows["leg"].append(leg)
    order = {f"leg:{leg.value}": i for i, leg in enumerate(Leg)}
    rows["leg"].sort(key=lambda n: order.get(n, len(order)))
    width = max(1, len(calls), *(len(nodes) for nodes in rows.values())) * _COL
    for kind, nodes in {"call": calls, **rows}.items():
        step = width / max(1, len(nodes))
        for i, node in enumerate(nodes):
            pos[node] = (_MARGIN + i * step + (step - _COL) / 2, _ROW[kind])
    return pos


def render_graph_svg(report: SessionReport, graph: Any | None = None) -> str:
    """Return the session's capability graph as an ``<svg>`` element (every label escaped)."""
    graph = report.graph if graph is None else graph
    path = select_alert_path(report)
    highlighted = {f"call:{call_id}" for call_id in path}
    call_nodes = [n for n, d in graph.nodes(data=True) if d.get("kind") == "call"]
    call_nodes.sort(key=lambda n: graph.nodes[n].get("index", 0))
    calls = _drawn_calls(call_nodes, highlighted)
    pos = compute_layout(graph, calls)
    hops = set(itertools.pairwise(path))
    columns = max(1, round((max((x for x, _ in pos.values()), default=_MARGIN) - _MARGIN) / _COL) + 1)
    width = _natural_width(columns)
    parts = [
        f'<svg class="graph g{columns}" xmlns="http://www.w3.org/2000/svg" width="{width}" height="370" '
        f'viewBox="0 0 {width} 370" role="img" aria-label="capability graph">'
    ]
    parts.extend(_edges(graph, pos, hops))
    linked = {(a, b) for a, b, d in graph.edges(data=True) if d.get("kind") == "flows_to"}
    for a, b in hops:  # a step of the path with no recorded flow between its calls: drawn dashed
        if (f"call:{a}", f"call:{b}") not in linked and f"call:{a}" in pos and f"call:{b}" in pos:
            parts.append(_arc(pos[f"call:{a}"], pos[f"call:{b}"], "flow path implied", ""))
    parts.extend(_nodes(graph, pos, highlighted))
    parts.append("</svg>")
    hidden = len(call_nodes) - len(calls)
    note = f'<p class="more">{hidden} more calls not drawn</p>' if hidden else ""
    return "".join(parts) + note


def _arc(a: tuple[float, float], b: tuple[float, float], css: str, label: str) -> str:
    (x1, y1), (x2, y2) = a, b
    lift = 30 + min(60.0, abs(x2 - x1) / 6)
    mx = (x1 + x2) / 2 + _H
    d = f"M{x1 + _H:.0f},{y1 - 14:.0f} Q{mx:.0f},{y1 - 14 - 2 * lift:.0f} {x2 + _H:.0f},{y2 - 14:.0f}"
    text = f'<text class="elabel" x="{mx:.0f}" y="{y1 - 14 - lift - 3:.0f}">{escape(label)}</text>' if label else ""
    return f'<path class="{css}" d="{d}" marker-end="url(#arrow)"/>{text}'


def _edges(graph: Any, pos: dict[str, tuple[float, float]], hops: set[tuple[str, str]]) -> Iterable[str]:
    yield (
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" class="arrowhead"/></marker></defs>'
    )
    seen: set[tuple[str, str, str]] = set()
    for a, b, data in graph.edges(data=True):
        kind = str(data.get("kind", ""))
        if a not in pos or b not in pos or (a, b, kind) in seen:
            continue
        seen.add((a, b, kind))
        (x1, y1), (x2, y2) = pos[a], pos[b]
        if kind == "flows_to":
            on_path = (a[5:], b[5:]) in hops
            css = "flow path" if on_path else "flow"
            yield _arc(pos[a], pos[b], css, str(data.get("evidence", "")))
        elif kind == "next":
            yield f'<line class="next" x1="{x1 + _W:.0f}" y1="{y1:.0f}" x2="{x2:.0f}" y2="{y2:.0f}"/>'
        elif kind == "invokes":
            yield f'<line class="invokes" x1="{x1 + _H:.0f}" y1="{y1 + 14:.0f}" x2="{x2 + _H:.0f}" y2="{y2 - 14:.0f}"/>'
        elif kind == "hosts":
            yield f'<line class="hosts" x1="{x1 + _H:.0f}" y1="{y1 - 14:.0f}" x2="{x2 + _H:.0f}" y2="{y2 + 14:.0f}"/>'
        elif kind == "provides":
            css = LEG_CLASS.get(str(graph.nodes[b].get("leg", "")), "")
            yield (
                f'<line class="provides {css}" x1="{x1 + _H:.0f}" y1="{y1 - 14:.0f}" '
                f'x2="{x2 + _H:.0f}" y2="{y2 + 14:.0f}"><title>{escape(str(data.get("rule", "")))}</title></line>'
            )


def _nodes(graph: Any, pos: dict[str, tuple[float, float]], highlighted: set[str]) -> Iterable[str]:
    for node, (x, y) in pos.items():
        data = graph.nodes[node]
        kind = str(data.get("kind", ""))
        if kind == "call":
            label = f"#{data.get('index', '')} {_call_label(graph, node)}"
            action = str(data.get("action", ""))
            shown = _ACTIONS[action].asked_as.value if action in _ACTIONS else "allow"
            css = f"node call act-{shown}"
            css += " path" if node in highlighted else ""
            title = f"{node[5:]} · {action} · {data.get('level', '')}"
        elif kind == "leg":
            label = str(data.get("leg", "")).replace("_", " ")
            css = f"node leg {LEG_CLASS.get(str(data.get('leg', '')), '')}"
            title = label
        else:
            label = str(data.get("name", node.split(":", 1)[-1]))
            css = f"node {kind}"
            title = node.split(":", 1)[-1]
        yield (
            f'<g class="{css}"><title>{escape(title)}</title>'
            f'<rect x="{x:.0f}" y="{y - 14:.0f}" width="{_W}" height="28" rx="6"/>'
            f'<text x="{x + _H:.0f}" y="{y + 4:.0f}">{escape(_short(label))}</text></g>'
        )


def _call_label(graph: Any, node: str) -> str:
    for _, tool, data in graph.out_edges(node, data=True):
        if data.get("kind") == "invokes":
            return str(graph.nodes[tool].get("name", ""))
    return str(graph.nodes[node].get("tool", ""))
