"""``trifecta install|uninstall claude-code``, ``trifecta hook claude-code`` and ``trifecta sessions``."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support.claude_settings import ours_in, read_settings

from monitor.cli import main
from monitor.hosts.claude_code import HOOK_EVENTS, is_trifecta_hook
from monitor.store import HookStore, StoredDecision

EXIT_INPUT = 2


def invoke(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def the_command(path: Path) -> str:
    commands = {c for cs in ours_in(read_settings(path)).values() for c in cs}
    assert len(commands) == 1
    return commands.pop()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


# -- install / uninstall ------------------------------------------------------------------------------------


def test_install_into_a_project_then_again_then_uninstall(project: Path) -> None:
    settings = project / ".claude" / "settings.json"
    first = invoke("install", "claude-code", "--project", str(project))
    assert first.exit_code == 0, first.output
    assert f"installed in {settings}" in first.output and "settings.local.json" in first.output
    assert set(ours_in(read_settings(settings))) == set(HOOK_EVENTS)
    command = shlex.split(the_command(settings))
    assert command[:6] == [sys.executable, "-P", "-m", "monitor", "hook", "claude-code"]

    again = invoke("install", "claude-code", "--project", str(project))
    assert again.exit_code == 0 and "nothing to do" in again.output
    assert sorted(p.name for p in settings.parent.iterdir()) == ["settings.json"]

    removed = invoke("uninstall", "claude-code", "--project", str(project))
    assert removed.exit_code == 0 and f"Removed {len(HOOK_EVENTS)} trifecta hook entries" in removed.output
    assert read_settings(settings) == {}
    assert "saved in" in removed.output and len(list(settings.parent.glob("*.bak"))) == 1

    nothing = invoke("uninstall", "claude-code", "--project", str(project))
    assert nothing.exit_code == 0 and "has no trifecta hook: nothing to do" in nothing.output


def test_install_passes_the_hook_options_with_absolute_paths(project: Path, tmp_path: Path) -> None:
    rules = tmp_path / "my rules"
    rules.mkdir()
    done = invoke(
        "install",
        "claude-code",
        "--project",
        str(project),
        "--local",
        "--state-dir",
        str(tmp_path / "state"),
        "--rules",
        str(rules),
        "--no-builtin-rules",
        "--posture",
        "strict",
        "--on-allow",
        "allow",
        "--timeout",
        "55",
    )
    assert done.exit_code == 0, done.output
    settings = project / ".claude" / "settings.local.json"
    assert not (project / ".claude" / "settings.json").exists() and "settings.local.json instead" not in done.output
    assert shlex.split(the_command(settings))[6:] == [
        "--state-dir",
        str(tmp_path / "state"),
        "--rules",
        str(rules),
        "--no-builtin-rules",
        "--posture",
        "strict",
        "--on-allow",
        "allow",
        "--timeout",
        "55",
    ]
    # Claude Code's own limit stays above the hook's, so that the hook answers before it is stopped.
    timeouts = {
        h["timeout"] for groups in read_settings(settings)["hooks"].values() for g in groups for h in g["hooks"]
    }
    assert timeouts == {65}


def test_install_and_uninstall_leave_commands_that_only_mention_the_hook(project: Path) -> None:
    """Only the exact command ``install`` writes is the monitor's: a user's audit hook that echoes the text, or a
    ``tee … | trifecta hook`` wrapper, is neither replaced nor removed."""
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    audit = {"type": "command", "command": "echo 'monitor hook claude-code ran' >> ~/audit.log"}
    wrapper = {"type": "command", "command": "tee -a /tmp/events.log | trifecta hook claude-code --posture strict"}
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [audit, wrapper]}]}}))
    assert invoke("install", "claude-code", "--project", str(project)).exit_code == 0
    kept = read_settings(settings)["hooks"]["PreToolUse"]
    assert {"matcher": "*", "hooks": [audit, wrapper]} in kept and len(kept) == 2
    assert invoke("uninstall", "claude-code", "--project", str(project)).exit_code == 0
    assert read_settings(settings) == {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [audit, wrapper]}]}}
    assert not is_trifecta_hook(audit) and not is_trifecta_hook(wrapper)


def test_install_warns_when_hooks_are_disabled_or_installed_at_another_level(project: Path, tmp_path: Path) -> None:
    """``disableAllHooks`` in a settings file Claude Code reads turns monitoring off: ``install`` says so. A hook
    installed at another level too would check each event twice: ``install`` says that as well."""
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}
    assert invoke("install", "claude-code", env=env).exit_code == 0  # the user's settings
    local = project / ".claude" / "settings.local.json"
    local.parent.mkdir()
    local.write_text(json.dumps({"disableAllHooks": True}))
    done = invoke("install", "claude-code", "--project", str(project), env=env)
    assert done.exit_code == 0
    assert f"warning: {local} sets disableAllHooks: true" in done.output
    assert f"warning: {tmp_path / 'claude' / 'settings.json'} runs the trifecta hook too" in done.output
    # Without either, no warning.
    local.unlink()
    assert invoke("uninstall", "claude-code", "--user", env=env).exit_code == 0
    again = invoke("install", "claude-code", "--project", str(project), env=env)
    assert "warning" not in again.output


def test_the_users_settings_are_the_default(tmp_path: Path) -> None:
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}
    done = invoke("install", "claude-code", env=env)
    assert done.exit_code == 0, done.output
    assert set(ours_in(read_settings(tmp_path / "claude" / "settings.json"))) == set(HOOK_EVENTS)
    assert invoke("uninstall", "claude-code", "--user", env=env).exit_code == 0
    assert read_settings(tmp_path / "claude" / "settings.json") == {}


def test_a_dry_run_prints_the_diff_and_writes_nothing(project: Path) -> None:
    done = invoke("install", "claude-code", "--project", str(project), "--dry-run")
    assert done.exit_code == 0
    assert done.output.startswith(f"--- /dev/null\n+++ {project / '.claude' / 'settings.json'}\n")
    assert '+    "PreToolUse": [' in done.output.splitlines()
    assert "dry run" in done.output and not (project / ".claude").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--project", ".", "--user"], "--project DIR or --user, not both"), (["--user", "--local"], "--local is for")],
)
def test_conflicting_scopes_are_a_usage_error(args: list[str], message: str, tmp_path: Path) -> None:
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}
    for command in ["install", "uninstall"]:
        done = invoke(command, "claude-code", *args, env=env)
        assert done.exit_code == EXIT_INPUT and message in done.output
    assert not (tmp_path / "claude").exists()


def test_a_broken_settings_file_exits_2_naming_file_and_line(project: Path) -> None:
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    text = '{\n  "model": "opus",\n  // my comment\n  "hooks": {}\n}\n'
    settings.write_text(text, encoding="utf-8")
    for command in ["install", "uninstall"]:
        done = CliRunner().invoke(main, [command, "claude-code", "--project", str(project)])
        assert done.exit_code == EXIT_INPUT
        assert f"error: {settings}:3: a comment" in done.output
        assert settings.read_text(encoding="utf-8") == text
    assert sorted(p.name for p in settings.parent.iterdir()) == ["settings.json"]


# -- hook ---------------------------------------------------------------------------------------------------


def test_the_hook_command_forwards_its_arguments_untouched(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []
    monkeypatch.setattr("monitor.cli._claude.run_hook", seen.append)
    args = ["--posture", "strict", "--rules", "/r", "--no-builtin-rules", "--unknown", "x", "--help"]
    assert invoke("hook", "claude-code", *args).exit_code == 0
    assert seen == [args]


def test_help_lists_the_commands() -> None:
    top = invoke("--help").output
    for name in ["hook", "install", "uninstall", "sessions"]:
        assert f"  {name} " in top
    assert "claude-code" in invoke("hook", "--help").output
    assert "claude-code" in invoke("install", "--help").output


# -- sessions -----------------------------------------------------------------------------------------------


def make_store(state: Path) -> None:
    payload = json.dumps({"session_id": "a", "cwd": "/home/me/src/site", "hook_event_name": "PreToolUse"})
    with HookStore(state / "hooks.sqlite3") as store:
        store.append("a", "SessionStart", json.dumps({"cwd": "/home/me/src/site"}), received=1_780_000_000.0)
        decision = StoredDecision(0, "a", "c1", "WebFetch", "confirm", "armed", ("exposed",), "asks")
        store.append("a", "PreToolUse", payload, received=1_780_000_060.0, decision=decision)
        store.append("b", "SessionStart", "{}", received=1_780_000_030.0)
        store.append("b", "SessionEnd", "{}", received=1_780_000_031.0)


def test_sessions_lists_the_stored_sessions_as_json_and_as_a_table(tmp_path: Path) -> None:
    make_store(tmp_path)
    done = invoke("sessions", "--state-dir", str(tmp_path), "--format", "json")
    assert done.exit_code == 0, done.output
    assert json.loads(done.output) == [
        {
            "session_id": "a",
            "first_seen": "2026-05-28T20:26:40Z",
            "last_seen": "2026-05-28T20:27:40Z",
            "events": 2,
            "calls": 1,
            "level": "armed",
            "worst_action": "confirm",
            "ended": False,
            "cwd": "/home/me/src/site",
        },
        {
            "session_id": "b",
            "first_seen": "2026-05-28T20:27:10Z",
            "last_seen": "2026-05-28T20:27:11Z",
            "events": 2,
            "calls": 0,
            "level": "",
            "worst_action": "",
            "ended": True,
            "cwd": None,
        },
    ]
    table = invoke("sessions", "--state-dir", str(tmp_path)).output.splitlines()
    assert table[0].split() == ["session", "events", "calls", "level", "worst", "action", "last", "seen", "cwd"]
    assert table[2].split() == ["a", "2", "1", "armed", "confirm", "2026-05-28T20:27:40Z", "/home/me/src/site"]
    assert table[3].split() == ["b", "2", "0", "-", "-", "2026-05-28T20:27:11Z", "(ended)"]
    assert table[-1] == "2 sessions"


def test_sessions_without_a_store_is_empty_and_a_broken_store_exits_2(tmp_path: Path) -> None:
    done = CliRunner().invoke(main, ["sessions", "--state-dir", str(tmp_path), "--format", "json"])
    assert done.exit_code == 0 and json.loads(done.stdout) == []
    assert "does not exist" in done.stderr
    (tmp_path / "hooks.sqlite3").write_text("not a database\n")
    broken = CliRunner().invoke(main, ["sessions", "--state-dir", str(tmp_path)])
    assert broken.exit_code == EXIT_INPUT and f"error: {tmp_path / 'hooks.sqlite3'}" in broken.stderr


# -- the real thing: install, then let the installed command answer hook events ------------------------------


def run(args: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=120, check=False, **kwargs)


def hook_payload(event: str, project: Path, **fields: Any) -> str:
    base = {"session_id": "e2e-1", "transcript_path": str(project / "t.jsonl"), "cwd": str(project)}
    return json.dumps({**base, "hook_event_name": event, **fields})


@pytest.fixture
def installed(project: Path, tmp_path: Path) -> Iterator[str]:
    """The hook command ``python -m monitor install claude-code`` wrote into the project's settings; the
    engine it starts is stopped afterwards."""
    state = str(tmp_path / "state")
    done = run(
        [sys.executable, "-m", "monitor", "install", "claude-code", "--project", str(project), "--state-dir", state],
        env={k: v for k, v in os.environ.items() if k != "TRIFECTA_STATE_DIR"},
    )
    assert done.returncode == 0, done.stderr
    command = the_command(project / ".claude" / "settings.json")
    yield command
    run(["/bin/sh", "-c", command + " --stop"], cwd=project, stdin=subprocess.DEVNULL)


def test_the_installed_command_answers_claude_code_events(installed: str, project: Path, tmp_path: Path) -> None:
    # A project of its own called "monitor" must not stand in for the package (the command runs in the project).
    (project / "monitor").mkdir()
    (project / "monitor" / "__init__.py").write_text("")
    (project / "monitor" / "__main__.py").write_text("print('not the hook')\n")
    answers = []
    for payload in [
        hook_payload("SessionStart", project, source="startup"),
        hook_payload("UserPromptSubmit", project, prompt="List the files here."),
        hook_payload("PreToolUse", project, tool_name="Bash", tool_input={"command": "ls"}, tool_use_id="toolu_1"),
        hook_payload(
            "PostToolUseFailure",
            project,
            tool_name="Bash",
            tool_input={"command": "ls"},
            tool_use_id="toolu_1",
            error="1",
        ),
        hook_payload("SessionEnd", project, reason="prompt_input_exit"),
    ]:
        done = run(["/bin/sh", "-c", installed], cwd=project, input=payload)
        assert done.returncode == 0, done.stderr
        answers.append(json.loads(done.stdout))
    assert all(isinstance(answer, dict) for answer in answers)
    decision = answers[2].get("hookSpecificOutput", {}).get("permissionDecision", "pass")
    assert decision in {"pass", "allow", "ask", "deny"}
    listed = run(
        [sys.executable, "-m", "monitor", "sessions", "--state-dir", str(tmp_path / "state"), "--format", "json"]
    )
    assert listed.returncode == 0, listed.stderr
    sessions = json.loads(listed.stdout)
    assert [(s["session_id"], s["events"], s["calls"], s["ended"], s["cwd"]) for s in sessions] == [
        ("e2e-1", 5, 1, True, str(project))
    ]
