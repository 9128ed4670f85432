"""``trifecta proxy`` passes on what it knows of a server besides the name it was given: the ``serverInfo`` of
``initialize`` and the package its command runs. A real proxy process sits between a real ``ClientSession`` and
a real server (tests/hosts/servers/named_server.py) that the user named ``fetch`` (``--server-name fetch``).

The proxy's own decisions are read from its audit log (each ``tool_call`` line carries the decision the proxy
took), and the audit log is analysed again as ``trifecta analyze`` does, which must reach the same answer.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from support.fetch_servers import (
    FETCH_PACK,
    OWN_FETCH,
    OWN_INFO,
    REFERENCE_FETCH,
    REFERENCE_INFO,
    named_server_command,
)

from monitor.analysis import analyze_records
from monitor.hosts._proxy import StdioProxy
from monitor.ingest import InputFormat, read_inputs
from monitor.models import AlertKind, RecordError, ServerIdentity, SessionReport, Severity
from monitor.session import SessionMonitor

URL = "https://example.com/"


async def _converse(params: StdioServerParameters) -> None:
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            await session.call_tool("fetch", {"url": URL})


def run_proxy(tmp_path: Path, info: tuple[str, str], tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Run the conversation through ``trifecta proxy --server-name fetch``; return its audit log's lines."""
    audit = tmp_path / "audit.jsonl"
    server = named_server_command(tmp_path, info, tools)
    args = ["-m", "monitor", "proxy", "--server-name", "fetch", "--audit-log", str(audit), "--", *server]
    params = StdioServerParameters(command=sys.executable, args=args, env=dict(os.environ), cwd=str(tmp_path))
    anyio.run(_converse, params)
    return [json.loads(line) for line in audit.read_text(encoding="utf-8").splitlines()]


def replay(audit: Path) -> SessionReport:
    records = list(read_inputs([audit], InputFormat.AUTO))
    assert [r for r in records if isinstance(r, RecordError)] == []
    [report] = [r for r in analyze_records(records, SessionMonitor()) if isinstance(r, SessionReport)]
    return report


def test_a_server_named_fetch_that_announces_another_server_info_is_not_taken_for_the_reviewed_one(
    tmp_path: Path,
) -> None:
    lines = run_proxy(tmp_path, OWN_INFO, [OWN_FETCH])
    [listed] = [line for line in lines if line["kind"] == "tools_listed"]
    assert listed["server"] == "fetch"
    assert listed["identity"] == {"name": "my-fetch", "version": "0.1.0"}  # python named_server.py: no package
    [call] = [line for line in lines if line["kind"] == "tool_call"]
    assert call["decision"]["rule_ids"] == []  # the proxy did not apply the fetch pack
    report = replay(tmp_path / "audit.jsonl")
    alerts = [a for a in report.alerts if a.kind is AlertKind.DEFINITION_CHANGED]
    assert [a.severity for a in alerts] == [Severity.INFO]
    assert "serverInfo my-fetch 0.1.0" in alerts[0].message


def test_the_reference_server_info_keeps_the_pack_behind_the_proxy(tmp_path: Path) -> None:
    lines = run_proxy(tmp_path, REFERENCE_INFO, [REFERENCE_FETCH])
    [listed] = [line for line in lines if line["kind"] == "tools_listed"]
    assert listed["identity"] == {"name": "mcp-fetch", "version": "2026.10.24"}
    [call] = [line for line in lines if line["kind"] == "tool_call"]
    assert call["decision"]["rule_ids"] == [f"{FETCH_PACK}/fetch"]
    report = replay(tmp_path / "audit.jsonl")
    assert [a for a in report.alerts if a.kind is AlertKind.DEFINITION_CHANGED] == []


@pytest.mark.parametrize(
    ("command", "args", "package"),
    [
        ("uvx", ["mcp-server-fetch"], "mcp-server-fetch"),
        ("npx", ["-y", "@modelcontextprotocol/server-fetch"], "@modelcontextprotocol/server-fetch"),
        ("python", ["server.py"], None),
    ],
)
def test_the_proxy_knows_the_package_its_command_runs_before_the_server_says_anything(
    command: str, args: list[str], package: str | None
) -> None:
    proxy = StdioProxy(SessionMonitor(), command, args)
    assert proxy.identity == (ServerIdentity(package=package) if package else None)


def test_the_package_and_the_server_info_go_together_and_a_foreign_package_unbinds_the_pack() -> None:
    """In process: the proxy's handling of the initialize and tools/list responses, with a package from the
    command line that the fetch pack does not name."""
    from mcp_types import JSONRPCResponse

    from monitor.hosts._proxy import _Tracked

    monitor = SessionMonitor()
    proxy = StdioProxy(monitor, "uvx", ["acme-fetch-mcp"], session_key="k", server_name="fetch")
    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "mcp-fetch", "version": "1"}}
    proxy._on_response(_Tracked("initialize"), JSONRPCResponse(jsonrpc="2.0", id=1, result=init))
    proxy._on_response(
        _Tracked("tools/list"), JSONRPCResponse(jsonrpc="2.0", id=2, result={"tools": [REFERENCE_FETCH]})
    )
    assert proxy.identity == ServerIdentity(name="mcp-fetch", version="1", package="acme-fetch-mcp")
    assert monitor.before_call("k", "fetch", "fetch", {"url": URL}, "c1").rule_ids == ()
    [alert] = [a for a in monitor.session("k").alerts if a.kind is AlertKind.DEFINITION_CHANGED]
    assert alert.severity is Severity.INFO and "package acme-fetch-mcp" in alert.message
