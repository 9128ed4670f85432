"""A real MCP 2026-07-28 exchange over stdio, recorded and read back.

The ``mcp`` SDK's ``Client`` (mode ``auto``, which speaks 2026-07-28 when the server does) talks to a real
SDK server (``tests/hosts/proxy_servers/notes_server.py``) through a relay subprocess that records every line
(``recording/tee_stdio.py``). The log is then read by the MCP log reader and linted: the SDK's own traffic
keeps the 2026-07-28 rules (no ``initialize``, ``_meta`` on every request, ``resultType`` on every result).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import StdioServerParameters
from mcp.client.client import Client

from monitor.ingest._mcp import read_mcp
from monitor.lint import lint_paths
from monitor.models import RecordError, ToolCall, ToolResult, ToolsListed

HERE = Path(__file__).resolve().parent
SERVER = HERE.parent / "hosts" / "proxy_servers" / "notes_server.py"
TEE = HERE / "recording" / "tee_stdio.py"


class Accept:
    """An elicitation callback that answers the form."""

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"colour": "teal"})


async def _converse(params: StdioServerParameters) -> str:
    async with Client(params, mode="auto", elicitation_callback=Accept()) as client:
        version = client.protocol_version
        await client.list_tools()
        await client.call_tool("echo", {"text": "plain words"})
        await client.call_tool("ask_colour", {})
    return str(version)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("recorded")
    log = folder / "notes.jsonl"
    server = [sys.executable, str(SERVER), str(folder / "calls.jsonl")]
    params = StdioServerParameters(command=sys.executable, args=[str(TEE), str(log), "--", *server], cwd=str(folder))
    assert anyio.run(_converse, params) == "2026-07-28"
    return log


def test_the_recorded_exchange_is_2026_07_28_traffic(recorded: Path) -> None:
    messages = [json.loads(line)["message"] for line in recorded.read_text().splitlines()]
    methods = [m.get("method") for m in messages if "method" in m]
    assert "initialize" not in methods and "tools/call" in methods
    requests = [m for m in messages if "method" in m and "id" in m]
    assert all(m["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28" for m in requests)
    assert all("resultType" in m["result"] for m in messages if "result" in m)


def test_the_reader_reads_it_back(recorded: Path) -> None:
    records = list(read_mcp(recorded))
    assert [r for r in records if isinstance(r, RecordError)] == []
    [listed] = [r for r in records if isinstance(r, ToolsListed)]
    assert {t["name"] for t in listed.tools} >= {"echo", "ask_colour"}
    calls = [r for r in records if isinstance(r, ToolCall)]
    assert [c.tool for c in calls] == ["echo", "ask_colour"]  # the retry after input_required is the same call
    results = {r.call_id: r for r in records if isinstance(r, ToolResult)}
    asked = results[calls[1].call_id]
    assert asked.result["content"][0]["text"] == "colour: teal" and not asked.is_error
    assert {c.session_id for c in calls} == {"notes"}  # no protocol session: keyed by the file
    # no initialize and no server field: the name comes from the results' io.modelcontextprotocol/serverInfo
    assert {c.server for c in calls} == {listed.server} == {"notes-desk"}


def test_lint_finds_no_protocol_fault_in_the_sdk_traffic(recorded: Path) -> None:
    report = lint_paths([recorded])
    assert report.listings[0].protocol_version == "2026-07-28"
    protocol = {
        "method-not-in-protocol",
        "session-id-in-sessionless-protocol",
        "request-meta-missing",
        "result-type-missing",
        "protocol-version-unknown",
    }
    assert [f for f in report.findings if f.id in protocol] == []
