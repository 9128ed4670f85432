"""``trifecta analyze --policy reviewed-only [--scope FILE]`` run as a separate process on a native JSONL trace
(the native event shapes: ``tools_listed`` with MCP 2025-06-18 ``tools/list`` entries, ``tool_call``,
``tool_result`` with ``is_error``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

RULE_FILE = """\
id: 0e1f3a52-7a63-4b7e-8d5f-2b9c4e6a7d10
title: Tasks server
status: test
author: tests
date: 2026-12-01
server: tasks
tools:
  - match: list_tasks
    legs: [private_data]
    read_only: true
    reason: Lists the user's tasks.
  - match: add_task
    legs: []
    read_only: false
    reason: Adds a task.
  - match: set_flag
    legs: []
    read_only: false
    retry: safe
    reason: Sets a flag; doing it twice is doing it once.
"""
TOOLS = [
    {"name": "list_tasks", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}},
    {"name": "add_task", "inputSchema": {"type": "object"}},
    {"name": "set_flag", "inputSchema": {"type": "object"}},
    {"name": "peek", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}},
]
FAILED = {"content": [{"type": "text", "text": "timeout"}], "isError": True}
OK = {"content": [{"type": "text", "text": "ok"}]}


def event(kind: str, **fields: Any) -> dict[str, Any]:
    return {"kind": kind, "session_id": "s1", "time": "2026-12-01T10:00:00Z", **fields}


def call(call_id: str, tool: str, arguments: dict[str, Any], server: str = "tasks") -> dict[str, Any]:
    return event("tool_call", call_id=call_id, server=server, tool=tool, arguments=arguments)


def result(call_id: str, value: dict[str, Any], is_error: bool = False) -> dict[str, Any]:
    return event("tool_result", call_id=call_id, result=value, is_error=is_error)


TRACE = [
    event("tools_listed", server="tasks", tools=TOOLS),
    call("read", "list_tasks", {"list": "home"}),
    result("read", OK),
    call("peek", "peek", {"id": 1}),
    result("peek", OK),
    call("write", "add_task", {"title": "pay rent"}),
    result("write", FAILED, is_error=True),
    call("retry", "add_task", {"title": "pay rent"}),
    call("flag", "set_flag", {"on": True}),
    result("flag", FAILED, is_error=True),
    call("flag-again", "set_flag", {"on": True}),
    call("elsewhere", "send", {"to": "x@y.example"}, server="mail"),
]


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "tasks.yaml").write_text(RULE_FILE)
    (tmp_path / "trace.jsonl").write_text("".join(json.dumps(e) + "\n" for e in TRACE))
    (tmp_path / "scope.yaml").write_text("servers: [tasks]\n")
    return tmp_path


def analyze(folder: Path, *options: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "monitor", "analyze", str(folder / "trace.jsonl"), "--input-format", "jsonl"]
    command += ["--rules", str(folder / "rules"), "--no-builtin-rules", "--jobs", "1", "-q", *options]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def decisions(done: subprocess.CompletedProcess[str]) -> dict[str, tuple[str, list[str]]]:
    assert done.returncode == 0, done.stderr
    (session,) = json.loads(done.stdout)["sessions"]
    return {c["call_id"]: (c["decision"]["action"], c["decision"]["reasons"]) for c in session["calls"]}


def test_each_rule_of_the_policy_through_the_cli(files: Path) -> None:
    got = decisions(
        analyze(files, "--format", "json", "--policy", "reviewed-only", "--scope", str(files / "scope.yaml"))
    )
    assert got["read"][0] == "allow"  # a reviewed read
    assert got["peek"][0] == "review" and "tool-unreviewed" in got["peek"][1]  # claims read-only, unreviewed
    assert got["write"][0] == "confirm" and "approval-required" in got["write"][1]  # a write, no approval
    assert got["retry"][0] == "confirm" and "reconcile" in got["retry"][1]  # the earlier attempt failed
    assert "reconcile" not in got["flag-again"][1]  # a declared retry contract
    assert got["elsewhere"][0] == "deny" and "out-of-scope" in got["elsewhere"][1]


def test_the_default_policy_is_untouched_by_the_option(files: Path) -> None:
    plain = analyze(files, "--format", "jsonl")
    explicit = analyze(files, "--format", "jsonl", "--policy", "default")
    assert plain.returncode == explicit.returncode == 0 and plain.stdout == explicit.stdout
    assert not {"review", "tool-unreviewed", "approval-required", "reconcile"} & set(
        plain.stdout.replace('"', " ").split()
    )


def test_the_table_counts_review_as_asked(files: Path) -> None:
    done = analyze(files, "--policy", "reviewed-only")
    assert done.returncode == 0, done.stderr
    assert "review 2" in done.stdout  # peek, and the unreviewed send on the mail server


def test_a_bad_scope_file_is_a_usage_error_naming_file_and_line(files: Path) -> None:
    (files / "bad.yaml").write_text("servers: [tasks]\ntools: 7\n")
    done = analyze(files, "--policy", "reviewed-only", "--scope", str(files / "bad.yaml"))
    assert done.returncode == 2 and f"{files / 'bad.yaml'}:2: tools" in done.stderr
    alone = analyze(files, "--scope", str(files / "scope.yaml"))
    assert alone.returncode == 2 and "--policy reviewed-only" in alone.stderr
