"""``trifecta proxy``: a stdio MCP proxy that decides every tool call."""

from __future__ import annotations

import click

__all__ = ["COMMANDS"]

COMMANDS: list[click.Command] = []
