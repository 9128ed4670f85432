"""Exports of a session's capability graph: networkx node-link JSON and GraphML."""

from __future__ import annotations

import hashlib
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from monitor.models._reports import SessionReport, build_graph, export_node_link


def graph_to_node_link(report: SessionReport) -> dict[str, Any]:
    """Return the session's graph as networkx node-link data (edges under ``edges``), every attribute
    JSON-safe (tuples become lists)."""
    data = export_node_link(build_graph(report))
    return {key: _json_safe(value) for key, value in data.items()}


def write_graphml(report: SessionReport, path: Path | str) -> None:
    """Write the session's graph as GraphML: every attribute a scalar (a tuple of values joined by commas)."""
    import networkx as nx

    g = build_graph(report)
    for _, attrs in g.nodes(data=True):
        attrs.update({k: _scalar(v) for k, v in attrs.items()})
    for _, _, attrs in g.edges(data=True):
        attrs.update({k: _scalar(v) for k, v in attrs.items()})
    g.graph.update({k: _scalar(v) for k, v in g.graph.items()})
    nx.write_graphml(g, str(path))


def name_graph_file(session_id: str, suffix: str = ".graphml") -> str:
    """Return a file name for a session's graph that is safe for any session id on any file system: the id's
    letters, digits, ``-``, ``_`` and ``.`` (others become ``_``; at most 80 characters), then a hash of the
    whole id, so two ids never share a file even where names differ only in case or in the characters replaced
    (``a/b`` and ``a:b`` → ``a_b-<hash>``)."""
    readable = re.sub(r"[^A-Za-z0-9._-]", "_", session_id)[:80].lstrip(".") or "session"
    digest = hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{readable}-{digest}{suffix}"


def _json_safe(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def _scalar(value: Any) -> str | int | float | bool:
    if isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    return "" if value is None else str(value)
