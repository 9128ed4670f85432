"""The MCP client guard passes the ``serverInfo`` the server announced with its listings: a real server over
stdio (tests/hosts/servers/named_server.py) that the host named ``fetch``, through a real ``ClientSession``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, stdio_client
from support.fetch_servers import (
    FETCH_PACK,
    OWN_FETCH,
    OWN_INFO,
    REFERENCE_FETCH,
    REFERENCE_INFO,
    named_server_params,
)

from monitor.hosts.mcp import GuardedClientSession
from monitor.models import AlertKind, Severity
from monitor.session import SessionMonitor

KEY = "conversation-1"
URL = "https://example.com/"


def converse(tmp_path: Path, info: tuple[str, str], tools: list[dict[str, Any]], legacy: bool) -> SessionMonitor:
    """List the server's tools and fetch a page through the guard; return the monitor."""
    monitor = SessionMonitor()

    async def main() -> None:
        with open(os.devnull, "w") as errlog:
            params = named_server_params(tmp_path, info, tools)
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                guard = GuardedClientSession(session, monitor, session_key=KEY, server="fetch")
                await (guard.initialize() if legacy else guard.discover())
                await guard.list_tools()
                await guard.call_tool("fetch", {"url": URL})

    anyio.run(main)
    return monitor


def definition_changed(monitor: SessionMonitor) -> list[Any]:
    return [a for a in monitor.session(KEY).alerts if a.kind is AlertKind.DEFINITION_CHANGED]


@pytest.mark.parametrize("legacy", [True, False], ids=["initialize", "discover"])
def test_a_server_of_ones_own_named_fetch_is_not_taken_for_the_reviewed_one(tmp_path: Path, legacy: bool) -> None:
    monitor = converse(tmp_path, OWN_INFO, [OWN_FETCH], legacy)
    [call] = monitor.session(KEY).calls
    assert call.decision.rule_ids == ()
    [alert] = definition_changed(monitor)
    assert alert.severity is Severity.INFO and "serverInfo my-fetch 0.1.0" in alert.message


def test_the_reference_server_keeps_its_review_through_the_guard(tmp_path: Path) -> None:
    monitor = converse(tmp_path, REFERENCE_INFO, [REFERENCE_FETCH], legacy=True)
    [call] = monitor.session(KEY).calls
    assert call.decision.rule_ids == (f"{FETCH_PACK}/fetch",)
    assert definition_changed(monitor) == []
