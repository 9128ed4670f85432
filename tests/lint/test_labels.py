"""``trifecta lint`` over the results of MCP JSON-RPC logs: labels that cannot be read, labels that contradict the
tool's annotations, and labels that lower risk.

Shapes: the GitHub MCP server's ``_meta.ifc`` (github/github-mcp-server ``pkg/ifc/ifc.go``), the trust-annotations
extension and the action-metadata extension (experimental drafts of 2026-06-10, ``trust-annotations.mdx`` and
``action-metadata.mdx``); the log is in the format of ``samples/mcp/*.jsonl``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from monitor.lint import RULES_BY_ID, LintSeverity, lint_paths
from monitor.lint._labels import LABEL_RULE_IDS, check_labels, label_pointer

LOG = Path(__file__).resolve().parents[1] / "data" / "labels" / "github-ifc-labels.jsonl"
TA = "io.modelcontextprotocol/trust-annotations"
AM = "io.modelcontextprotocol/action-metadata"


def test_every_label_rule_is_in_the_catalogue() -> None:
    for rule_id in LABEL_RULE_IDS:
        assert RULES_BY_ID[rule_id].title
    assert RULES_BY_ID["label-unreadable"].severity is LintSeverity.ERROR


def test_lint_reports_the_labels_of_a_log_with_file_line_and_pointer() -> None:
    """The labelled GitHub log: list_issues says it is closed-world yet its results are untrusted; a result's
    ``integrity`` of the wrong type; and lowering claims (public issues, a trusted file)."""
    report = lint_paths([LOG])
    found = {(f.id, f.tool, f.line, f.pointer) for f in report.findings if f.id.startswith("label-")}
    assert found == {
        ("label-untrusted-closed-world", "list_issues", 8, f"/message/result/_meta/{TA.replace('/', '~1')}/untrusted"),
        ("label-untrusted-closed-world", "list_issues", 8, "/message/result/_meta/ifc/integrity"),
        ("label-lowers-risk", "list_issues", 8, "/message/result/_meta/ifc/confidentiality"),
        ("label-unreadable", "search_issues", 10, "/message/result/content/0/_meta/ifc/integrity"),
        ("label-lowers-risk", "get_file_contents", 12, "/message/result/_meta/ifc/integrity"),
    }
    assert all(f.file == str(LOG) for f in report.findings)
    assert report.has_errors


def test_the_cli_exits_1_on_an_unreadable_label(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "monitor", "lint", str(LOG), "--format", "json"], capture_output=True, text=True
    )
    assert done.returncode == 1
    assert "label-unreadable" in done.stdout


def test_contradictions_with_annotations_and_action_metadata() -> None:
    """openWorldHint true with ``integrity: trusted``; action-metadata sensitivity public with a sensitive
    block, and non-public with a public confidentiality."""
    trusted = {"content": [], "_meta": {"ifc": {"integrity": "trusted"}}}
    assert [r for r, _ in check_labels(trusted, {"openWorldHint": True})] == [
        "label-trusted-open-world",
        "label-lowers-risk",
    ]
    assert [r for r, _ in check_labels(trusted, {"openWorldHint": False})] == ["label-lowers-risk"]
    public_tool = {AM: {"returnMetadata": {"source": "first-party", "sensitivity": "public"}}}
    sensitive = {"content": [{"type": "text", "text": "x", "_meta": {TA: {"sensitive": True}}}]}
    assert [r for r, _ in check_labels(sensitive, public_tool)] == ["label-contradicts-sensitivity"]
    personal_tool = {AM: {"returnMetadata": {"sensitivity": "personal"}}}
    public = {"content": [], "_meta": {"ifc": {"confidentiality": ["public"]}}}
    assert [r for r, _ in check_labels(public, personal_tool)] == ["label-contradicts-sensitivity", "label-lowers-risk"]
    untrusted = {"content": [], "_meta": {TA: {"untrusted": True}}}
    assert [r for r, _ in check_labels(untrusted, public_tool)] == ["label-untrusted-closed-world"]
    assert check_labels("text", None) == []


def test_a_log_of_huge_junk_labels_is_linted_within_bounds(tmp_path: Path) -> None:
    """Many labelled blocks and junk where labels go: lint answers, and each finding is reported once."""
    blocks = [{"type": "text", "text": "x", "_meta": {"ifc": {"integrity": [i]}}} for i in range(5_000)]
    lines = [
        {"direction": "client->server", "server": "s", "message": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}},
        {"direction": "server->client", "server": "s", "message": {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}},
        {
            "direction": "client->server",
            "server": "s",
            "message": {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "t", "arguments": {}}},
        },
        {
            "direction": "server->client",
            "server": "s",
            "message": {"jsonrpc": "2.0", "id": 2, "result": {"content": blocks, "_meta": {TA: 3, "ifc": None}}},
        },
    ]
    log = tmp_path / "junk.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    labels = [f for f in lint_paths([log]).findings if f.id.startswith("label-")]
    assert sorted(f.pointer for f in labels) == [
        "/message/result/_meta/ifc",
        f"/message/result/_meta/{TA.replace('/', '~1')}",
        "/message/result/content/0/_meta/ifc/integrity",
    ]


def test_label_pointer_escapes_the_extension_keys() -> None:
    assert label_pointer(f"content[12]._meta.{TA}.evidenceRef.integrity") == (
        "/content/12/_meta/io.modelcontextprotocol~1trust-annotations/evidenceRef/integrity"
    )


def test_a_blank_or_deeply_nested_first_line_keeps_the_linter_going_and_the_pointers_right(tmp_path: Path) -> None:
    expected = {
        (f.id, f.tool, (f.line or 0) + 1, f.pointer) for f in lint_paths([LOG]).findings if f.id.startswith("label-")
    }
    for first in (b"\n", b"[" * 100_000 + b"\n"):
        log = tmp_path / "log.jsonl"
        log.write_bytes(first + LOG.read_bytes())
        report = lint_paths([log])  # nesting past any parser's depth on line 1 raises nothing
        found = {(f.id, f.tool, f.line, f.pointer) for f in report.findings if f.id.startswith("label-")}
        assert found == expected
