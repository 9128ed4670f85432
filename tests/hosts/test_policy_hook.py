"""The Claude Code hook under ``--policy reviewed-only``, run as Claude Code runs it (one process per event):
a ``review`` decision is answered ``ask`` with its reason, and stored as ``confirm``. Payloads are the
``PreToolUse`` input of Claude Code's hooks reference (``session_id``, ``hook_event_name``, ``tool_name``,
``tool_input``, ``tool_use_id``)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any


def run_hook(state_dir: Path, payload: dict[str, Any], *options: str) -> dict[str, Any]:
    env = dict(os.environ)
    env.pop("TRIFECTA_STATE_DIR", None)
    done = subprocess.run(
        [sys.executable, "-m", "monitor", "hook", "claude-code", "--state-dir", str(state_dir), *options],
        input=json.dumps(payload).encode(),
        capture_output=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def pre_tool_use(session: str, tool: str, tool_input: dict[str, Any], use_id: str) -> dict[str, Any]:
    return {
        "session_id": session,
        "transcript_path": f"/home/u/.claude/projects/p/{session}.jsonl",
        "cwd": "/home/u/p",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": use_id,
    }


def test_review_is_answered_ask_with_its_reason_and_stored_as_confirm(state_dir: Path) -> None:
    payload = pre_tool_use("policy-1", "mcp__notes__lookup", {"q": "milk"}, "toolu_01")
    assert run_hook(state_dir, payload) == {}  # the default policy: nothing to say about a call that cannot send
    answer = run_hook(state_dir, {**payload, "session_id": "policy-2"}, "--policy", "reviewed-only")
    output = answer["hookSpecificOutput"]
    assert output["permissionDecision"] == "ask"
    assert "no reviewed record" in output["permissionDecisionReason"]
    conn = sqlite3.connect((state_dir / "hooks.sqlite3").as_uri() + "?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT action, reasons FROM decisions WHERE session_id = 'policy-2'").fetchall()
    finally:
        conn.close()
    assert [(action, "tool-unreviewed" in reasons) for action, reasons in rows] == [("confirm", True)]


def test_a_bad_policy_asks_and_says_why(state_dir: Path) -> None:
    payload = pre_tool_use("policy-3", "Read", {"file_path": "/home/u/p/README.md"}, "toolu_02")
    answer = run_hook(state_dir, payload, "--policy", "lenient")
    assert answer["hookSpecificOutput"]["permissionDecision"] == "ask"
    assert "--policy must be one of default, reviewed-only" in answer["hookSpecificOutput"]["permissionDecisionReason"]


def test_install_writes_the_policy_into_the_hook_command_claude_code_runs(tmp_path: Path, state_dir: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    install = [sys.executable, "-m", "monitor", "install", "claude-code", "--project", str(project)]
    install += ["--state-dir", str(state_dir), "--policy", "reviewed-only"]
    done = subprocess.run(install, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    (entry,) = settings["hooks"]["PreToolUse"]
    command = entry["hooks"][0]["command"]
    assert "--policy reviewed-only" in command
    payload = pre_tool_use("policy-4", "mcp__notes__lookup", {"q": "milk"}, "toolu_03")
    env = {k: v for k, v in os.environ.items() if k != "TRIFECTA_STATE_DIR"}
    ran = subprocess.run(
        command, shell=True, input=json.dumps(payload), capture_output=True, text=True, timeout=60, env=env
    )
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["hookSpecificOutput"]["permissionDecision"] == "ask"


def test_a_call_outside_the_scope_file_is_denied_by_the_hook_and_install_passes_the_scope_on(
    tmp_path: Path, state_dir: Path
) -> None:
    """docs/policy.md, "Scope": the hook takes ``--scope FILE``; Claude Code's built-in tools are reported under
    the server ``claude-code``, MCP tools under their ``mcp__<server>__`` server."""
    scope = tmp_path / "scope.yaml"
    scope.write_text("servers: [claude-code, notes]\n")
    inside = pre_tool_use("scope-1", "Read", {"file_path": "/home/u/p/README.md"}, "toolu_10")
    options = ("--policy", "reviewed-only", "--scope", str(scope))
    assert run_hook(state_dir, inside, *options) == {}  # a reviewed read inside the scope
    outside = pre_tool_use("scope-1", "mcp__github__list_issues", {"repo": "acme/site"}, "toolu_11")
    output = run_hook(state_dir, outside, *options)["hookSpecificOutput"]
    assert output["permissionDecision"] == "deny"
    assert "github" in output["permissionDecisionReason"]
    # A scope file that cannot be read is named, with its line, and the call is asked about.
    bad = tmp_path / "bad.yaml"
    bad.write_text("servers: [notes]\ncolour: red\n")
    answer = run_hook(state_dir, {**inside, "session_id": "scope-2"}, "--policy", "reviewed-only", "--scope", str(bad))
    assert answer["hookSpecificOutput"]["permissionDecision"] == "ask"
    assert f"{bad}:2" in answer["hookSpecificOutput"]["permissionDecisionReason"]
    project = tmp_path / "project"
    project.mkdir()
    install = [sys.executable, "-m", "monitor", "install", "claude-code", "--project", str(project)]
    install += ["--state-dir", str(state_dir), *options]
    done = subprocess.run(install, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    command = json.loads((project / ".claude" / "settings.json").read_text())["hooks"]["PreToolUse"][0]["hooks"][0]
    assert f"--scope {scope}" in command["command"]


def test_install_refuses_a_scope_it_cannot_read_or_without_the_policy(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("servers: [notes]\ntools: 7\n")
    good = tmp_path / "scope.yaml"
    good.write_text("servers: [notes]\n")
    install = [sys.executable, "-m", "monitor", "install", "claude-code", "--project", str(tmp_path), "--dry-run"]
    refused = subprocess.run(
        [*install, "--policy", "reviewed-only", "--scope", str(bad)], capture_output=True, text=True
    )
    assert refused.returncode == 2 and f"{bad}:2: tools" in refused.stderr
    alone = subprocess.run([*install, "--scope", str(good)], capture_output=True, text=True, check=False)
    assert alone.returncode == 2 and "--policy reviewed-only" in alone.stderr
    assert not (tmp_path / ".claude").exists()


def test_the_hook_refuses_a_scope_without_the_policy(tmp_path: Path, state_dir: Path) -> None:
    scope = tmp_path / "scope.yaml"
    scope.write_text("servers: [notes]\n")
    payload = pre_tool_use("scope-3", "Read", {"file_path": "/home/u/p/README.md"}, "toolu_20")
    output = run_hook(state_dir, payload, "--scope", str(scope))["hookSpecificOutput"]
    assert output["permissionDecision"] == "ask"
    assert "--scope applies with --policy reviewed-only" in output["permissionDecisionReason"]
