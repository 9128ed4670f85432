"""Commands for Claude Code: ``hook``, ``install``, ``uninstall`` and ``sessions``."""

from __future__ import annotations

import click

__all__ = ["COMMANDS"]

COMMANDS: list[click.Command] = []
