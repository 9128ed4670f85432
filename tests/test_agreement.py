"""The fallback layers against human review, leave-one-server-out (``monitor.agreement``, ``trifecta eval
heuristics``): the measurement on small synthetic servers, and the figures on the real tool lists in
../shared/data/mcp-servers, which docs/heuristics.md states."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from monitor.agreement import Agreement, measure_agreement, render_agreement, summarize_agreement
from monitor.cli import main
from monitor.errors import RuleLoadError
from monitor.models import Leg

P, U, X = Leg.PRIVATE_DATA, Leg.UNTRUSTED_CONTENT, Leg.EXTERNAL_COMMUNICATION
PROJECT = Path(__file__).resolve().parents[1]
MCP_SERVERS = PROJECT.parent / "shared" / "data" / "mcp-servers"
DOC = PROJECT / "docs" / "heuristics.md"
_TABLE = re.compile(r"<!-- agreement-table:start -->\n(.*?)<!-- agreement-table:end -->", re.DOTALL)

PACK = """\
id: {id}
title: {server} pack
status: test
author: tests
date: 2026-01-01
server: {server}
trust: trusted
tools:
{entries}
"""


def write_pack(folder: Path, server: str, entries: dict[str, list[str]], uid: int) -> None:
    lines = []
    for match, legs in entries.items():
        lines += [f"  - match: '{match}'", f"    legs: [{', '.join(legs)}]", "    reason: reviewed"]
        if match == "list_files":  # a condition that would remove P from a call: the measure ignores it
            lines += ["    when:", "      - arg: path", "        glob: '*'", "        remove: [private_data]"]
    text = PACK.format(id=f"00000000-0000-4000-8000-{uid:012d}", server=server, entries="\n".join(lines))
    if "*" in server:  # a trusted glob that leaves legs out: accepted only when the file says so
        text = text.replace("trust: trusted\n", "trust: trusted\nallow_wildcard: true\n")
    (folder / f"{server}.yaml").write_text(text)


def write_tools(folder: Path, server: str, tools: list[dict[str, object]]) -> None:
    (folder / f"{server}.json").write_text(json.dumps({"server": server, "tools": tools}))


@pytest.fixture
def synthetic(tmp_path: Path) -> tuple[Path, Path]:
    """Two reviewed servers, a pack without tools and tools without a pack.

    acme, with the fallback's legs: list_files P U (X absent: a read-only name), send_note U X, get_time U
    (annotated openWorldHint false, which an untrusted server cannot use), ping U X (openWorldHint true),
    unlisted (no pack entry). beta: fetch_page U X (url).
    """
    servers, rules = tmp_path / "servers", tmp_path / "rules"
    servers.mkdir()
    rules.mkdir()
    write_tools(
        servers,
        "acme",
        [
            {"name": "list_files", "inputSchema": {"properties": {"path": {"type": "string"}}}},
            {"name": "send_note", "inputSchema": {"properties": {"recipient": {"type": "string"}}}},
            {"name": "get_time", "annotations": {"openWorldHint": False}},
            {"name": "ping", "annotations": {"openWorldHint": True}},
            {"name": "unlisted"},
        ],
    )
    write_tools(servers, "beta", [{"name": "fetch_page", "inputSchema": {"properties": {"url": {"type": "string"}}}}])
    write_tools(servers, "lonely", [{"name": "x"}])
    acme = {
        "list_files": ["private_data"],
        "send_note": ["external_communication"],
        "get_time": ["private_data"],
        "ping": [],
    }
    write_pack(rules, "acme", acme, 1)
    write_pack(rules, "b*", {"fetch_*": ["untrusted_content"]}, 2)
    write_pack(rules, "nobody", {"tool": []}, 3)
    return servers, rules


def test_recall_and_false_legs_per_server(synthetic: tuple[Path, Path]) -> None:
    agreement = measure_agreement(*synthetic[:1], [synthetic[1]])
    acme, beta = agreement.servers
    assert (acme.server, beta.server) == ("acme", "beta")
    assert [t.tool for t in acme.tools] == ["list_files", "send_note", "get_time", "ping"]
    assert acme.unreviewed == ("unlisted",)
    p, u, x = acme.legs
    # P: list_files found, get_time missed; send_note and ping rightly without it.
    assert (p.reviewed_with, p.found, p.reviewed_without, p.false_legs) == (2, 1, 2, 0)
    assert p.recall == 0.5 and p.false_leg_rate == 0.0
    # U: nobody has it in review; every tool gets it (the balanced default, or ping's annotation).
    assert (u.reviewed_with, u.reviewed_without, u.false_legs) == (0, 4, 4)
    assert u.recall is None and u.false_leg_rate == 1.0
    # X: send_note found; every other tool of this server nobody trusts keeps it (ping's from its annotation, the
    # others from the no-hint default: a name never takes the sending leg away).
    assert (x.reviewed_with, x.found, x.reviewed_without, x.false_legs, x.false_by_annotation) == (1, 1, 3, 3, 1)
    assert x.false_leg_rate == pytest.approx(1.0) and x.heuristic_false_leg_rate == pytest.approx(1.0)


def test_the_server_is_untrusted_whatever_its_pack_says(synthetic: tuple[Path, Path]) -> None:
    acme = measure_agreement(synthetic[0], [synthetic[1]]).servers[0]
    get_time = next(t for t in acme.tools if t.tool == "get_time")
    assert get_time.fallback == {U, X}
    # The hint it gave could only lower risk, and its server is trusted by nobody: the rule says so.
    assert get_time.fallback_rules[U] == "default:openWorldHint-untrusted"


def test_reviewed_legs_are_the_base_legs_without_conditions(synthetic: tuple[Path, Path]) -> None:
    acme = measure_agreement(synthetic[0], [synthetic[1]]).servers[0]
    assert next(t for t in acme.tools if t.tool == "list_files").reviewed == {P}


def test_overall_adds_the_counts_of_every_server(synthetic: tuple[Path, Path]) -> None:
    agreement = measure_agreement(synthetic[0], [synthetic[1]])
    u = agreement.leg(U)
    assert (u.reviewed_with, u.found, u.reviewed_without, u.false_legs) == (1, 1, 4, 4)
    x = agreement.leg(X)
    assert (x.reviewed_with, x.found, x.reviewed_without, x.false_legs) == (1, 1, 4, 4)


def test_unpaired_packs_and_tool_lists_are_named(synthetic: tuple[Path, Path]) -> None:
    agreement = measure_agreement(synthetic[0], [synthetic[1]])
    assert [p.split(" (")[0] for p in agreement.packs_without_tool_list] == ["nobody"]
    assert [t.split(" (")[0] for t in agreement.tool_lists_without_pack] == ["lonely"]
    text = render_agreement(agreement)
    assert "Packs without a tool list: nobody." in text and "Tool lists without a pack: lonely." in text
    assert "Listed tools no pack entry selects (left out): acme: unlisted." in text
    assert str(synthetic[0]) not in text


def test_the_table_has_a_row_per_server_and_the_overall_row(synthetic: tuple[Path, Path]) -> None:
    lines = render_agreement(measure_agreement(synthetic[0], [synthetic[1]])).splitlines()
    assert lines[0].startswith("| server | tools | P recall | P false-leg |")
    assert lines[2] == "| acme | 4 | 50.0 % (1/2) | 0.0 % (0/2) | - | 100.0 % (4/4) | 100.0 % (1/1) | 100.0 % (3/3) |"
    assert lines[3].startswith("| beta | 1 |")
    assert lines[4].startswith("| **overall** | 5 |")


def test_an_unreadable_tool_list_is_named_and_the_rest_measured(synthetic: tuple[Path, Path]) -> None:
    servers, rules = synthetic
    (servers / "broken.json").write_text("{not json")
    agreement = measure_agreement(servers, [rules])
    assert len(agreement.servers) == 2
    assert len(agreement.problems) == 1 and agreement.problems[0].startswith(f"{servers / 'broken.json'}: not JSON")


def test_a_broken_pack_raises_naming_the_file(synthetic: tuple[Path, Path]) -> None:
    servers, rules = synthetic
    (rules / "bad.yaml").write_text("id: [unclosed\n")
    with pytest.raises(RuleLoadError) as caught:
        measure_agreement(servers, [rules])
    assert any(str(rules / "bad.yaml") in p for p in caught.value.problems)


def test_cli_prints_the_table_and_a_summary(synthetic: tuple[Path, Path]) -> None:
    servers, rules = synthetic
    result = CliRunner().invoke(main, ["eval", "heuristics", str(servers), "--rules", str(rules)])
    assert result.exit_code == 0, result.output
    assert "| **overall** | 5 |" in result.output
    assert result.output.rstrip().splitlines()[-1].startswith("2 servers, 5 reviewed tools: P recall 50.0 %")
    document = json.loads(
        CliRunner().invoke(main, ["eval", "heuristics", str(servers), "--rules", str(rules), "--format", "json"]).output
    )
    assert document["overall"]["private_data"]["recall"] == 0.5
    assert [s["server"] for s in document["servers"]] == ["acme", "beta"]


def test_cli_names_unreadable_files_and_exits_2(synthetic: tuple[Path, Path]) -> None:
    servers, rules = synthetic
    (servers / "broken.json").write_text("{not json")
    result = CliRunner().invoke(main, ["eval", "heuristics", str(servers), "--rules", str(rules)])
    assert result.exit_code == 2
    assert f"error: {servers / 'broken.json'}: not JSON" in result.output
    (rules / "bad.yaml").write_text("id: [unclosed\n")
    result = CliRunner().invoke(main, ["eval", "heuristics", str(servers), "--rules", str(rules)])
    assert result.exit_code == 2 and f"error: {rules / 'bad.yaml'}" in result.output
    assert "Traceback" not in result.output


def test_cli_needs_the_servers_folder() -> None:
    assert CliRunner().invoke(main, ["eval", "heuristics"]).exit_code == 2


# -- the real tool lists ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real() -> Agreement:
    files = sorted(MCP_SERVERS.glob("*.json")) if MCP_SERVERS.is_dir() else []
    assert files, (
        f"shared data missing: expected the tool lists in {MCP_SERVERS.resolve()} "
        "(../shared/data/mcp-servers relative to the project root; see ../shared/data/README.md)"
    )
    return measure_agreement(MCP_SERVERS)


@pytest.mark.shared_data
def test_doc_table_is_what_the_measure_gives(real: Agreement) -> None:
    match = _TABLE.search(DOC.read_text(encoding="utf-8"))
    assert match, f"{DOC} has no agreement-table markers"
    assert match.group(1) == render_agreement(real), (
        "docs/heuristics.md is out of date; regenerate the table with "
        "`trifecta eval heuristics ../shared/data/mcp-servers`"
    )


@pytest.mark.shared_data
def test_every_tool_list_is_read_and_seventeen_servers_are_paired(real: Agreement) -> None:
    assert real.problems == ()
    assert len(real.servers) == 17
    assert sum(len(s.tools) for s in real.servers) == 346


@pytest.mark.shared_data
def test_targets_hold(real: Agreement) -> None:
    p, x = real.leg(P), real.leg(X)
    assert p.recall is not None and p.recall >= 0.95, summarize_agreement(real)
    assert x.recall is not None and x.recall >= 0.98, summarize_agreement(real)
    assert p.false_leg_rate is not None and p.false_leg_rate <= 0.15, summarize_agreement(real)
    # A tool of a server nobody trusts keeps X whatever its name (its arguments reach that server): X is never
    # taken away, so every reviewed tool without it counts as a false leg; the decision table gives the precision.
    assert x.false_leg_rate == 1.0, summarize_agreement(real)
