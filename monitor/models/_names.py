"""Tool and server names as traces write them."""

from __future__ import annotations

CLAUDE_CODE_SERVER = "claude-code"
"""The server Claude Code's built-in tools (Read, Bash, WebFetch, …) are reported under."""

MCP_PREFIX = "mcp__"


def split_mcp_name(name: str) -> tuple[str, str] | None:
    """``mcp__<server>__<tool>`` → ``(server, tool)``; None for any other name."""
    if not name.startswith(MCP_PREFIX):
        return None
    server, sep, tool = name[len(MCP_PREFIX) :].partition("__")
    if not sep or not server or not tool:
        return None
    return server, tool
