"""The Claude Code hook client (standard library only). Placeholder: the client lands here."""

from __future__ import annotations

import sys


def run_hook(argv: list[str]) -> None:
    """Answer one Claude Code hook event read from stdin. Placeholder."""
    sys.stdout.write("{}\n")
