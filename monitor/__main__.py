"""``python -m monitor`` and the ``trifecta`` command: the command line, with a fast path for the hook.

``trifecta hook claude-code`` runs once per Claude Code event, so it must start in milliseconds: it goes to
the hook client (standard library only) without loading the command line or the engine.
"""

from __future__ import annotations

import sys


def main() -> None:
    """Run the ``trifecta`` command line."""
    if sys.argv[1:3] == ["hook", "claude-code"]:
        from monitor.hosts.claude_code import run_hook

        run_hook(sys.argv[3:])
        return
    from monitor.cli import main as run_cli

    run_cli()


if __name__ == "__main__":
    main()
