"""``trifecta proxy --policy reviewed-only`` as a real subprocess between a real MCP client and a real MCP server
over stdio (tests/hosts/proxy_servers/notes_server.py, whose ``lookup`` says ``readOnlyHint: true`` and which no
reviewed rule covers): ``review`` is put to the user through MCP elicitation (``elicitation/create``, MCP
2025-06-18), and a call outside ``--scope`` is refused without asking."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import mcp_types as types
from mcp import ClientSession, StdioServerParameters, stdio_client
from support.proxy_notes import Asker, proxy_params, text_of, tools_that_ran


async def look_up(params: StdioServerParameters, asker: Asker) -> types.CallToolResult:
    async with stdio_client(params) as (read, write), ClientSession(read, write, elicitation_callback=asker) as s:
        await s.initialize()
        await s.list_tools()
        return await s.call_tool("lookup", {"name": "payroll"})


def test_an_unreviewed_tool_is_put_to_the_user_and_runs_only_when_accepted(tmp_path: Path) -> None:
    declined = Asker(types.ElicitResult(action="decline"))
    result = anyio.run(look_up, proxy_params(tmp_path, "--policy", "reviewed-only", "--no-builtin-rules"), declined)
    assert len(declined.questions) == 1 and "no reviewed record" in declined.questions[0]["message"]
    assert result.is_error and "declined" in text_of(result)
    assert tools_that_ran(tmp_path) == []
    accepted = Asker(types.ElicitResult(action="accept", content={"accept": True}))
    result = anyio.run(look_up, proxy_params(tmp_path, "--policy", "reviewed-only", "--no-builtin-rules"), accepted)
    assert len(accepted.questions) == 1 and not result.is_error
    assert tools_that_ran(tmp_path) == ["lookup"]


def test_a_call_outside_the_scope_is_refused_without_asking(tmp_path: Path) -> None:
    (tmp_path / "scope.json").write_text(json.dumps({"tools": ["fetch_page"]}))
    asker = Asker(types.ElicitResult(action="accept", content={"accept": True}))
    options = ("--policy", "reviewed-only", "--scope", str(tmp_path / "scope.json"), "--no-builtin-rules")
    result = anyio.run(look_up, proxy_params(tmp_path, *options), asker)
    assert result.is_error and "outside the scope you gave" in text_of(result) and "lookup" in text_of(result)
    assert asker.questions == [] and tools_that_ran(tmp_path) == []
