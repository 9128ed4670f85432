"""``trifecta proxy --policy reviewed-only`` as a real subprocess between a real MCP client and a real MCP server
over stdio (tests/hosts/proxy_servers/notes_server.py, whose ``lookup`` says ``readOnlyHint: true`` and which no
reviewed rule covers): ``review`` is put to the user through MCP elicitation (``elicitation/create``, MCP
2025-06-18), and a call outside ``--scope`` is refused without asking."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import ClientSession, StdioServerParameters, stdio_client

SERVER = Path(__file__).resolve().parent / "proxy_servers" / "notes_server.py"


def proxy_params(tmp_path: Path, *options: str) -> StdioServerParameters:
    server = [sys.executable, str(SERVER), str(tmp_path / "calls.jsonl")]
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "monitor", "proxy", *options, "--", *server],
        env=dict(os.environ),
        cwd=str(tmp_path),
    )


def tools_that_ran(tmp_path: Path) -> list[str]:
    calls = tmp_path / "calls.jsonl"
    if not calls.exists():
        return []
    return [json.loads(line)["tool"] for line in calls.read_text(encoding="utf-8").splitlines()]


class Asker:
    """An elicitation callback that records each question and gives one answer."""

    def __init__(self, answer: types.ElicitResult) -> None:
        self.answer = answer
        self.questions: list[str] = []

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        self.questions.append(params.model_dump(by_alias=True, exclude_none=True)["message"])
        return self.answer


async def look_up(params: StdioServerParameters, asker: Asker) -> types.CallToolResult:
    async with stdio_client(params) as (read, write), ClientSession(read, write, elicitation_callback=asker) as s:
        await s.initialize()
        await s.list_tools()
        return await s.call_tool("lookup", {"name": "payroll"})


def text_of(result: types.CallToolResult) -> str:
    return " ".join(block.text for block in result.content if isinstance(block, types.TextContent))


def test_an_unreviewed_tool_is_put_to_the_user_and_runs_only_when_accepted(tmp_path: Path) -> None:
    declined = Asker(types.ElicitResult(action="decline"))
    result = anyio.run(look_up, proxy_params(tmp_path, "--policy", "reviewed-only", "--no-builtin-rules"), declined)
    assert len(declined.questions) == 1 and "no reviewed record" in declined.questions[0]
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
