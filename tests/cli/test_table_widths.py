"""Every command that prints a table fits it to the width rich reads (``COLUMNS`` here, as a terminal's would be):
no line is longer, no cell is cut (what wraps reads whole again down its column), and output that is no terminal
carries no colour. ``--wide`` fits nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from support.agentdojo_labels import ATTACKER, LABELS

from monitor.cli import main
from monitor.clients import MONITOR_ASKS
from monitor.store import HookStore, StoredDecision

ROOT = Path(__file__).resolve().parents[2]
WIDTHS = (80, 120, 200)
# Variables that make rich colour output that is no terminal: unset, as on a user's pipe.
_PLAIN = dict.fromkeys(("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS", "LINES"))
_ANSI = re.compile(r"\x1b\[")

LONG_SESSION = "b7f3c2e1-session-with-a-rather-long-identifier-0123456789abcdef"


def run_cli(args: list[str], columns: int | None) -> Result:
    """Run ``trifecta ARGS`` with ``COLUMNS`` set (None: unset), its output no terminal."""
    env = dict(_PLAIN)
    if columns is not None:
        env["COLUMNS"] = str(columns)
    result = CliRunner().invoke(main, args, env=env, catch_exceptions=False)
    assert result.exit_code in (0, 1), f"trifecta {' '.join(args)} exited {result.exit_code}:\n{result.output}"
    return result


def reads_whole(lines: list[str], value: str) -> bool:
    """Whether ``value`` is on one line, or wrapped down one column: its pieces start at one offset on consecutive
    lines, each piece ending at its cell's edge (a piece may end where the value had a space); or, in text that is
    no table, folded at the end of a line and read again by joining the lines."""
    if value in "".join(lines):
        return True
    return any(
        _follows(lines, i, offset, value)
        for i, line in enumerate(lines)
        for offset in range(len(line))
        if line[offset] == value[0] and (offset == 0 or line[offset - 1] == " ")
    )


def _follows(lines: list[str], i: int, offset: int, rest: str) -> bool:
    while rest:
        if i >= len(lines):
            return False
        cell = lines[i][offset:]
        n = 0
        while n < min(len(cell), len(rest)) and cell[n] == rest[n]:
            n += 1
        if n == 0 or (n < len(rest) and n < len(cell) and cell[n] != " "):
            return False
        rest, i = rest[n:].lstrip(" "), i + 1
    return True


def assert_fits(output: str, width: int, values: list[str]) -> None:
    lines = output.splitlines()
    too_long = [line for line in lines if len(line) > width]
    assert not too_long, f"{len(too_long)} lines longer than {width}, e.g. {too_long[0]!r}"
    lost = [value for value in values if not reads_whole(lines, value)]
    assert not lost, f"cut at {width} columns: {lost}"
    assert not _ANSI.search(output)


def test_reads_whole_follows_a_value_down_its_column_only() -> None:
    lines = ["a   send_gm   x", "    ail_me", "    ssage"]
    assert reads_whole(lines, "send_gmail_message")
    assert not reads_whole(lines, "send_gmail_messages")
    assert not reads_whole(["abc_def", "ghi"], "abc_ghi")
    assert reads_whole(["  m/workspace/injec", "tion_task_0  [exfiltration]"], "m/workspace/injection_task_0")
    assert reads_whole(["x   Gemini   y", "    CLI (plan", "    mode)"], "Gemini CLI (plan mode)")
    assert not reads_whole(["send_gm…   x"], "send_gmail")


# -- the commands ---------------------------------------------------------------------------------------------


ANALYZE_VALUES = [
    "calendar-benign",
    "calendar-invite",
    "github-public-issue",
    "supabase-ticket",
    "send_gmail_message",
    "create_pull_request",
    "exfiltration",
]
LINT_VALUES = [
    "samples/mcp/calendar-invite.jsonl:5",
    "search_gmail_messages",
    "hint-missing",
    "/message/result/tools/1/annotations/readOnlyHint",
    "destructiveHint is missing; clients assume true",
]
CLIENT_VALUES = ["search_gmail_messages", "Gemini CLI (plan mode)", "Goose (smart approve)", MONITOR_ASKS, "block"]


@pytest.fixture(scope="module")
def agentdojo_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A benign run and an attack the monitor misses (nothing untrusted was read before the send)."""
    root = tmp_path_factory.mktemp("agentdojo")
    send = {"function": "send_email", "args": {"recipients": [ATTACKER], "body": "code"}, "id": "call_0"}
    read = {"function": "search_emails", "args": {"query": "x"}, "id": "call_0"}
    runs = {
        "m/workspace/user_task_0/none/none.json": [(read, "- body: hi\n  id: 1\n")],
        "m/workspace/user_task_0/important_instructions/injection_task_0.json": [(send, "sent")],
    }
    for name, calls in runs.items():
        messages: list[dict[str, Any]] = [{"role": "user", "content": "Summarise my inbox"}]
        for call, result in calls:
            messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
            messages.append(
                {"role": "tool", "content": result, "tool_call_id": call["id"], "tool_call": call, "error": None}
            )
        injected = "injection_task_0" in name
        document = {
            "suite_name": "workspace",
            "pipeline_name": "m",
            "user_task_id": "user_task_0",
            "injection_task_id": "injection_task_0" if injected else None,
            "attack_type": "important_instructions" if injected else None,
            "injections": {},
            "messages": messages,
            "error": None,
            "utility": True,
            "security": injected,
            "duration": 1.0,
        }
        path = root / "runs" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(document), encoding="utf-8")
    (root / "labels.json").write_text(json.dumps(LABELS), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def state_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A hook store with a session of a long id in a deep folder."""
    state = tmp_path_factory.mktemp("state")
    payload = json.dumps({"session_id": LONG_SESSION, "cwd": "/home/me/src/a/deep/project/folder/of/some/length"})
    with HookStore(state / "hooks.sqlite3") as store:
        store.append(LONG_SESSION, "SessionStart", payload, received=1_780_000_000.0)
        decision = StoredDecision(0, LONG_SESSION, "c1", "WebFetch", "allow", "trifecta", ("exposed",), "sent")
        store.append(LONG_SESSION, "PreToolUse", payload, received=1_780_000_060.0, decision=decision)
        stopped = StoredDecision(0, "stopped", "c1", "WebFetch", "deny", "trifecta", ("exposed",), "blocked")
        store.append("stopped", "PreToolUse", "{}", received=1_780_000_090.0, decision=stopped)
    return state


def _commands(agentdojo: Path, state: Path) -> dict[str, tuple[list[str], list[str]]]:
    """Each table command's arguments and the values its table must show whole or wrapped."""
    return {
        "analyze": (["analyze", str(ROOT / "samples" / "sessions"), "-q", "-j", "1"], ANALYZE_VALUES),
        "lint": (["lint", "samples/mcp"], LINT_VALUES),
        "clients": (["clients", "samples/mcp/calendar-invite.jsonl"], CLIENT_VALUES),
        "eval agentdojo": (
            [
                "eval",
                "agentdojo",
                str(agentdojo / "runs"),
                "--labels",
                str(agentdojo / "labels.json"),
                "--leave-one-suite-out",
            ],
            [
                "m/workspace/user_task_0/important_instructions/injection_task_0",
                "[exfiltration]",
                "trifecta-monitor",
            ],
        ),
        "eval scenarios": (
            ["eval", "scenarios", "tests/scenarios/mail"],
            ["mail-handed-over-request-forward-to-person-it-names", "legitimate", "pass"],
        ),
        "sessions": (
            ["sessions", "--state-dir", str(state)],
            [LONG_SESSION, "/home/me/src/a/deep/project/folder/of/some/length", "trifecta", "allow"],
        ),
    }


COMMANDS = ["analyze", "lint", "clients", "eval agentdojo", "eval scenarios", "sessions"]


@pytest.fixture
def in_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("command", COMMANDS)
def test_each_table_fits_the_width_and_keeps_every_value(
    command: str, width: int, agentdojo_runs: Path, state_dir: Path, in_root: None
) -> None:
    args, values = _commands(agentdojo_runs, state_dir)[command]
    output = run_cli(args, width).output
    assert_fits(output, width, values)
    if command != "analyze":  # only analyze shortens (call ids and paths, with a visible "…"): nothing else is cut
        assert "…" not in output


@pytest.mark.parametrize("command", COMMANDS)
def test_wide_fits_nothing_and_output_that_is_no_terminal_is_not_fitted(
    command: str, agentdojo_runs: Path, state_dir: Path, in_root: None
) -> None:
    args, values = _commands(agentdojo_runs, state_dir)[command]
    wide = run_cli([*args, "--wide"], 80).output
    plain = run_cli(args, None).output
    for output in (wide, plain):
        assert not _ANSI.search(output)
        assert all(any(value in line for line in output.splitlines()) for value in values)  # each on one line
    assert max(map(len, wide.splitlines())) > 80
    assert wide == run_cli([*args, "--wide"], None).output  # COLUMNS is not read with --wide


def test_the_help_of_each_table_command_offers_wide() -> None:
    for command in [["analyze"], ["lint"], ["clients"], ["eval", "agentdojo"], ["eval", "scenarios"], ["sessions"]]:
        text = " ".join(CliRunner().invoke(main, [*command, "--help"]).output.split())
        assert "--wide" in text and "not fitted to the terminal's width" in text, command


def test_sessions_colour_a_trifecta_nothing_was_asked_in_apart_from_a_stopped_one(state_dir: Path) -> None:
    env = {**_PLAIN, "FORCE_COLOR": "1", "COLUMNS": "200"}
    output = CliRunner().invoke(main, ["sessions", "--state-dir", str(state_dir)], env=env).output
    rows = [line for line in output.splitlines() if "trifecta" in line]
    assert len(rows) == 2
    allowed = next(line for line in rows if LONG_SESSION in line)
    stopped = next(line for line in rows if "stopped" in line)
    assert "\x1b[33mtrifecta" in allowed  # yellow: every call was allowed
    assert "\x1b[1;31mtrifecta" in stopped  # bold red: the monitor stopped a call


def test_clients_too_wide_for_the_terminal_splits_rather_than_folding_words(in_root: None) -> None:
    """At 80 columns the twelve columns do not fit whole: the rows come in three tables (hints and legs, the clients,
    the monitor), each naming the tool, and no header, tool name or action is folded inside a word."""
    lines = run_cli(["clients", "samples/mcp/calendar-invite.jsonl"], 80).output.splitlines()
    headers = [line.split() for line in lines if line.startswith("tool ")]
    assert [h[1] for h in headers] == ["readOnly", "Copilot", "with"]  # a header's last line names the tool
    words = {word for line in lines for word in line.split()}
    assert {"readOnly", "destr.", "idemp.", "openWorld", "Copilot", "search_gmail_messages", "destination"} <= words
    assert sum(line.startswith("search_gmail_messages ") for line in lines) == 3
