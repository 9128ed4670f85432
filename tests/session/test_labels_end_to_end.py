"""Server-sent labels end to end: ``trifecta analyze`` on an MCP JSON-RPC log whose results carry labels (a real
subprocess), and a real MCP server over stdio (the ``mcp`` SDK) whose results carry ``_meta`` labels, driven
through the project's :class:`~monitor.hosts.mcp.GuardedClientSession`.

Shapes: the GitHub MCP server's ``_meta.ifc`` labels (github/github-mcp-server ``pkg/ifc/ifc.go``) and the
trust-annotations extension's ``sensitive``/``untrusted`` booleans (experimental draft of 2026-06-10,
``trust-annotations.mdx``); the log format is the one of ``samples/mcp/*.jsonl``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult

from monitor import Action, Leg, Reason, SessionMonitor
from monitor.errors import ConfirmationRequired
from monitor.hosts.mcp import GuardedClientSession

DATA = Path(__file__).resolve().parents[1] / "data" / "labels"
LOG = DATA / "github-ifc-labels.jsonl"
SERVER = DATA / "github_labelled_server.py"
TRUST = (
    "id: 1f0c2b7e-3a4d-4b8e-9c1f-5e6d7a8b9c0d\ntitle: the GitHub server is trusted\nstatus: test\nauthor: tests\n"
    "date: 2026-12-01\nserver: github\ntrust: trusted\n"
)


def _strip_labels(value: Any) -> Any:
    """The same JSON with every ``_meta`` of a result (and of its content blocks) removed."""
    if isinstance(value, dict):
        return {k: _strip_labels(v) for k, v in value.items() if k != "_meta"}
    if isinstance(value, list):
        return [_strip_labels(v) for v in value]
    return value


def _analyze(log: Path, rules: Path) -> dict[str, Any]:
    """Run ``trifecta analyze`` on the log, with the trust-only rule file and no built-in packs."""
    options = ["--no-builtin-rules", "--rules", str(rules), "--format", "jsonl"]
    done = subprocess.run(
        [sys.executable, "-m", "monitor", "analyze", str(log), *options],
        capture_output=True,
        text=True,
        check=True,
    )
    (session,) = [json.loads(line) for line in done.stdout.splitlines()]
    return {call["tool"]: call for call in session["calls"]}


def test_analyze_reads_the_labels_of_a_logged_session(tmp_path: Path) -> None:
    """A trusted server's labelled log: the pull request publishing the private file is confirmed; the same log
    with the labels stripped (the reads say they are closed-world) is allowed."""
    (tmp_path / "trust.yaml").write_text(TRUST)
    calls = _analyze(LOG, tmp_path)
    pr = calls["create_pull_request"]["decision"]
    assert pr["action"] == "confirm"
    assert "private-to-shared-place" in pr["reasons"]
    assert calls["list_issues"]["provenance"]["untrusted_content"]["rule"].startswith("_meta.")
    # A malformed label counts against its call.
    assert "untrusted_content" in calls["search_issues"]["legs"]
    stripped = tmp_path / "logs" / "github-ifc-labels.jsonl"
    stripped.parent.mkdir()
    lines = [json.loads(line) for line in LOG.read_text().splitlines()]
    stripped.write_text("".join(json.dumps(_strip_labels(line)) + "\n" for line in lines))
    assert _analyze(stripped, tmp_path)["create_pull_request"]["decision"]["action"] == "allow"


def _params(log: Path, labels: bool) -> StdioServerParameters:
    env = {**os.environ, "CALL_LOG": str(log), "LABELS": "1" if labels else "0"}
    return StdioServerParameters(command=sys.executable, args=[str(SERVER)], env=env)


async def _incident(log: Path, labels: bool, trusted: bool) -> tuple[list[Any], Any]:
    """list_issues on the public repository, get_file_contents on the private one, then the pull request."""
    monitor = SessionMonitor(rules="none")
    results: list[Any] = []
    with open(os.devnull, "w") as errlog:
        async with (
            stdio_client(_params(log, labels), errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            guard = GuardedClientSession(session, monitor, session_key="k", server="github", trusted=trusted)
            await guard.initialize()
            await guard.list_tools()
            monitor.observe_user_message("k", "Look at the open issues in acme/public-site and help.")
            results.append(await guard.call_tool("list_issues", {"owner": "acme", "repo": "public-site"}))
            args = {"owner": "acme", "repo": "private-infra", "path": "deploy/production.yaml"}
            results.append(await guard.call_tool("get_file_contents", args))
            body = f"About our infrastructure:\n{results[-1].content[0].text}"
            pr = {"owner": "acme", "repo": "public-site", "title": "About", "body": body}
            try:
                await guard.call_tool("create_pull_request", pr)
                outcome: Any = Action.ALLOW
            except ConfirmationRequired as asked:
                outcome = asked.decision
    return results, (outcome, monitor.session("k"))


def test_the_sdk_passes_result_meta_through_and_the_guard_reads_the_labels(tmp_path: Path) -> None:
    """A real SDK server over stdio returns CallToolResult with ``_meta`` (result and content block); the SDK
    client keeps it; the guard hands it to the monitor; the pull request is asked about and never runs."""
    log = tmp_path / "calls.log"
    results, (decision, state) = anyio.run(_incident, log, True, True)
    assert all(isinstance(r, CallToolResult) for r in results)
    assert results[0].meta == {"ifc": {"integrity": "untrusted", "confidentiality": ["public"]}}
    assert results[1].content[0].meta == {"io.modelcontextprotocol/trust-annotations": {"sensitive": True}}
    assert decision is not Action.ALLOW
    assert Reason.PRIVATE_TO_SHARED_PLACE in decision.reasons
    assert log.read_text().split() == ["list_issues", "get_file_contents"]
    listed, read = state.calls[0], state.calls[1]
    assert listed.provenance[Leg.UNTRUSTED_CONTENT].rule == "_meta.ifc.integrity"
    assert Leg.UNTRUSTED_CONTENT not in read.legs  # a trusted server's integrity: trusted


@pytest.mark.parametrize("trusted", [True, False])
def test_without_labels_the_trusted_closed_world_reads_let_the_pull_request_run(tmp_path: Path, trusted: bool) -> None:
    """The same server with its labels off: from a trusted server the closed-world reads bring nothing
    untrusted and the pull request runs; from an untrusted one the hints lower nothing and it is asked about."""
    log = tmp_path / "calls.log"
    _, (decision, _) = anyio.run(_incident, log, False, trusted)
    assert (decision is Action.ALLOW) is trusted
