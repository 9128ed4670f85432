"""``trifecta analyze --graph DIR`` writes each shown session's capability graph, GraphML and node-link JSON."""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
from click.testing import CliRunner

from monitor.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_analyze_writes_one_graphml_and_one_json_graph_per_shown_session(tmp_path: Path) -> None:
    out = tmp_path / "graphs"
    args = ["analyze", str(ROOT / "samples/sessions"), "--graph", str(out), "--level", "exfiltration", "-q"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in out.iterdir())
    shown = sorted({name.rsplit("-", 1)[0] for name in names})
    assert shown == ["calendar-invite", "github-public-issue", "supabase-ticket"]
    assert len(names) == 6
    graphml = next(out.glob("calendar-invite-*.graphml"))
    graph = nx.read_graphml(graphml)
    flows = [d for _, _, d in graph.edges(data=True) if d.get("kind") == "flows_to"]
    assert flows and {"destination-origin", "fragment"} <= {d["evidence"] for d in flows}
    document = json.loads(next(out.glob("calendar-invite-*.json")).read_text())
    assert {node["id"] for node in document["nodes"]} == set(graph.nodes)


def test_a_graph_folder_that_cannot_be_made_is_a_usage_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = CliRunner().invoke(main, ["analyze", str(ROOT / "samples/sessions"), "--graph", str(blocker / "g")])
    assert result.exit_code == 2 and "cannot write graphs" in result.output
