"""One table style across ``analyze``, ``lint`` and ``eval``: a bold header over a rule, no frame."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from monitor.cli import main

ROOT = Path(__file__).resolve().parents[2]
FRAME = set("┏┓┗┛┃│┡┩╇╈━┣┫")


def _header_and_rule(text: str) -> tuple[str, str]:
    lines = text.splitlines()
    index = next(i for i, line in enumerate(lines) if line and set(line.strip()) == {"─"})
    return lines[index - 1], lines[index]


def test_analyze_lint_and_eval_tables_share_one_style(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(
        json.dumps({"server": "demo", "tools": [{"name": "send", "inputSchema": {"type": "object"}}]}), "utf-8"
    )
    outputs = {
        "analyze": CliRunner().invoke(main, ["analyze", str(ROOT / "samples" / "sessions")]).stdout,
        "lint": CliRunner().invoke(main, ["lint", str(tools)]).stdout,
        "eval": CliRunner().invoke(main, ["eval", "scenarios", str(ROOT / "tests" / "scenarios" / "mail")]).stdout,
    }
    for command, text in outputs.items():
        assert not FRAME & set(text), f"{command} draws a frame"
        header, rule = _header_and_rule(text)
        assert header.split()[0] in {"level", "tool", "scenario"}, (command, header)
        assert len(rule.rstrip()) >= len(header.rstrip()) - 1, command
