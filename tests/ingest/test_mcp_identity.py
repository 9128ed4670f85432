"""A server's identity in an MCP JSON-RPC log: the ``serverInfo`` of its ``initialize`` result goes with its tool
listings, so a server of the user's own that the host named ``fetch`` is not taken for the reviewed Fetch server.

The logs are recorded from real servers over stdio (tests/hosts/servers/named_server.py through the recording
relay, a real ``mcp`` ``ClientSession``), as a host that names its servers writes them (``"server": "fetch"`` on
each line), then analysed as ``trifecta analyze`` does.
"""

from __future__ import annotations

import json
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
from monitor.ingest._mcp import read_mcp
from monitor.models import (
    MAX_IDENTITY_CHARS,
    AlertKind,
    RecordError,
    ServerIdentity,
    SessionReport,
    Severity,
    ToolsListed,
    read_announced_identity,
    read_server_info,
)
from monitor.session import SessionMonitor

TEE = Path(__file__).resolve().parent / "recording" / "tee_stdio.py"
URL = "https://example.com/"


async def _converse(params: StdioServerParameters) -> None:
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.list_tools()
        await session.call_tool("fetch", {"url": URL})


def record(tmp_path: Path, info: tuple[str, str], tools: list[dict[str, Any]]) -> Path:
    """Record a conversation with a server announcing ``info`` that the host named ``fetch``."""
    log = tmp_path / f"{info[0]}.jsonl"
    server = named_server_command(tmp_path, info, tools)
    args = [str(TEE), str(log), "--server", "fetch", "--", *server]
    anyio.run(_converse, StdioServerParameters(command=sys.executable, args=args, cwd=str(tmp_path)))
    return log


def analyze(log: Path) -> tuple[ToolsListed, SessionReport]:
    records = list(read_mcp(log))
    assert [r for r in records if isinstance(r, RecordError)] == []
    [listed] = [r for r in records if isinstance(r, ToolsListed)]
    [report] = [r for r in analyze_records(records, SessionMonitor()) if isinstance(r, SessionReport)]
    return listed, report


def definition_changed(report: SessionReport) -> list[Any]:
    return [a for a in report.alerts if a.kind is AlertKind.DEFINITION_CHANGED]


@pytest.fixture(scope="module")
def own(tmp_path_factory: pytest.TempPathFactory) -> tuple[ToolsListed, SessionReport]:
    return analyze(record(tmp_path_factory.mktemp("own"), OWN_INFO, [OWN_FETCH]))


def test_the_listing_carries_the_server_info_of_the_connection(own: tuple[ToolsListed, SessionReport]) -> None:
    listed, _ = own
    assert listed.server == "fetch"  # the host's name for it, not the one it announces
    assert listed.identity == ServerIdentity(name="my-fetch", version="0.1.0")


def test_a_server_of_ones_own_named_fetch_gets_one_info_notice_and_no_high_alert(
    own: tuple[ToolsListed, SessionReport],
) -> None:
    _, report = own
    [alert] = definition_changed(report)
    assert alert.severity is Severity.INFO
    assert "serverInfo my-fetch 0.1.0" in alert.message and FETCH_PACK in alert.message
    assert "trifecta rules suggest" in alert.message


def test_its_tools_are_judged_as_an_unreviewed_servers(own: tuple[ToolsListed, SessionReport], tmp_path: Path) -> None:
    _, report = own
    [call] = report.calls
    assert call.decision.rule_ids == ()
    assert not any(FETCH_PACK in p.rule for p in call.provenance.values())
    # the same tool on a server no pack names gets the same legs
    unnamed = SessionMonitor()
    unnamed.register_tools("s", "wiki", [OWN_FETCH])
    expected = unnamed.before_call("s", "wiki", "fetch", {"url": URL}, "c1")
    assert set(call.legs) == expected.legs_call


def test_the_reference_server_info_keeps_the_pack(tmp_path: Path) -> None:
    listed, report = analyze(record(tmp_path, REFERENCE_INFO, [REFERENCE_FETCH]))
    assert listed.identity == ServerIdentity(name="mcp-fetch", version="2026.10.24")
    assert definition_changed(report) == []
    [call] = report.calls
    assert call.decision.rule_ids == (f"{FETCH_PACK}/fetch",)


def test_without_a_server_info_the_pack_applies_by_name_and_its_pin_alert_is_high(tmp_path: Path) -> None:
    """What the log gave before: the same server's traffic with its initialize result left out of the log."""
    log = record(tmp_path, OWN_INFO, [OWN_FETCH])
    lines = log.read_text(encoding="utf-8").splitlines()
    log.write_text("\n".join(line for line in lines if '"serverInfo"' not in line) + "\n", encoding="utf-8")
    records = [r for r in read_mcp(log) if not isinstance(r, RecordError)]  # the unanswered initialize
    [listed] = [r for r in records if isinstance(r, ToolsListed)]
    assert listed.identity is None
    [report] = [r for r in analyze_records(records, SessionMonitor()) if isinstance(r, SessionReport)]
    [alert] = definition_changed(report)
    assert alert.severity is Severity.HIGH


@pytest.mark.parametrize(
    ("info", "expected"),
    [
        ({"name": "my-fetch", "version": "1"}, ServerIdentity(name="my-fetch", version="1")),
        ({"name": "  my-fetch\n"}, ServerIdentity(name="my-fetch")),
        ({"name": 7, "version": ["x"]}, None),
        ({"name": "", "version": "1"}, None),
        ({"name": "a\x1b[31mb"}, ServerIdentity(name="a\ufffd[31mb")),
        ("my-fetch", None),
        (None, None),
    ],
)
def test_a_server_info_is_read_as_hostile_input(info: Any, expected: ServerIdentity | None) -> None:
    assert read_server_info(info) == expected


def test_an_overlong_server_info_name_is_cut_and_can_match_no_pack() -> None:
    identity = read_server_info({"name": "mcp-fetch" * 1000})
    assert identity is not None and identity.name is not None
    assert len(identity.name) == MAX_IDENTITY_CHARS + 1 and identity.name.endswith("…")


def test_the_2026_stamp_names_the_server_when_there_is_no_initialize() -> None:
    stamp = {"_meta": {"io.modelcontextprotocol/serverInfo": {"name": "my-fetch", "version": "2"}}}
    assert read_announced_identity(stamp, initialize=False) == ServerIdentity(name="my-fetch", version="2")
    assert read_announced_identity({"serverInfo": {"name": "x"}}, initialize=False) is None
    assert read_announced_identity({"serverInfo": {"name": "x"}}, initialize=True) == ServerIdentity(name="x")
    assert read_announced_identity({"serverInfo": {"name": " "}}, initialize=True) is None
    assert read_announced_identity(None, initialize=True) is None


def test_a_2026_log_takes_the_identity_from_the_stamp_of_a_result(tmp_path: Path) -> None:
    """MCP 2026-07-28 has no initialize: the serverInfo stamp in a result's _meta names the server."""
    stamp = {"io.modelcontextprotocol/serverInfo": {"name": "my-fetch", "version": "2"}}
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        {"jsonrpc": "2.0", "id": 1, "result": {"tools": [OWN_FETCH], "resultType": "complete", "_meta": stamp}},
    ]
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps({"server": "fetch", "message": m}) + "\n" for m in lines), encoding="utf-8")
    [listed] = [r for r in read_mcp(log) if isinstance(r, ToolsListed)]
    assert (listed.server, listed.identity) == ("fetch", ServerIdentity(name="my-fetch", version="2"))


def test_a_later_initialize_on_the_connection_replaces_the_identity(tmp_path: Path) -> None:
    def init(id_: int, name: str) -> list[dict[str, Any]]:
        result = {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": name}}
        return [
            {"jsonrpc": "2.0", "id": id_, "method": "initialize", "params": {}},
            {"jsonrpc": "2.0", "id": id_, "result": result},
        ]

    def listing(id_: int, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            {"jsonrpc": "2.0", "id": id_, "method": "tools/list"},
            {"jsonrpc": "2.0", "id": id_, "result": {"tools": tools}},
        ]

    lines = [*init(0, "mcp-fetch"), *listing(1, [REFERENCE_FETCH]), *init(2, "my-fetch"), *listing(3, [OWN_FETCH])]
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps({"server": "fetch", "message": m}) + "\n" for m in lines), encoding="utf-8")
    listed = [r for r in read_mcp(log) if isinstance(r, ToolsListed)]
    assert [x.identity.name if x.identity else None for x in listed] == ["mcp-fetch", "my-fetch"]
