"""What ``trifecta rules suggest`` drafts, ``trifecta rules check`` accepts and ``trifecta rules test`` passes: on
the tool lists kept in samples/mcp (default suite) and on every server of ../shared/data/mcp-servers
(``-m shared_data``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from monitor.classify import Classifier, load_rules, run_rule_tests
from monitor.classify._suggest import UNLISTED_TOOL, draft_rule_file, dump_rule_file
from monitor.cli import main
from monitor.ingest import read_tool_list
from monitor.models import Posture, ToolContext

PROJECT = Path(__file__).resolve().parents[2]
SAMPLES = sorted((PROJECT / "samples" / "mcp").glob("*.jsonl"))
MCP_SERVERS = PROJECT.parent / "shared" / "data" / "mcp-servers"
# An inbox is private data, and an untrusted server's tool reads and sends outside: every leg, nothing to leave out.
EVERY_LEG = [{"name": "read_inbox", "description": "Read the user's inbox"}]


def suggest_then_check(tools: Path, folder: Path) -> tuple[str, str, str]:
    """Draft a rule file for ``tools`` into ``folder`` (alone, as a reviewer would keep it), then check and test
    it; return what suggest said on stderr, and the output of check and of test. Each must succeed."""
    folder.mkdir(parents=True)
    runner = CliRunner()
    suggested = runner.invoke(main, ["rules", "suggest", str(tools), "--output", str(folder / "draft.yaml")])
    assert suggested.exit_code == 0, suggested.output
    checked = runner.invoke(main, ["rules", "check", str(folder)])
    tested = runner.invoke(main, ["rules", "test", str(folder)])
    assert checked.exit_code == 0 and tested.exit_code == 0, f"{tools.name}:\n{checked.output}\n{tested.output}"
    return suggested.stderr, checked.output, tested.output


def assert_accepted(tools: Path, folder: Path) -> None:
    """No error and no warning from check (a draft never uses a server glob, the one warning check documents),
    and every test of the draft, its negative test included, passes."""
    _, checked, tested = suggest_then_check(tools, folder)
    assert not [line for line in checked.splitlines() if line.startswith(("error:", "warning:"))], checked
    assert "FAIL" not in tested and " 0 failed" in tested, tested
    draft = (folder / "draft.yaml").read_text(encoding="utf-8")
    assert "absent:" in draft or "legs: []" in draft  # a negative test


@pytest.mark.parametrize("tools", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_a_draft_of_each_sample_tool_list_passes_check_and_its_tests(tools: Path, tmp_path: Path) -> None:
    assert_accepted(tools, tmp_path / tools.stem)


def test_the_samples_include_a_server_whose_every_tool_gets_every_leg() -> None:
    """The default suite covers the case that once failed check: no leg to leave out of any listed tool."""
    listing = read_tool_list(PROJECT / "samples" / "mcp" / "supabase-ticket.jsonl")
    doc = draft_rule_file(listing.server or "supabase", listing.tools)
    assert doc["tools"] and all(len(entry["legs"]) == 3 for entry in doc["tools"])
    assert [test["tool"] for test in doc["tests"] if "absent" in test] == [UNLISTED_TOOL]


def test_a_draft_whose_tools_get_every_leg_tests_a_tool_the_server_does_not_list(tmp_path: Path) -> None:
    doc = draft_rule_file("mail-like", EVERY_LEG)
    assert doc["tools"][0]["legs"] == ["private_data", "untrusted_content", "external_communication"]
    negative = [t for t in doc["tests"] if t.get("absent")]
    assert len(negative) == 1 and negative[0]["tool"] != "read_inbox"
    assert negative[0]["absent"] == ["private_data"]
    assert "not list" in negative[0]["description"]
    (tmp_path / "draft.yaml").write_text(dump_rule_file(doc), encoding="utf-8")
    rules = load_rules([tmp_path], builtin=False)
    outcomes = run_rule_tests(rules, rules.rules)
    assert outcomes and all(o.passed for o in outcomes), [o.message for o in outcomes if not o.passed]
    # What the test says holds without the draft: the fallback layers alone.
    legs = Classifier(Posture.BALANCED).classify(ToolContext("mail-like", negative[0]["tool"], None)).classification
    assert not legs.legs & {leg for leg in legs.legs if leg.value in negative[0]["absent"]}


def test_the_unlisted_tool_of_the_negative_test_is_never_a_listed_one() -> None:
    listed = {**EVERY_LEG[0], "name": UNLISTED_TOOL}
    negative = [t for t in draft_rule_file("mail-like", [*EVERY_LEG, listed])["tests"] if t.get("absent")]
    assert negative and negative[0]["tool"] not in {"read_inbox", UNLISTED_TOOL}


def test_a_draft_with_a_leg_to_leave_out_tests_a_listed_tool() -> None:
    tools = [*EVERY_LEG, {"name": "get_time", "annotations": {"readOnlyHint": True}}]
    negative = [t for t in draft_rule_file("mail-like", tools)["tests"] if t.get("absent")]
    assert [t["tool"] for t in negative] == ["get_time"] and "description" not in negative[0]


@pytest.mark.shared_data
def test_a_draft_of_every_real_server_passes_check_and_its_tests(tmp_path: Path) -> None:
    files = sorted(MCP_SERVERS.glob("*.json")) if MCP_SERVERS.is_dir() else []
    assert files, (
        f"shared data missing: expected the tool lists in {MCP_SERVERS.resolve()} "
        "(../shared/data/mcp-servers relative to the project root; see ../shared/data/README.md)"
    )
    failed = []
    for tools in files:
        try:
            assert_accepted(tools, tmp_path / tools.stem)
        except AssertionError as exc:
            failed.append(f"{tools.name}: {exc}")
    assert not failed, "\n\n".join(failed)
