"""Every record a reader yields names where it came from: events and errors the record they were read from, a
session's end the input that ended or the record that closed it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from monitor.ingest import read_inputs
from monitor.models import RecordError, SessionEnd

ROOT = Path(__file__).resolve().parents[2]
INPUTS = [
    ROOT / "samples" / "sessions",
    ROOT / "samples" / "mcp",
    ROOT / "samples" / "claude-code",
    ROOT / "samples" / "otel",
    ROOT / "tests" / "data" / "agentdojo-sample.tar.gz",
]


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.name)
def test_every_record_of_every_format_names_its_source(path: Path) -> None:
    records = list(read_inputs([path]))
    assert any(isinstance(r, SessionEnd) for r in records)
    unnamed = [r for r in records if not r.source]
    assert unnamed == []
    for end in (r for r in records if isinstance(r, SessionEnd)):
        assert end.source is not None and str(path.name) in end.source


def test_a_session_closed_by_the_bound_on_open_sessions_names_the_line_that_closed_it(tmp_path: Path) -> None:
    from monitor.ingest._jsonl import read_jsonl_stream

    lines = [{"kind": "user_message", "session_id": f"s{i}", "text": "hi"} for i in range(3)]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    with path.open("rb") as fh:
        records = list(read_jsonl_stream(fh, str(path), max_open_sessions=2))
    ends = [(r.session_id, r.source) for r in records if isinstance(r, SessionEnd)]
    assert ends == [("s0", f"{path}:3"), ("s1", str(path)), ("s2", str(path))]
    assert not any(isinstance(r, RecordError) for r in records)
