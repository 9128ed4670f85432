"""``trifecta analyze`` at scale: standard input, the --level/--min-severity filters, the progress display on a
terminal only, the source of each session, and help texts that name every input format."""

from __future__ import annotations

import io
import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from rich.console import Console
from support.cli_sessions import QUIET_SESSION, TRIFECTA_SESSION, Writer

from monitor.analysis import AnalysisProgress
from monitor.cli import _progress, main
from monitor.cli._progress import ProgressLine, show_progress

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
INPUT_FORMATS = (
    "native JSONL",
    "OTLP JSON",
    "MCP JSON-RPC",
    "Claude Code transcripts",
    "hook payload logs",
    "hook store",
    "proxy's audit log",
    "AgentDojo runs",
)


def run(*args: str | Path, stdin: bytes | None = None) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args], input=stdin)


def analyze_json(*args: str | Path, stdin: bytes | None = None) -> dict[str, Any]:
    result = run("analyze", *args, "--format", "json", stdin=stdin)
    assert result.exit_code in (0, 2), result.output
    document: dict[str, Any] = json.loads(result.stdout)
    return document


@pytest.fixture
def mixed_trace(tmp_path: Path, write_jsonl: Writer) -> Path:
    """Three sessions: exfiltration (alerts up to critical), armed after a read only (a warning), and partial
    (a user message only, no alert)."""
    armed = [
        {**e, "session_id": "armed"} for e in TRIFECTA_SESSION[:3]
    ]  # a read that brings untrusted text, no sending
    return write_jsonl(tmp_path / "mixed.jsonl", TRIFECTA_SESSION + armed + QUIET_SESSION)


# -- standard input -------------------------------------------------------------------------------------------


def test_a_pipe_into_analyze_dash_gives_what_the_file_gives() -> None:
    sample = SAMPLES / "sessions" / "calendar-invite.jsonl"
    piped = subprocess.run(
        f"cat {sample} | {sys.executable} -m monitor analyze - --format json",
        shell=True,
        capture_output=True,
        cwd=ROOT,
        check=False,
    )
    assert piped.returncode == 0, piped.stderr
    from_pipe = json.loads(piped.stdout)
    from_file = analyze_json(sample)
    assert [s["source"] for s in from_pipe["sessions"]] == ["<stdin>"]
    for session in from_pipe["sessions"] + from_file["sessions"]:
        session.pop("source")
        for call in session["calls"]:
            call.pop("source")
    assert from_pipe["sessions"] == from_file["sessions"]


@pytest.mark.parametrize("folder", ["mcp", "otel", "claude-code"])
def test_standard_input_format_is_told_from_its_content(folder: str) -> None:
    name = "genai.jsonl" if folder == "otel" else "calendar-invite.jsonl"
    from_stdin = analyze_json("-", stdin=(SAMPLES / folder / name).read_bytes())
    from_file = analyze_json(SAMPLES / folder / name)
    assert from_stdin["errors"] == []
    assert [(s["session_id"], s["level"]) for s in from_stdin["sessions"]] == [
        (s["session_id"], s["level"]) for s in from_file["sessions"]
    ]
    assert {s["source"] for s in from_stdin["sessions"]} == {"<stdin>"}
    calls = [c["source"] for s in from_stdin["sessions"] for c in s["calls"] if c["source"]]
    assert all(c.startswith("<stdin>") for c in calls)


def test_errors_in_standard_input_name_it_and_its_line() -> None:
    bad = (SAMPLES / "mcp" / "calendar-invite.jsonl").read_bytes() + b'{"jsonrpc": "2.0", bad\n'
    result = run("analyze", "-", stdin=bad)
    assert result.exit_code == 2
    lines = bad.count(b"\n")
    assert f"error: <stdin>:{lines}: not JSON" in result.stderr
    assert "calendar-invite" in result.stdout  # the valid session is still reported


def test_standard_input_of_no_known_format_is_one_clear_error() -> None:
    result = run("analyze", "-", stdin=b"hello\n")
    assert result.exit_code == 2
    assert "error: <stdin>: cannot tell the input format" in result.stderr


# -- filters --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "shown"),
    [
        (["--level", "clean"], ["attacked", "armed", "quiet"]),
        (["--level", "armed"], ["attacked", "armed"]),  # at the level itself: shown
        (["--level", "exfiltration"], ["attacked"]),
        (["--min-severity", "warning"], ["attacked", "armed"]),  # an alert at the severity itself: shown
        (["--min-severity", "high"], ["attacked"]),
        (["--min-severity", "critical"], ["attacked"]),
        (["--level", "exfiltration", "--min-severity", "warning"], ["attacked"]),  # both must hold
        (["--level", "partial", "--min-severity", "info"], ["attacked", "armed"]),
    ],
)
def test_filters_choose_the_sessions_shown_and_the_summary_counts_all(
    mixed_trace: Path, option: list[str], shown: list[str]
) -> None:
    document = analyze_json(mixed_trace, *option)
    assert [s["session_id"] for s in document["sessions"]] == shown
    assert document["summary"]["sessions"] == 3
    assert document["summary"]["shown"] == len(shown)
    lines = run("analyze", mixed_trace, "--format", "jsonl", *option).stdout.splitlines()
    assert [json.loads(line)["session_id"] for line in lines] == shown
    table = run("analyze", mixed_trace, *option).stdout
    assert f"{len(shown)} of 3 sessions shown" in table or len(shown) == 3
    assert "3 sessions (" in table


def test_levels_of_the_mixed_trace_are_what_the_filters_assume(mixed_trace: Path) -> None:
    document = analyze_json(mixed_trace)
    levels = {s["session_id"]: s["level"] for s in document["sessions"]}
    assert levels == {"attacked": "exfiltration", "armed": "armed", "quiet": "partial"}
    severities = {s["session_id"]: {a["severity"] for a in s["alerts"]} for s in document["sessions"]}
    assert max(severities["attacked"], key=["info", "warning", "high", "critical"].index) == "critical"
    # The armed session's tools cover all three legs (exposed, info); it rises no higher than armed (warning).
    assert severities["armed"] == {"info", "warning"} and severities["quiet"] == set()


def test_filters_do_not_change_the_exit_code(mixed_trace: Path) -> None:
    result = run("analyze", mixed_trace, "--level", "exfiltration", "--fail-on", "high")
    assert result.exit_code == 1
    result = run("analyze", mixed_trace, "--min-severity", "critical", "--level", "clean")
    assert result.exit_code == 0


# -- source ---------------------------------------------------------------------------------------------------


def test_the_same_session_in_two_formats_is_shown_twice_with_its_sources(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    result = run("analyze", "samples/sessions", "samples/mcp", "--level", "exfiltration", "--wide")
    rows = [line for line in result.stdout.splitlines() if line.endswith(" calendar-invite")]
    assert len(rows) == 2
    assert "samples/sessions/calendar-invite.jsonl" in rows[0]
    assert "samples/mcp/calendar-invite.jsonl" in rows[1]
    document = analyze_json("samples/sessions", "samples/mcp")
    assert [s["source"] for s in document["sessions"] if s["session_id"] == "calendar-invite"] == [
        "samples/sessions/calendar-invite.jsonl",
        "samples/mcp/calendar-invite.jsonl",
    ]


# -- progress -------------------------------------------------------------------------------------------------


def test_no_progress_when_standard_error_is_not_a_terminal(mixed_trace: Path) -> None:
    for quiet in ([], ["--quiet"]):
        result = run("analyze", mixed_trace, *quiet)
        assert result.exit_code == 0
        assert result.stderr == ""
    piped = subprocess.run(
        [sys.executable, "-m", "monitor", "analyze", str(mixed_trace)], capture_output=True, check=False
    )
    assert piped.returncode == 0 and piped.stderr == b""


def _stderr_on_a_terminal(*args: str | Path) -> str:
    main_fd, terminal = pty.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120"}
    env.pop("NO_COLOR", None)
    with subprocess.Popen(
        [sys.executable, "-m", "monitor", "analyze", *map(str, args)],
        stdout=subprocess.DEVNULL,
        stderr=terminal,
        env=env,
    ) as process:
        os.close(terminal)
        chunks = []
        while True:
            try:
                chunk = os.read(main_fd, 65536)
            except OSError:  # the terminal closed: the process ended
                break
            if not chunk:
                break
            chunks.append(chunk)
        process.wait()
    os.close(main_fd)
    return b"".join(chunks).decode("utf-8", "replace")


def test_progress_shows_on_a_terminal_and_quiet_silences_it(mixed_trace: Path) -> None:
    shown = _stderr_on_a_terminal(mixed_trace)
    assert "records" in shown and "sessions" in shown and "errors" in shown
    assert _stderr_on_a_terminal(mixed_trace, "--quiet") == ""


def test_progress_line_renders_the_counters_and_the_rate() -> None:
    now = [100.0]
    progress = AnalysisProgress(records=12_000, sessions=30, errors=2)
    line = ProgressLine(progress, clock=lambda: now[0])
    now[0] = 104.0
    out = io.StringIO()
    Console(file=out, force_terminal=True, width=200).print(line)
    text = out.getvalue()
    assert "12,000 records" in text and "30 sessions" in text and "3,000 records/s" in text
    assert "2 errors" in text and "0:04" in text
    assert "\x1b[" in text  # styled on a terminal


def test_show_progress_draws_on_a_terminal_console_only() -> None:
    progress = AnalysisProgress(records=5, sessions=1)
    terminal = io.StringIO()
    with show_progress(progress, quiet=False, console=Console(file=terminal, force_terminal=True)):
        pass
    assert "5 records" in terminal.getvalue()
    for console, quiet in (
        (Console(file=io.StringIO(), force_terminal=False), False),
        (Console(file=io.StringIO(), force_terminal=True), True),
    ):
        with show_progress(progress, quiet=quiet, console=console):
            pass
        assert console.file.getvalue() == ""  # type: ignore[attr-defined]


def test_no_live_display_is_started_unless_on_a_terminal_and_not_quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a live display was started")

    monkeypatch.setattr(_progress, "Live", refuse)
    progress = AnalysisProgress()
    with show_progress(progress, quiet=False, console=Console(file=io.StringIO(), force_terminal=False)):
        pass
    with show_progress(progress, quiet=True, console=Console(file=io.StringIO(), force_terminal=True)):
        pass


# -- help -----------------------------------------------------------------------------------------------------


def test_analyze_help_names_every_input_format_and_standard_input() -> None:
    text = " ".join(run("analyze", "--help").stdout.split())
    for name in INPUT_FORMATS:
        assert name in text, name
    assert "- is standard input" in text


def test_the_stdin_example_of_the_docs_runs_on_a_pipe() -> None:
    example = ROOT / "docs" / "examples" / "analyze_stdin.py"
    sample = SAMPLES / "mcp" / "calendar-invite.jsonl"
    with sample.open("rb") as source:
        cat = subprocess.Popen(["cat"], stdin=source, stdout=subprocess.PIPE)
        done = subprocess.run(
            [sys.executable, str(example), "--level", "armed"], stdin=cat.stdout, capture_output=True, check=False
        )
        cat.wait()
    assert done.returncode == 0, done.stderr
    lines = done.stdout.decode().splitlines()
    assert lines[0] == "exfiltration calendar-invite  (<stdin>)"
    assert lines[-1].endswith("1 sessions, 0 errors") and int(lines[-1].split()[0]) > 0
