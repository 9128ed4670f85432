"""``trifecta proxy`` in front of the notes server of tests/hosts/proxy_servers, for tests that drive it with a
real MCP client: the proxy's parameters, what the server ran, and an elicitation callback that answers."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp import StdioServerParameters

SERVER = Path(__file__).resolve().parents[1] / "hosts" / "proxy_servers" / "notes_server.py"


def proxy_params(tmp_path: Path, *options: str) -> StdioServerParameters:
    """``python -m monitor proxy OPTIONS -- python notes_server.py CALLS`` (the full environment passed on)."""
    server = [sys.executable, str(SERVER), str(tmp_path / "calls.jsonl")]
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "monitor", "proxy", *options, "--", *server],
        env=dict(os.environ),
        cwd=str(tmp_path),
    )


def tools_that_ran(tmp_path: Path) -> list[str]:
    """The tools the server ran, in order."""
    calls = tmp_path / "calls.jsonl"
    if not calls.exists():
        return []
    return [json.loads(line)["tool"] for line in calls.read_text(encoding="utf-8").splitlines()]


def text_of(result: types.CallToolResult) -> str:
    """The text blocks of a tool result, joined."""
    return " ".join(block.text for block in result.content if isinstance(block, types.TextContent))


class Asker:
    """An elicitation callback that records each question and gives one answer."""

    def __init__(self, answer: types.ElicitResult) -> None:
        self.answer = answer
        self.questions: list[dict[str, Any]] = []

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        self.questions.append(params.model_dump(by_alias=True, exclude_none=True))
        return self.answer
