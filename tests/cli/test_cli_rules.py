"""``trifecta rules …`` and ``analyze --rules``."""

import json
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from monitor.cli import main

PROJECT = Path(__file__).resolve().parents[2]
DATA = PROJECT.parent / "shared" / "data"
RULE = """\
id: 44444444-4444-4444-8444-444444444444
title: Mail
status: test
author: tests
date: 2026-11-29
server: mail
tools:
  - match: send_mail
    legs: [external_communication]
    reason: sends mail
tests:
  - tool: send_mail
    legs: [external_communication]
  - tool: send_mail
    absent: [private_data]
"""


def run(*args: object) -> object:
    return CliRunner().invoke(main, [str(a) for a in args])


def test_builtin_packs_pass_their_tests() -> None:
    result = run("rules", "test")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1].endswith(", 0 failed")


def test_builtin_packs_check() -> None:
    result = run("rules", "check")
    assert result.exit_code == 0, result.output
    assert "ruleset_sha256" in result.output


def test_rules_test_reports_a_failing_test_and_a_file_without_negative_tests(tmp_path: Path) -> None:
    (tmp_path / "mail.yaml").write_text(
        RULE.replace(
            "    absent: [private_data]\n", "    legs: [private_data, untrusted_content, external_communication]\n"
        )
    )
    result = run("rules", "test", tmp_path)
    assert result.exit_code == 1
    assert (
        "FAIL" in result.output
        and "expected legs [private_data, untrusted_content, external_communication]" in result.output
    )
    assert "needs at least one negative test" in result.output
    assert result.output.splitlines()[-1] == "1 passed, 2 failed"


def test_analyze_uses_extra_rules_and_reports_their_hash(tmp_path: Path) -> None:
    (tmp_path / "mail.yaml").write_text(RULE)
    trace = tmp_path / "t.jsonl"
    trace.write_text(
        json.dumps(
            {
                "kind": "tool_call",
                "session_id": "s",
                "call_id": "c",
                "server": "mail",
                "tool": "send_mail",
                "arguments": {},
            }
        )
        + "\n"
    )
    with_rules = json.loads(run("analyze", trace, "--format", "json", "--rules", tmp_path).output)
    without = json.loads(run("analyze", trace, "--format", "json").output)
    call = with_rules["sessions"][0]["calls"][0]
    assert call["legs"] == ["external_communication"]
    assert call["provenance"]["external_communication"]["source"] == "override"
    assert without["sessions"][0]["calls"][0]["legs"] != call["legs"]
    assert with_rules["ruleset_sha256"] != without["ruleset_sha256"]


def test_analyze_with_a_broken_rule_file_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "mail.yaml").write_text(RULE + "colour: red\n")
    trace = tmp_path / "t.jsonl"
    trace.write_text("")
    result = run("analyze", trace, "--rules", tmp_path)
    assert result.exit_code == 2
    assert f"{tmp_path / 'mail.yaml'}:16: colour: unknown key 'colour'" in result.output


def test_no_builtin_rules_changes_the_classification() -> None:
    sample = PROJECT / "samples" / "sessions" / "supabase-ticket.jsonl"
    packs = json.loads(run("analyze", sample, "--format", "json").output)
    bare = json.loads(run("analyze", sample, "--format", "json", "--no-builtin-rules").output)
    sources = {p["source"] for c in packs["sessions"][0]["calls"] for p in c["provenance"].values()}
    assert sources == {"override"}
    assert "override" not in {p["source"] for c in bare["sessions"][0]["calls"] for p in c["provenance"].values()}


@pytest.mark.shared_data
def test_suggest_and_pin_on_a_real_tool_list(tmp_path: Path) -> None:
    tools = DATA / "mcp-servers" / "modelcontextprotocol-fetch.json"
    assert tools.exists(), f"missing shared data: {tools}"
    draft = tmp_path / "fetch.yaml"
    result = run("rules", "suggest", tools, "--output", draft)
    assert result.exit_code == 0, result.output
    text = draft.read_text()
    assert "status: experimental" in text and "server: fetch" in text
    pins = run("rules", "pin", tools)
    digest = pins.output.split()[0]
    assert digest in text
    draft.write_text(text.replace(digest, "0" * 64))
    result = run("rules", "pin", tools, "--rules-file", draft)
    assert "pinned 1 of 1 tools" in result.output and digest in draft.read_text()


@pytest.mark.parametrize("server", ["fetch", "notes-server"])
def test_a_suggested_draft_passes_check_whether_or_not_a_pack_covers_its_server(tmp_path: Path, server: str) -> None:
    hints = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": True}
    tool = {"name": "fetch", "description": "Fetch a URL.", "annotations": hints}
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps({"server": server, "tools": [tool]}), encoding="utf-8")
    draft = tmp_path / "draft.yaml"
    result = CliRunner().invoke(main, ["rules", "suggest", str(tools), "--output", str(draft)])
    assert result.exit_code == 0, result.output
    # The built-in fetch pack covers "fetch": the draft replaces it, and says so.
    covered = server == "fetch"
    assert ("overrides:" in draft.read_text()) is covered
    assert ("the draft overrides built-in rule" in result.output) is covered
    check = run("rules", "check", draft)
    assert check.exit_code == 0, check.output


def test_a_draft_with_no_leg_to_leave_out_tests_a_tool_the_server_does_not_list(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    # A page is a store of private data by its name, and the hints say the tool reads and sends outside.
    tool = {"name": "get_page", "description": "Fetch a web page.", "annotations": {"openWorldHint": True}}
    tools.write_text(json.dumps({"server": "notes-server", "tools": [tool]}), encoding="utf-8")
    draft = tmp_path / "draft.yaml"
    result = CliRunner().invoke(main, ["rules", "suggest", str(tools), "--output", str(draft)])
    assert result.exit_code == 0 and "no negative test" not in result.output
    tests = yaml.safe_load(draft.read_text(encoding="utf-8"))["tests"]
    assert [t["tool"] for t in tests if "absent" in t] == ["tool_the_server_does_not_list"]
    assert run("rules", "check", draft).exit_code == 0
    assert run("rules", "test", tmp_path).exit_code == 0


def test_a_draft_of_a_tool_list_that_names_its_server_is_bound_to_that_server(tmp_path: Path) -> None:
    tool = {"name": "fetch", "description": "Fetch a URL.", "annotations": {"openWorldHint": True}}
    tools = tmp_path / "tools.json"
    document = {"server": "fetch", "serverInfo": {"name": "acme-fetch", "version": "1.0"}, "tools": [tool]}
    tools.write_text(json.dumps(document), encoding="utf-8")
    draft = tmp_path / "draft.yaml"
    result = CliRunner().invoke(main, ["rules", "suggest", str(tools), "--output", str(draft)])
    assert result.exit_code == 0, result.output
    assert "server_info:\n  name: acme-fetch\n" in draft.read_text()
    assert run("rules", "check", draft).exit_code == 0


def test_suggest_needs_a_server_name(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text('[{"name": "t"}]')
    result = run("rules", "suggest", tools)
    assert result.exit_code == 2 and "--server" in result.output


def write_fetch_like(tmp_path: Path) -> Path:
    """A tool list like the fetch server's: one read-only, open-world tool with all four hints."""
    hints = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": True}
    tool = {"name": "fetch", "description": "Fetches a URL.", "inputSchema": {"type": "object"}, "annotations": hints}
    path = tmp_path / "fetch.json"
    path.write_text(json.dumps({"server": "fetch", "protocolVersion": "2025-06-18", "tools": [tool]}))
    return path


def test_lint_command_formats_and_exit_codes(tmp_path: Path) -> None:
    fetch = write_fetch_like(tmp_path)
    ok = run("lint", fetch)
    assert ok.exit_code == 0 and "hint-ignored-when-read-only" in ok.output
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"tools": [{"name": "t", "annotations": {"readOnlyHint": "true"}}]}))
    errors = run("lint", bad, "--format", "json")
    assert errors.exit_code == 1
    assert "hint-not-boolean" in errors.output
    sarif = run("lint", bad, "--format", "sarif")
    assert json.loads(sarif.output)["version"] == "2.1.0"
    missing = run("lint", tmp_path / "nope.json")
    assert missing.exit_code == 2


def test_clients_command(tmp_path: Path) -> None:
    result = run("clients", write_fetch_like(tmp_path), "--format", "json")
    assert result.exit_code == 0, result.output
    assert "claude" in result.output.lower()


def test_rules_test_and_check_on_the_builtin_folder_load_it_once() -> None:
    rules_dir = PROJECT / "rules"
    tested = run("rules", "test", rules_dir)
    assert tested.exit_code == 0, tested.output
    assert "duplicate rule id" not in tested.output
    assert tested.output.splitlines()[-1].endswith(", 0 failed")
    checked = run("rules", "check", rules_dir)
    assert checked.exit_code == 0, checked.output
    assert checked.output.splitlines()[-1] == run("rules", "check").output.splitlines()[-1]


def test_a_copy_of_the_builtin_packs_is_tested_from_where_it_was_named(tmp_path: Path) -> None:
    # An installed package and its source folder hold the same packs at two paths.
    copy = tmp_path / "rules"
    shutil.copytree(PROJECT / "rules", copy)
    tested = run("rules", "test", copy)
    assert tested.exit_code == 0, tested.output
    assert tested.output.splitlines()[-1] == run("rules", "test", PROJECT / "rules").output.splitlines()[-1]
    assert not tested.output.splitlines()[-1].startswith("0 passed")
    (copy / "agentdojo" / "banking.yaml").write_text(
        (copy / "agentdojo" / "banking.yaml").read_text(encoding="utf-8") + "\n", encoding="utf-8"
    )
    assert "duplicate rule id" in run("rules", "check", copy).output


SILENCER = RULE.replace("server: mail\n", 'server: "*"\ntrust: trusted\n').replace(
    "  - match: send_mail\n    legs: [external_communication]", '  - match: "*"\n    legs: []'
)


def test_a_wildcard_silencer_is_refused_by_check_test_and_analyze(tmp_path: Path) -> None:
    path = tmp_path / "all.yaml"
    path.write_text(SILENCER)
    trace = tmp_path / "t.jsonl"
    trace.write_text("")
    for args in (("rules", "check", tmp_path), ("rules", "test", tmp_path), ("analyze", trace, "--rules", tmp_path)):
        result = run(*args)
        assert result.exit_code in (1, 2), result.output
        assert f"error: {path}:6: server '*' is a glob, and this file lowers risk for every server" in result.output
        assert "allow_wildcard: true" in result.output


def test_check_warns_about_an_accepted_wildcard(tmp_path: Path) -> None:
    path = tmp_path / "all.yaml"
    path.write_text(SILENCER.replace("trust: trusted\n", "trust: trusted\nallow_wildcard: true\n"))
    result = run("rules", "check", tmp_path)
    assert result.exit_code == 0, result.output
    assert (
        f"warning: {path}:6: server '*' is a glob that lowers risk for every server it matches (trust: trusted; "
        "tools.0 '*' leaves out private_data, untrusted_content, external_communication without a pin), accepted "
        "by 'allow_wildcard: true'"
    ) in result.output
    assert "warning:" not in run("rules", "check").output  # the built-in globs are pinned


def test_a_rule_file_bomb_or_python_tag_is_a_line_and_exit_1(tmp_path: Path) -> None:
    levels = ["a0: &a0 [" + ", ".join(["lol"] * 9) + "]"]
    levels += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 12)]
    (tmp_path / "bomb.yaml").write_text("\n".join(levels) + "\n")
    (tmp_path / "tag.yaml").write_text(RULE.replace("title: Mail", "title: !!python/object/apply:os.system [id]"))
    result = run("rules", "check", tmp_path)
    assert result.exit_code == 1
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert f"error: {tmp_path / 'bomb.yaml'}:6: aliases expand to more than 100000 nodes" in result.output
    assert f"error: {tmp_path / 'tag.yaml'}:2: tag !!python/object/apply:os.system is not allowed" in result.output
    assert "Traceback" not in result.output


def test_schema_rules_documents_the_wildcard_opt_in() -> None:
    result = run("schema", "rules")
    assert result.exit_code == 0
    schema = json.loads(result.output)
    assert schema["title"] == "trifecta-monitor rule file"
    assert "allow_wildcard" in schema["properties"]
    assert "glob" in schema["properties"]["allow_wildcard"]["description"]


def test_schema_rules_documents_the_internal_host_condition() -> None:
    result = run("schema", "rules")
    assert result.exit_code == 0, result.output
    condition = json.loads(result.output)["$defs"]["Condition"]
    assert "internal_host" in condition["properties"]
    assert "any spelling" in condition["properties"]["internal_host"]["description"]
    assert "internal_host" in condition["description"]
