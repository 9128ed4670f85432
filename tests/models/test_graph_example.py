"""The documented graph example (docs/examples/graph_path.py), run as a user would run it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import networkx as nx

from monitor.models import name_graph_file

ROOT = Path(__file__).resolve().parents[2]


def test_the_example_prints_the_incident_path_and_writes_both_exports(tmp_path: Path) -> None:
    sample = ROOT / "samples" / "sessions" / "github-public-issue.jsonl"
    script = ROOT / "docs" / "examples" / "graph_path.py"
    result = subprocess.run(
        [sys.executable, str(script), str(sample), str(tmp_path)], capture_output=True, text=True, check=True
    )
    lines = result.stdout.splitlines()
    assert "github-public-issue: exfiltration on toolu_01isAjIhKtJ0RlgLKOmxgJTe" in lines
    start = lines.index("github-public-issue: exfiltration on toolu_01isAjIhKtJ0RlgLKOmxgJTe")
    path = lines[start + 1 : start + 4]
    assert "untrusted-source" in path[0] and "github/list_issues" in path[0] and "--flows_to:fragment-->" in path[0]
    assert "private-source" in path[1] and "github/get_file_contents" in path[1]
    assert "sink" in path[2] and "github/create_pull_request" in path[2]
    graph = nx.read_graphml(tmp_path / name_graph_file("github-public-issue"), force_multigraph=True)
    data = json.loads((tmp_path / name_graph_file("github-public-issue", ".json")).read_text(encoding="utf-8"))
    assert set(graph.nodes) == {node["id"] for node in data["nodes"]}


def test_graph_file_names_are_safe_and_distinct_for_any_session_id() -> None:
    ids = ["a/b", "a:b", "A/b", "../../etc/passwd", "", ".hidden", "x" * 500, "naïve\u202esession", "con"]
    names = [name_graph_file(i) for i in ids]
    assert len(set(names)) == len(ids)
    assert len({n.lower() for n in names}) == len(ids)
    for name in names:
        assert name.endswith(".graphml") and len(name) <= 110 and not name.startswith(".")
        assert all(c.isascii() and (c.isalnum() or c in "._-") for c in name)
