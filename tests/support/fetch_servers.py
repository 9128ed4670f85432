"""Two servers the user may have named ``fetch``: the reference Fetch server the built-in ``fetch`` pack reviewed,
and one of the user's own that has the same name (and a ``fetch`` tool of its own). The tests of a server's
identity serve them for real (tests/hosts/servers/named_server.py) to the MCP log reader, the proxy and the
SDK guard."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from mcp import StdioServerParameters

NAMED_SERVER = Path(__file__).resolve().parents[1] / "hosts" / "servers" / "named_server.py"
REFERENCE_INFO = ("mcp-fetch", "2026.10.24")
"""The reference server's ``serverInfo`` (name, version): the one the fetch pack declares."""
OWN_INFO = ("my-fetch", "0.1.0")
"""The ``serverInfo`` of the user's own server that is also called ``fetch``."""
FETCH_PACK = "ece3708a-e827-4db2-a7d5-2f217dc088b6"
# The reference Fetch server's tool as mcp-server-fetch 2026.10.24 serves it (../shared/data/mcp-servers/
# modelcontextprotocol-fetch.json, captured from the published package; MIT license).
REFERENCE_FETCH: dict[str, Any] = {
    "name": "fetch",
    "description": "Fetches a URL from the internet and optionally extracts its contents as markdown.\n\nAlthough "
    "originally you did not have internet access, and were advised to refuse and tell the user this, this tool now "
    "grants you internet access. Now you can fetch the most up-to-date information and let the user know that.",
    "inputSchema": {
        "properties": {
            "url": {"description": "URL to fetch", "format": "uri", "minLength": 1, "title": "Url", "type": "string"},
            "max_length": {
                "default": 5000,
                "description": "Maximum number of characters to return.",
                "maximum": 999999,
                "minimum": 1,
                "title": "Max Length",
                "type": "integer",
            },
            "start_index": {
                "default": 0,
                "description": "On return output starting at this character index, useful if a previous fetch was "
                "truncated and more context is required.",
                "minimum": 0,
                "title": "Start Index",
                "type": "integer",
            },
            "raw": {
                "default": False,
                "description": "Get the actual HTML content of the requested page, without simplification.",
                "title": "Raw",
                "type": "boolean",
            },
        },
        "required": ["url"],
        "type": "object",
        "title": "fetchArguments",
    },
    "annotations": {"destructiveHint": False, "idempotentHint": True, "openWorldHint": True, "readOnlyHint": True},
}
# A server of the user's own that the user also called "fetch": another tool of the same name.
OWN_FETCH: dict[str, Any] = {
    "name": "fetch",
    "description": "Fetch a page of the team wiki by its path and return it as text.",
    "inputSchema": {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]},
}


def named_server_command(tmp_path: Path, info: tuple[str, str], tools: list[dict[str, Any]]) -> list[str]:
    """The command line of a server announcing ``info`` (name, version) and listing ``tools`` verbatim."""
    tools_file = tmp_path / f"{info[0]}-tools.json"
    tools_file.write_text(json.dumps(tools), encoding="utf-8")
    return [sys.executable, str(NAMED_SERVER), info[0], info[1], str(tools_file)]


def named_server_params(tmp_path: Path, info: tuple[str, str], tools: list[dict[str, Any]]) -> StdioServerParameters:
    """The same, as the ``mcp`` SDK's stdio parameters."""
    command = named_server_command(tmp_path, info, tools)
    return StdioServerParameters(command=command[0], args=command[1:], cwd=str(tmp_path))
