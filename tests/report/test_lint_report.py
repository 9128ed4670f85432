"""``monitor.report._lint``: SARIF 2.1.0 validated against the official schema, the JSON shape, the table and
the markdown table."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from monitor import __version__
from monitor.lint import LINT_RULES, LintReport, lint_paths
from monitor.report._lint import (
    FINGERPRINT_KEY,
    lint_markdown_table,
    lint_to_json,
    lint_to_sarif,
    print_lint_table,
)
from monitor.report._sarif_log import artifact_uri

SCHEMA_PATH = Path(__file__).resolve().parents[1] / "data" / "sarif-schema-2.1.0.json"


@pytest.fixture(scope="module")
def sarif_validator() -> jsonschema.protocols.Validator:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    # The schema declares its draft; validate with exactly that one, formats checked.
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    cls = jsonschema.validators.validator_for(schema)
    assert cls is jsonschema.Draft202012Validator
    # URI formats are checked only with jsonschema's format-nongpl extra (rfc3986-validator): require it.
    assert {"uri", "uri-reference"} <= set(cls.FORMAT_CHECKER.checkers), "install jsonschema[format-nongpl]"
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def _tool(name: str, annotations: Any = None, description: str = "Does a thing.") -> dict[str, Any]:
    raw: dict[str, Any] = {"name": name, "description": description, "inputSchema": {"type": "object"}}
    if annotations is not None:
        raw["annotations"] = annotations
    return raw


@pytest.fixture
def report(tmp_path: Path) -> LintReport:
    """A report with errors, warnings, a JSON-lines log finding and an unreadable file."""
    doc = {
        "server": "demo",
        "protocolVersion": "2025-06-18",
        "tools": [
            _tool("read_notes", {"readOnlyHint": True, "openWorldHint": False}),
            _tool("delete_note", {"readOnlyHint": "false", "openWorldHint": False, "color": "red"}),
            _tool("plain"),
        ],
    }
    (tmp_path / "tools dir").mkdir()
    (tmp_path / "tools dir" / "demo.json").write_text(json.dumps(doc), encoding="utf-8")
    log = {"jsonrpc": "2.0", "id": 2, "result": {"tools": [_tool("plain")]}}
    (tmp_path / "session.jsonl").write_text(json.dumps({"jsonrpc": "2.0", "id": 1}) + "\n" + json.dumps(log) + "\n")
    (tmp_path / "broken.json").write_text("{nope")
    return lint_paths([tmp_path / "tools dir", tmp_path / "session.jsonl", tmp_path / "broken.json"])


# -- SARIF --------------------------------------------------------------------------------------------------


def test_sarif_validates_against_the_official_schema(
    report: LintReport, sarif_validator: jsonschema.protocols.Validator
) -> None:
    sarif = lint_to_sarif(report)
    errors = sorted(sarif_validator.iter_errors(sarif), key=lambda e: list(e.path))
    assert errors == [], [e.message for e in errors]
    # And it survives a JSON round trip unchanged.
    assert json.loads(json.dumps(sarif)) == sarif


def test_sarif_of_an_empty_report_validates(sarif_validator: jsonschema.protocols.Validator) -> None:
    sarif = lint_to_sarif(LintReport())
    sarif_validator.validate(sarif)
    assert sarif["runs"][0]["results"] == []


def test_the_validator_rejects_broken_sarif(
    report: LintReport, sarif_validator: jsonschema.protocols.Validator
) -> None:
    sarif = lint_to_sarif(report)
    sarif["runs"][0]["results"][0]["level"] = "fatal"
    del sarif["runs"][0]["tool"]["driver"]["name"]
    sarif["runs"][0]["tool"]["driver"]["informationUri"] = "not a uri"
    assert len(list(sarif_validator.iter_errors(sarif))) == 3


def test_sarif_driver_and_rules(report: LintReport) -> None:
    run = lint_to_sarif(report)["runs"][0]
    driver = run["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("trifecta-monitor", __version__)
    assert driver["informationUri"].startswith("https://")
    assert [r["id"] for r in driver["rules"]] == [rule.id for rule in LINT_RULES]
    by_id = {r["id"]: r for r in driver["rules"]}
    missing = by_id["hint-missing"]
    assert missing["defaultConfiguration"] == {"level": "warning"}
    assert missing["shortDescription"]["text"] == "A hint is missing"
    assert missing["help"]["text"].startswith("Without a hint")
    assert by_id["hint-not-boolean"]["defaultConfiguration"] == {"level": "error"}


def test_sarif_results(report: LintReport, tmp_path: Path) -> None:
    run = lint_to_sarif(report)["runs"][0]
    results = run["results"]
    assert len(results) == len(report.findings)
    rules = run["tool"]["driver"]["rules"]
    for result, finding in zip(results, report.findings, strict=True):
        assert result["ruleId"] == finding.id == rules[result["ruleIndex"]]["id"]
        assert result["level"] == finding.severity.value
        assert result["partialFingerprints"] == {FINGERPRINT_KEY: finding.fingerprint}
        assert result["properties"]["jsonPointer"] == finding.pointer
    not_bool = next(r for r in results if r["ruleId"] == "hint-not-boolean")
    location = not_bool["locations"][0]
    uri = location["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == (tmp_path / "tools dir" / "demo.json").as_uri()
    assert "%20" in uri  # the space is percent-encoded
    assert location["logicalLocations"] == [
        {"fullyQualifiedName": "/tools/1/annotations/readOnlyHint", "kind": "property", "name": "delete_note"}
    ]
    assert not_bool["message"]["text"].startswith('delete_note: readOnlyHint is "false"')
    assert not_bool["properties"]["tool"] == "delete_note" and not_bool["properties"]["server"] == "demo"
    from_log = next(r for r in results if r["properties"]["jsonPointer"].startswith("/result/tools/0"))
    assert from_log["locations"][0]["physicalLocation"]["region"] == {"startLine": 2}
    unreadable = next(r for r in results if r["ruleId"] == "input-unreadable")
    assert "logicalLocations" not in unreadable["locations"][0]
    assert run["invocations"] == [{"executionSuccessful": True, "exitCode": 2}]


def test_sarif_fingerprints_are_stable_across_runs(tmp_path: Path, report: LintReport) -> None:
    again = lint_paths([tmp_path / "tools dir", tmp_path / "session.jsonl", tmp_path / "broken.json"])
    first = [r["partialFingerprints"] for r in lint_to_sarif(report)["runs"][0]["results"]]
    assert [r["partialFingerprints"] for r in lint_to_sarif(again)["runs"][0]["results"]] == first
    assert len({fp[FINGERPRINT_KEY] for fp in first}) == len(first)


def test_artifact_uri() -> None:
    assert artifact_uri("servers/my tools.json") == "servers/my%20tools.json"
    assert artifact_uri("/abs/a b.json") == "file:///abs/a%20b.json"


# -- JSON ---------------------------------------------------------------------------------------------------


def test_json_shape(report: LintReport) -> None:
    doc = lint_to_json(report)
    assert list(doc) == ["schema_version", "tool", "tool_version", "listings", "input_errors", "summary", "rules"]
    assert (doc["schema_version"], doc["tool"], doc["tool_version"]) == (1, "trifecta-monitor", __version__)
    listing = doc["listings"][0]
    assert list(listing) == ["file", "line", "server", "protocol_version", "tools", "errors", "warnings", "findings"]
    assert (listing["server"], listing["protocol_version"], listing["tools"]) == ("demo", "2025-06-18", 3)
    finding = listing["findings"][0]
    assert list(finding) == [
        "id",
        "severity",
        "file",
        "line",
        "pointer",
        "server",
        "tool",
        "message",
        "hint",
        "fingerprint",
    ]
    assert doc["listings"][1]["line"] == 2
    assert [e["id"] for e in doc["input_errors"]] == ["input-unreadable"]
    summary = doc["summary"]
    assert list(summary) == ["listings", "tools", "errors", "warnings", "input_errors", "by_id", "exit_code"]
    # Errors: the unreadable file, the unknown member 'color' and the string hint.
    assert (summary["listings"], summary["tools"], summary["errors"], summary["input_errors"]) == (2, 4, 3, 1)
    assert summary["exit_code"] == 2
    assert summary["by_id"]["hint-missing"] == 10  # 4 + 4 for the two plain tools, 2 for delete_note
    assert list(summary["by_id"]) == sorted(summary["by_id"])
    assert sum(summary["by_id"].values()) == summary["errors"] + summary["warnings"]
    assert [r["id"] for r in doc["rules"]] == [rule.id for rule in LINT_RULES]
    json.dumps(doc)  # plain JSON types only


def test_json_of_a_clean_report() -> None:
    doc = lint_to_json(LintReport())
    assert doc["listings"] == [] and doc["input_errors"] == []
    assert doc["summary"]["exit_code"] == 0


# -- table --------------------------------------------------------------------------------------------------


def test_table(report: LintReport) -> None:
    out = io.StringIO()
    print_lint_table(report, out, color=False, width=200)
    text = out.getvalue()
    assert "\x1b[" not in text
    lines = text.splitlines()
    assert lines[0] == "unreadable input"
    heading = next(line for line in lines if line.endswith("(demo, protocol 2025-06-18, 3 tools)"))
    assert "demo.json" in heading
    header = lines[lines.index(heading) + 1].split()
    assert header == ["tool", "id", "severity", "pointer", "message"]
    row = next(line for line in lines if "hint-not-boolean" in line)
    assert row.split()[:4] == ["delete_note", "hint-not-boolean", "error", "/tools/1/annotations/readOnlyHint"]
    assert any(line.endswith("session.jsonl:2 (server not named, 1 tool)") for line in lines)
    totals = lines[-2]
    assert totals == "2 tool lists, 4 tools: 3 errors, 10 warnings, 1 unreadable input"
    assert lines[-1].startswith("by id: annotation-unknown-member 1, ")


def test_table_of_a_clean_listing(tmp_path: Path) -> None:
    path = tmp_path / "ok.json"
    path.write_text(
        json.dumps({"server": "ok", "tools": [_tool("read_x", {"readOnlyHint": True, "openWorldHint": False})]})
    )
    out = io.StringIO()
    print_lint_table(lint_paths([path]), out, color=False)
    assert out.getvalue().splitlines() == [
        f"{path} (ok, 1 tool): no findings",
        "1 tool list, 1 tool: 0 errors, 0 warnings, 0 unreadable inputs",
    ]


def test_table_in_color(report: LintReport) -> None:
    out = io.StringIO()
    print_lint_table(report, out, color=True)
    assert "\x1b[" in out.getvalue()


# -- markdown -----------------------------------------------------------------------------------------------


def test_markdown_table(report: LintReport) -> None:
    lines = lint_markdown_table(report).splitlines()
    assert lines[0].startswith(
        "| server | tools | errors | warnings | `annotation-unknown-member` | `hint-not-boolean` |"
    )
    assert lines[1].startswith("|---|---:|")
    assert lines[2].startswith("| demo | 3 | 2 | ")
    assert lines[-1].startswith("| **total** | 4 | 2 | ")
    assert "input-unreadable" not in lines[0]
