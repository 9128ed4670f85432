"""``trifecta rules suggest`` binds a draft to the server it was drafted from by identity: when the tool list
carries the server's ``serverInfo`` (an ``mcp-servers`` document, a tools/list capture with ``serverInfo`` beside
the tools, an MCP log with the ``initialize`` result), the draft says ``server_info: {name: …}``, so the user's
own pack covers their server and not another one given the same name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.fetch_servers import FETCH_PACK, OWN_FETCH, REFERENCE_FETCH

from monitor import SessionMonitor
from monitor.classify import load_builtin_rules, load_rules
from monitor.classify._suggest import draft_rule_file, dump_rule_file
from monitor.ingest import read_tool_list
from monitor.models import AlertKind, ServerIdentity, Severity

URL = {"url": "https://wiki.example.com/payroll"}


def write(path: Path, doc: Any) -> Path:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def draft_pack(folder: Path, tools_file: Path) -> tuple[str, Path]:
    """Draft a pack for the tool list as ``rules suggest`` does (the server ``fetch``, replacing the built-in
    pack); return the draft's id and its folder."""
    listing = read_tool_list(tools_file)
    draft = draft_rule_file("fetch", listing.tools, overrides=FETCH_PACK, server_info=listing.server_info)
    folder.mkdir()
    (folder / "fetch.yaml").write_text(dump_rule_file(draft), encoding="utf-8")
    return str(draft["id"]), folder


def test_an_mcp_servers_document_gives_its_server_info(tmp_path: Path) -> None:
    doc = {"server": "fetch", "serverInfo": {"name": "my-fetch", "version": "0.1.0"}, "tools": [OWN_FETCH]}
    assert read_tool_list(write(tmp_path / "own.json", doc)).server_info == "my-fetch"
    assert read_tool_list(write(tmp_path / "bare.json", {"tools": [OWN_FETCH]})).server_info is None
    hostile = {"tools": [OWN_FETCH], "serverInfo": {"name": ["not", "text"]}}
    assert read_tool_list(write(tmp_path / "hostile.json", hostile)).server_info is None


def test_a_log_gives_the_server_info_of_its_initialize_result(tmp_path: Path) -> None:
    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "my-fetch", "version": "1"}}
    lines = [
        {"jsonrpc": "2.0", "id": 0, "result": init},
        {"jsonrpc": "2.0", "id": 1, "result": {"tools": [OWN_FETCH]}},
    ]
    log = tmp_path / "fetch.jsonl"
    log.write_text("".join(json.dumps({"server": "fetch", "message": m}) + "\n" for m in lines), encoding="utf-8")
    listing = read_tool_list(log)
    assert (listing.server, listing.server_info) == ("fetch", "my-fetch")


def test_the_draft_binds_to_the_server_it_was_drafted_from(tmp_path: Path) -> None:
    doc = {"server": "fetch", "serverInfo": {"name": "my-fetch", "version": "0.1.0"}, "tools": [OWN_FETCH]}
    draft_id, folder = draft_pack(tmp_path / "rules", write(tmp_path / "own.json", doc))
    assert "server_info:\n  name: my-fetch\n" in (folder / "fetch.yaml").read_text(encoding="utf-8")
    rules = load_rules([folder])  # with the built-in packs, as a session loads them; the draft replaces fetch's
    mine = SessionMonitor(rules=rules)
    mine.register_tools("s", "fetch", [OWN_FETCH], identity=ServerIdentity(name="my-fetch", version="0.1.0"))
    assert mine.before_call("s", "fetch", "fetch", URL, "c1").rule_ids == (f"{draft_id}/fetch",)
    assert [a for a in mine.session("s").alerts if a.kind is AlertKind.DEFINITION_CHANGED] == []
    # the reference server given the same name is not the one the draft reviewed: told once, at info
    other = SessionMonitor(rules=rules)
    other.register_tools("s", "fetch", [REFERENCE_FETCH], identity=ServerIdentity(name="mcp-fetch"))
    assert other.before_call("s", "fetch", "fetch", URL, "c1").rule_ids == ()
    [alert] = [a for a in other.session("s").alerts if a.kind is AlertKind.DEFINITION_CHANGED]
    assert alert.severity is Severity.INFO and draft_id in alert.message


def test_without_a_server_info_the_draft_says_none(tmp_path: Path) -> None:
    _, folder = draft_pack(tmp_path / "rules", write(tmp_path / "bare.json", {"tools": [OWN_FETCH]}))
    assert "server_info" not in (folder / "fetch.yaml").read_text(encoding="utf-8")
    assert load_builtin_rules().find("fetch", "fetch") is not None
