"""The three incidents and their benign look-alikes give the same levels and decisions in every format."""

from pathlib import Path

import pytest

from monitor import SessionMonitor
from monitor.analysis import analyze_records
from monitor.ingest import InputFormat, detect_format, read_inputs
from monitor.models import SessionReport

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
SESSIONS = [
    "github-public-issue",
    "github-benign",
    "supabase-ticket",
    "supabase-benign",
    "calendar-invite",
    "calendar-benign",
]
FORMATS = {
    "mcp": (SAMPLES / "mcp", InputFormat.MCP),
    "claude-code": (SAMPLES / "claude-code", InputFormat.CLAUDE_CODE),
    "otel-genai": (SAMPLES / "otel" / "genai.jsonl", InputFormat.OTLP),
    "otel-openinference": (SAMPLES / "otel" / "openinference.jsonl", InputFormat.OTLP),
}


def outcome(path: Path, *, listed: bool = True) -> dict[str, tuple[str, list[tuple[str, str]]]]:
    """Session id -> (level, [(tool, action) per call]); ``listed=False`` drops the tool listings first."""
    result = {}
    records = read_inputs([path])
    if not listed:
        records = (r for r in records if getattr(r, "kind", None) != "tools_listed")
    for item in analyze_records(records, SessionMonitor()):
        assert isinstance(item, SessionReport), item
        result[item.session_id] = (item.level.value, [(c.tool, c.decision.action.value) for c in item.calls])
    return result


REFERENCE = outcome(SAMPLES / "sessions")
# Claude Code transcripts carry no tools/list: they match the native sessions without their listings, where a
# pinned rule pack cannot check its pin and so does not lower the risk.
UNLISTED = {"claude-code"}
REFERENCE_UNLISTED = outcome(SAMPLES / "sessions", listed=False)


def test_the_reference_has_the_six_sessions() -> None:
    assert sorted(REFERENCE) == sorted(SESSIONS)
    assert {REFERENCE[s][0] for s in SESSIONS if "benign" not in s} == {"exfiltration"}


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_every_format_gives_the_same_levels_and_decisions(name: str) -> None:
    path, fmt = FORMATS[name]
    assert path.exists(), f"missing sample {path}"
    files = [path] if path.is_file() else sorted(p for p in path.glob("*.jsonl"))
    assert all(detect_format(f) is fmt for f in files), [(f, detect_format(f)) for f in files]
    got = outcome(path)
    reference = REFERENCE_UNLISTED if name in UNLISTED else REFERENCE
    for session in SESSIONS:
        assert got.get(session) == reference[session], (name, session)


def test_a_folder_mixing_every_format_is_read_without_errors() -> None:
    items = list(analyze_records(read_inputs([SAMPLES]), SessionMonitor()))
    errors = [i for i in items if not isinstance(i, SessionReport)]
    assert errors == []
    formats = {detect_format(p) for p in SAMPLES.rglob("*.jsonl")}
    assert formats == {InputFormat.JSONL, InputFormat.OTLP, InputFormat.MCP, InputFormat.CLAUDE_CODE}
    # Six sessions in each of five sample sets, plus the Claude Code hook stream and built-in session.
    assert len(items) == 6 * 5 + 2
