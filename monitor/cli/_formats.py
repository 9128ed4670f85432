"""The input formats every command that reads session traces names in its ``--help``, written once."""

from __future__ import annotations

INPUT_FORMATS_HELP = (
    "Inputs (files or folders, told apart by content; - is standard input): native JSONL events, OTLP JSON "
    "spans, MCP JSON-RPC logs, Claude Code transcripts and hook payload logs, the Claude Code hook store "
    "(SQLite, see `trifecta sessions`), the proxy's audit log, and AgentDojo runs (folders or archives)."
)
