"""``trifecta lint`` on the protocol-version rules: unknown versions, and the rules MCP 2026-07-28 changed.

Message shapes from ``schema/2026-07-28/schema.ts`` (modelcontextprotocol/modelcontextprotocol): requests
carry ``params._meta`` with ``io.modelcontextprotocol/protocolVersion`` and
``io.modelcontextprotocol/clientCapabilities`` (both required), results carry ``resultType``; the
2026-07-28 changelog removes ``initialize``/``notifications/initialized``, ``ping``, ``logging/setLevel`` and
``Mcp-Session-Id`` (SEP-2575, SEP-2567).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.lint_tools import CLEAN_READ, ids, lint_tools, tool

from monitor.lint import LintSeverity, lint_paths

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
PROTOCOL_RULES = {
    "protocol-version-unknown",
    "method-not-in-protocol",
    "session-id-in-sessionless-protocol",
    "request-meta-missing",
    "result-type-missing",
}
TOOLS = [tool("read_notes", annotations={"title": "Read notes", **CLEAN_READ})]


def write_log(tmp_path: Path, lines: list[Any], name: str = "traffic.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def clean_2026_log() -> list[Any]:
    return [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}},
        {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "tools": TOOLS}},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "read_notes", "arguments": {}, "_meta": META},
        },
        {"jsonrpc": "2.0", "id": 2, "result": {"resultType": "complete", "content": []}},
    ]


def protocol_findings(path: Path) -> list[Any]:
    report = lint_paths([path])
    assert not report.input_errors
    return [f for f in report.findings if f.id in PROTOCOL_RULES]


def test_a_clean_2026_07_28_log_has_no_protocol_findings_and_its_version_is_read_from_meta(tmp_path: Path) -> None:
    report = lint_paths([write_log(tmp_path, clean_2026_log())])
    assert report.findings == ()
    assert report.listings[0].protocol_version == "2026-07-28"


def test_a_2026_07_28_log_that_breaks_the_new_rules(tmp_path: Path) -> None:
    lines = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2026-07-28"}},
        {"mcp_session_id": "191c4850af6c49e08843a3f6c80e5046", "message": clean_2026_log()[0]},
        {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "tools": TOOLS}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "read_notes", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 2, "result": {"content": []}},
        {"jsonrpc": "2.0", "method": "ping", "id": 3, "params": {"_meta": META}},
    ]
    path = write_log(tmp_path, lines)
    found = protocol_findings(path)
    assert sorted((f.line, f.id, f.pointer) for f in found) == [
        (1, "method-not-in-protocol", "/method"),
        (2, "session-id-in-sessionless-protocol", "/mcp_session_id"),
        (4, "request-meta-missing", "/params/_meta"),
        (5, "result-type-missing", "/result"),
        (6, "method-not-in-protocol", "/method"),
    ]
    assert all(f.file == str(path) and f.severity is LintSeverity.ERROR for f in found)
    [meta] = [f for f in found if f.id == "request-meta-missing"]
    assert "clientCapabilities" in meta.message and "protocolVersion" in meta.message


def test_the_same_mistakes_under_2025_11_25_are_fine(tmp_path: Path) -> None:
    lines = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}},
        {
            "jsonrpc": "2.0",
            "id": 0,
            "result": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "serverInfo": {"name": "notes", "version": "1"},
            },
        },
        {"mcp_session_id": "191c4850", "message": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}},
        {"jsonrpc": "2.0", "id": 1, "result": {"tools": TOOLS}},
        {"jsonrpc": "2.0", "method": "ping", "id": 3},
    ]
    assert protocol_findings(write_log(tmp_path, lines)) == []


def test_unknown_versions_are_a_warning_never_a_crash(tmp_path: Path) -> None:
    findings = lint_tools(tmp_path, *TOOLS, version="2025-13-01")
    unknown = [f for f in findings if f.id == "protocol-version-unknown"]
    assert [(f.pointer, f.severity) for f in unknown] == [("/protocolVersion", LintSeverity.WARNING)]
    assert "checked as 2025-11-25" in unknown[0].message
    for version in ("latest", "2026-07-28 "):
        assert "protocol-version-unknown" in ids(lint_tools(tmp_path, *TOOLS, version=version))
    for version in ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"):
        assert "protocol-version-unknown" not in ids(lint_tools(tmp_path, *TOOLS, version=version))


def test_an_unknown_version_in_request_meta_is_reported_at_its_line(tmp_path: Path) -> None:
    lines = clean_2026_log()
    lines[2] = {**lines[2], "params": {**lines[2]["params"], "_meta": {**META, PROTOCOL_KEY: "2026-08-01"}}}
    lines[0] = {**lines[0], "params": {"_meta": {**META, PROTOCOL_KEY: "2026-08-01"}}}
    found = protocol_findings(write_log(tmp_path, lines))
    assert [(f.id, f.line) for f in found] == [("protocol-version-unknown", 1)]  # once per server and version
    assert found[0].pointer == "/params/_meta/io.modelcontextprotocol~1protocolVersion"


PROTOCOL_KEY = "io.modelcontextprotocol/protocolVersion"


def test_annotations_need_2025_03_26_exactly(tmp_path: Path) -> None:
    assert "annotations-unsupported-protocol" not in ids(lint_tools(tmp_path, *TOOLS, version="2025-03-26"))
    assert "annotations-unsupported-protocol" in ids(lint_tools(tmp_path, *TOOLS, version="2025-03-25"))
    assert "annotations-unsupported-protocol" in ids(lint_tools(tmp_path, *TOOLS, version="2024-10-07"))


def test_a_server_without_tools_still_gets_its_protocol_findings(tmp_path: Path) -> None:
    """A 2026-07-28 ``tools/list`` answered with no tools, a ``ping`` (removed in 2026-07-28) and a call result
    without ``resultType``: the findings do not need a tool to hang on."""
    log = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}},
        {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "tools": []}},
        {"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"_meta": META}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "x", "arguments": {}, "_meta": META}},
        {"jsonrpc": "2.0", "id": 3, "result": {"content": []}},
    ]
    found = {(f.id, f.line) for f in protocol_findings(write_log(tmp_path, log))}
    assert found == {("method-not-in-protocol", 3), ("result-type-missing", 5)}


def test_each_finding_names_the_server_whose_traffic_broke_the_rule(tmp_path: Path) -> None:
    """Two servers in one wrapped log: ``notes`` lists its tools cleanly, ``mail`` lists none and sends a
    ``ping``; the finding is the mail server's, though only the notes server has a tool list."""
    lines = [{"server": "notes", "message": m} for m in clean_2026_log()]
    lines.append(
        {"server": "mail", "message": {"jsonrpc": "2.0", "id": 9, "method": "ping", "params": {"_meta": META}}}
    )
    (finding,) = protocol_findings(write_log(tmp_path, lines))
    assert (finding.id, finding.server, finding.line) == ("method-not-in-protocol", "mail", 5)
