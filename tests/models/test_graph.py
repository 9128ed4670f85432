"""The capability graph as the record of what flowed where: ``flows_to`` edges per kind of evidence, ``provides``
edges with provenance, the node cap, bounded arguments, and the node-link and GraphML exports."""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import pytest

from monitor import SessionMonitor
from monitor.analysis import analyze_records
from monitor.ingest import read_inputs
from monitor.models import (
    ARGUMENT_KEY_LIMIT,
    ARGUMENT_TEXT_LIMIT,
    ARGUMENT_VALUE_LIMIT,
    MAX_GRAPH_CALLS,
    Action,
    CallReport,
    Decision,
    Evidence,
    EvidenceKind,
    Level,
    SessionReport,
    bound_arguments,
    describe_flows,
    graph_to_node_link,
    write_graphml,
)

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "sessions"


def load_sample(name: str) -> SessionReport:
    reports = [r for r in analyze_records(read_inputs([SAMPLES / f"{name}.jsonl"]), SessionMonitor())]
    assert len(reports) == 1
    report = reports[0]
    assert isinstance(report, SessionReport)
    return report


def flows_of(report: SessionReport) -> set[tuple[str, str, str]]:
    """(source tool, target tool, evidence) of every flows_to edge."""
    g = report.graph
    return {
        (g.nodes[u]["tool"], g.nodes[v]["tool"], d["evidence"])
        for u, v, d in g.edges(data=True)
        if d["kind"] == "flows_to"
    }


def make_call(call_id: str, index: int, evidence: tuple[Evidence, ...] = ()) -> CallReport:
    decision = Decision(
        call_id=call_id,
        action=Action.ALLOW,
        level=Level.CLEAN,
        legs_before=frozenset(),
        legs_call=frozenset(),
        reasons=(),
        evidence=evidence,
    )
    return CallReport(
        call_id=call_id, index=index, server="srv", tool=f"t{index}", legs=(), provenance={}, decision=decision
    )


def test_incidents_have_flows_to_edges_with_their_evidence_kinds() -> None:
    assert flows_of(load_sample("github-public-issue")) == {
        ("list_issues", "create_pull_request", "fragment"),
        ("get_file_contents", "create_pull_request", "fragment"),
    }
    assert flows_of(load_sample("calendar-invite")) == {
        ("get_events", "send_gmail_message", "destination-origin"),
        ("search_gmail_messages", "send_gmail_message", "fragment"),
    }
    assert ("execute_sql", "execute_sql", "secret") in flows_of(load_sample("supabase-ticket"))
    assert flows_of(load_sample("github-benign")) == set()


def test_flows_to_edges_carry_the_matched_text_and_origin() -> None:
    g = load_sample("calendar-invite").graph
    edges = {d["evidence"]: d for _, _, d in g.edges(data=True) if d["kind"] == "flows_to"}
    assert edges["destination-origin"]["text"] == "audit-intake@helios-compliance.net"
    assert edges["destination-origin"]["transform"] == "attacker-suggested"
    assert edges["fragment"]["transform"] == "verbatim"
    assert "(verbatim)" not in edges["fragment"]["text"]


@pytest.mark.parametrize(
    ("kind", "detail", "expected"),
    [
        (EvidenceKind.FRAGMENT, "secret text (verbatim)", ("fragment", "secret text")),
        (EvidenceKind.FRAGMENT, "c2VjcmV0 (base64)", ("encoded-fragment", "c2VjcmV0")),
        (EvidenceKind.FRAGMENT, "736563 (hex)", ("encoded-fragment", "736563")),
        (EvidenceKind.FRAGMENT, "a%20b (url-encoded)", ("encoded-fragment", "a%20b")),
        (EvidenceKind.FRAGMENT, "part one (split-across-calls)", ("split-fragment", "part one")),
        (EvidenceKind.FRAGMENT, "sk_live_1 (secret)", ("secret", "sk_live_1")),
        (EvidenceKind.FRAGMENT, "order 4711 (paraphrase)", ("paraphrase", "order 4711")),
        (EvidenceKind.FRAGMENT, ".env (file-reference)", ("file-reference", ".env")),
        (EvidenceKind.FRAGMENT, "text (with) parens (verbatim)", ("fragment", "text (with) parens")),
        (
            EvidenceKind.DESTINATION,
            "x@evil.example at /to: attacker-suggested",
            ("destination-origin", "x@evil.example"),
        ),
        (EvidenceKind.STEERING, "rm -rf / (destructive)", ("steering", "rm -rf / (destructive)")),
        (
            EvidenceKind.UNEXAMINED,
            "the result of c0 was not fully examined",
            ("unexamined", "the result of c0 was not fully examined"),
        ),
    ],
)
def test_every_kind_of_evidence_gives_its_flows_to_edge(
    kind: EvidenceKind, detail: str, expected: tuple[str, str]
) -> None:
    call = make_call("c1", 1, (Evidence(kind=kind, from_call="c0", detail=detail),))
    (flow,) = describe_flows(call)
    assert (flow.source, flow.target) == ("c0", "c1")
    assert (flow.evidence, flow.text) == expected
    report = SessionReport(
        session_id="s", level=Level.CLEAN, legs=(), exposed=False, calls=(make_call("c0", 0), call), alerts=()
    )
    edges = [d for _, _, d in report.graph.edges(data=True) if d["kind"] == "flows_to"]
    assert [(d["evidence"], d["text"]) for d in edges] == [expected]


def test_evidence_naming_no_call_gives_no_edge() -> None:
    call = make_call("c1", 1, (Evidence(kind=EvidenceKind.DESTINATION, from_call=None, detail="a@b.c at /to: x"),))
    assert describe_flows(call) == []


def test_matched_text_on_an_edge_is_bounded() -> None:
    call = make_call("c1", 1, (Evidence(kind=EvidenceKind.STEERING, from_call="c0", detail="x" * 5000),))
    (flow,) = describe_flows(call)
    assert len(flow.text) == 200


def test_provides_edges_name_the_provenance_of_each_leg() -> None:
    g = load_sample("github-public-issue").graph
    provides = {(u, v): d["provenance"] for u, v, d in g.edges(data=True) if d["kind"] == "provides"}
    assert provides
    for (tool, leg), provenance in provides.items():
        assert tool.startswith("tool:") and leg.startswith("leg:")
        layer, _, rule = provenance.partition(":")
        assert layer in {"override", "result-hint", "annotation", "heuristic", "default"} and rule


def test_call_nodes_name_call_tool_server_index_and_source() -> None:
    report = load_sample("github-public-issue")
    g = report.graph
    node = g.nodes[f"call:{report.calls[2].call_id}"]
    assert (node["tool"], node["server"], node["index"]) == ("create_pull_request", "github", 2)
    assert node["legs"] == "external_communication"
    assert node["source"].endswith("github-public-issue.jsonl:7")
    assert node["time"].startswith("2026-10-14T16:02:41")


def test_node_link_export_round_trips_through_networkx() -> None:
    report = load_sample("calendar-invite")
    data = graph_to_node_link(report)
    text = json.dumps(data)  # JSON-safe
    back = nx.node_link_graph(json.loads(text), edges="edges")
    g = report.graph
    assert set(back.nodes) == set(g.nodes)
    assert sorted((u, v, k) for u, v, k in back.edges(keys=True)) == sorted(g.edges(keys=True))
    flows = {d["evidence"] for _, _, d in back.edges(data=True) if d["kind"] == "flows_to"}
    assert flows == {"destination-origin", "fragment"}


def test_graphml_export_round_trips_through_networkx(tmp_path: Path) -> None:
    report = load_sample("supabase-ticket")
    path = tmp_path / "session.graphml"
    write_graphml(report, path)
    back = nx.read_graphml(path, force_multigraph=True)
    g = report.graph
    assert set(back.nodes) == set(g.nodes)
    assert back.number_of_edges() == g.number_of_edges()
    flows = sorted(d["evidence"] for _, _, d in back.edges(data=True) if d["kind"] == "flows_to")
    assert flows == sorted(d["evidence"] for _, _, d in g.edges(data=True) if d["kind"] == "flows_to")
    call = report.calls[0]
    assert back.nodes[f"call:{call.call_id}"]["index"] == 0


def test_the_graph_keeps_at_most_the_capped_number_of_calls() -> None:
    first = make_call("c0", 0)
    calls = tuple(first.model_copy(update={"call_id": f"c{i}", "index": i}) for i in range(MAX_GRAPH_CALLS + 7))
    report = SessionReport.model_construct(
        session_id="long", level=Level.CLEAN, legs=(), exposed=False, calls=calls, alerts=()
    )
    g = report.graph
    call_nodes = [n for n, d in g.nodes(data=True) if d["kind"] == "call"]
    assert len(call_nodes) == MAX_GRAPH_CALLS
    assert g.graph["truncated"] is True and g.graph["calls_dropped"] == 7
    assert f"call:c{MAX_GRAPH_CALLS}" not in g


def test_a_short_session_graph_is_not_cut() -> None:
    g = load_sample("github-benign").graph
    assert g.graph["truncated"] is False and g.graph["calls_dropped"] == 0


def test_report_arguments_are_bounded() -> None:
    huge = "x" * 2_000_000
    bounded = bound_arguments(
        {
            "body": huge,
            "many": {f"k{i}": i for i in range(100)},
            "deep": {"a": {"b": {"c": {"d": {"e": 1}}}}},
            "short": "ok",
        }
    )
    assert bounded is not None
    assert bounded["body"].startswith("x" * ARGUMENT_TEXT_LIMIT)
    assert bounded["body"].endswith(f"…[cut {2_000_000 - ARGUMENT_TEXT_LIMIT} characters]")
    assert len(bounded["many"]) == ARGUMENT_KEY_LIMIT + 1 and bounded["many"]["…"] == "36 more keys"
    assert bounded["deep"]["a"]["b"]["c"] == "…[cut: nested deeper than 4]"
    assert bounded["short"] == "ok"
    assert len(json.dumps(bounded)) < 5_000
    wide = bound_arguments({f"k{i}": list(range(64)) for i in range(64)})
    assert wide is not None
    kept = [v for value in wide.values() if isinstance(value, list) for v in value if isinstance(v, int)]
    containers = 1 + sum(isinstance(value, list) for value in wide.values())
    assert len(kept) + containers == ARGUMENT_VALUE_LIMIT
    assert "too many values" in json.dumps(wide)
    assert bound_arguments(None) is None
