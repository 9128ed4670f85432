"""Standard input the reader must buffer (every format but native JSONL) is bounded by ``MAX_STDIN_BYTES``;
native JSONL streams past the bound. Seen through ``trifecta analyze -``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from monitor.cli import main
from monitor.ingest import _inputs

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def test_buffered_standard_input_is_bounded_and_jsonl_streams_past_the_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_inputs, "MAX_STDIN_BYTES", 1000)
    mcp = (SAMPLES / "mcp" / "calendar-invite.jsonl").read_bytes()
    assert len(mcp) > 1000
    result = CliRunner().invoke(main, ["analyze", "-"], input=mcp)
    assert result.exit_code == 2
    assert "error: <stdin>: standard input (mcp) is over 1000 bytes; give it as a file" in result.stderr
    native = (SAMPLES / "sessions" / "calendar-invite.jsonl").read_bytes()
    assert len(native) > 1000
    result = CliRunner().invoke(main, ["analyze", "-", "--format", "json"], input=native)
    assert result.exit_code in (0, 2), result.output
    assert json.loads(result.stdout)["sessions"][0]["session_id"] == "calendar-invite"
