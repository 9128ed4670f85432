"""An MCP server over stdio that announces the ``serverInfo`` it is told and lists tool definitions verbatim, for
the tests of a server's identity (a server of the user's own that has a reviewed server's name).

``python named_server.py NAME VERSION TOOLS_JSON``: ``serverInfo`` is ``{name: NAME, version: VERSION}``;
``tools/list`` answers the tools of the JSON file exactly as written (names, descriptions, schemas,
annotations), so a test can serve a reviewed server's definitions; every ``tools/call`` answers one text block,
``page of <the call's url argument>``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.server.mcpserver import MCPServer


class NamedServer(MCPServer):
    """An MCPServer whose ``tools/list`` is the given definitions, verbatim."""

    def __init__(self, name: str, version: str, tools: list[dict[str, Any]]) -> None:
        super().__init__(name=name, version=version, log_level="WARNING")
        self.listed = [types.Tool.model_validate(tool) for tool in tools]

    async def list_tools(self) -> list[types.Tool]:
        """The definitions as given."""
        return self.listed

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> types.CallToolResult:
        """One text block naming the page asked for."""
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"page of {arguments.get('url')}")])


if __name__ == "__main__":
    name, version, tools_file = sys.argv[1:4]
    NamedServer(name, version, json.loads(Path(tools_file).read_text(encoding="utf-8"))).run("stdio")
