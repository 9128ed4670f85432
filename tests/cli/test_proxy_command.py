"""``trifecta proxy``'s command line: the client configuration example in the docs runs it, the options stop at
the server command, and an allowlist entry that would sanction everyone is refused."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from monitor.cli._proxy import proxy as proxy_command

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "hosts" / "proxy-client-config.json"


def test_the_client_configuration_example_runs_the_proxy_command() -> None:
    config = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    servers = config["mcpServers"]
    assert servers
    for name, entry in servers.items():
        assert entry["command"] == "trifecta" and entry["args"][0] == "proxy", name
        context = proxy_command.make_context("proxy", list(entry["args"][1:]))
        command = context.params["command"]
        assert command and command[0] in {"npx", "docker", "uvx", "node", "python"}, name
        assert context.params["audit_log"] is not None and context.params["audit_log"].is_absolute()
        assert context.params["server_name"] == name
        assert "--" in entry["args"]
        assert entry["args"].index("--") < entry["args"].index(command[0])


def test_the_command_line_stops_at_the_server_command() -> None:
    context = proxy_command.make_context("proxy", ["--posture", "strict", "npx", "-y", "pkg", "--rules", "x"])
    assert context.params["command"] == ("npx", "-y", "pkg", "--rules", "x")
    assert context.params["posture"] == "strict"
    with pytest.raises(click.UsageError):
        proxy_command.make_context("proxy", ["--posture", "strict"])


def test_an_allowlist_entry_that_would_sanction_everyone_is_refused_naming_it() -> None:
    result = CliRunner().invoke(proxy_command, ["--allowlist", "*.com", "--", "true"])
    assert result.exit_code == 2
    assert "--allowlist" in result.output and "'*.com' is refused: a wildcard" in result.output
