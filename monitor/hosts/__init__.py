"""Ready-made integrations with agent hosts.

- :mod:`monitor.hosts.mcp`: a guard around an MCP SDK ``ClientSession``, middleware for an MCP server, and
  the stdio proxy behind ``trifecta proxy``;
- :mod:`monitor.hosts.claude_code`: the Claude Code hook (``trifecta hook claude-code``), its engine and its
  settings (``trifecta install claude-code``).

This package imports nothing itself: the hook client under it must start in milliseconds.
"""

__all__: list[str] = []
