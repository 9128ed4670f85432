"""Read a session, print the path of each alert found on its capability graph, and export the graph.

Usage::

    python docs/examples/graph_path.py samples/sessions/github-public-issue.jsonl OUT_DIR

Writes ``OUT_DIR/<session>-<hash>.graphml`` (for Gephi, yEd, Cytoscape) and ``OUT_DIR/<session>-<hash>.json``
(networkx node-link JSON); :func:`monitor.models.name_graph_file` makes the names.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from monitor import SessionMonitor
from monitor.analysis import analyze_records
from monitor.ingest import RecordError, read_inputs
from monitor.models import graph_to_node_link, name_graph_file, write_graphml


def main(source: Path, out: Path) -> None:
    """Analyse ``source``; print every alert's path; write each session's graph into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    for report in analyze_records(read_inputs([source]), SessionMonitor()):
        if isinstance(report, RecordError):
            print(f"skipped: {report}")
            continue
        for alert in report.alerts:
            if not alert.steps:
                continue
            print(f"{report.session_id}: {alert.kind.value} on {alert.call_id}")
            for step in alert.steps:
                link = f" --{step.via}--> {step.to}" if step.via else ""
                print(f"  #{step.index} {step.role.value:16} {step.server}/{step.tool} ({step.call_id}){link}")
        write_graphml(report, out / name_graph_file(report.session_id))
        data = json.dumps(graph_to_node_link(report), indent=1)
        (out / name_graph_file(report.session_id, ".json")).write_text(data, encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
