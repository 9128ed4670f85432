"""The package a server's command line runs: what a host (the proxy) knows of a server besides its name.

A rule pack may name the packages of the server it reviewed (``packages: [mcp-server-fetch, mcp/fetch]``); a
server started from another package is not that server (:class:`~monitor.models.ServerIdentity`). The command
line comes from the user's configuration, so it is read as untrusted input: only a few launcher shapes are
understood, each option known (else the answer is "no package"), and the result is bounded.

Understood shapes (the launcher may be a path, and may end in ``.cmd`` or ``.exe``):

- ``npx [options] PACKAGE …``, ``bunx …``, ``pnpm dlx …``, ``pnpx …`` (npm): ``-p``/``--package PACKAGE``
  wins over the first argument;
- ``uvx [options] PACKAGE …``, ``uv tool run …``, ``pipx run …`` (PyPI): ``--from``/``--spec PACKAGE`` wins;
- ``docker run [options] IMAGE …``, ``podman run …`` (container images).

The package is returned as written (``@scope/name@1.2``, ``mcp-server-fetch==1.0``, ``mcp/fetch:latest``); rule
packs compare it without registry prefix or version. Anything else (``python server.py``, ``node dist/index.js``,
an option this module does not know, a local path or URL instead of a package, a ``-c`` shell string) is no
package: None.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

MAX_PACKAGE_CHARS = 200
"""The longest package or image name taken; a longer one is no package."""
MAX_SCANNED_ARGS = 64
"""The launcher's options are read up to this many arguments; past that, no package."""

_PACKAGE = re.compile(r"[@A-Za-z0-9_][\w.@/:+=<>~!,-]*")
_NPM_VALUES = frozenset(("-p", "--package", "--registry", "--cache", "--userconfig", "-w", "--workspace"))
_NPM_FLAGS = frozenset(("-y", "--yes", "-q", "--quiet", "--no", "--no-install", "--prefer-offline", "--silent"))
_PY_VALUES = frozenset(
    (
        "--from",
        "--spec",
        "--with",
        "-w",
        "--with-editable",
        "--with-requirements",
        "--python",
        "-p",
        "--index",
        "--default-index",
        "--index-url",
        "-i",
        "--extra-index-url",
        "--directory",
        "--project",
        "--cache-dir",
        "--config-file",
        "--pip-args",
    )
)
_PY_FLAGS = frozenset(
    ("-q", "--quiet", "-v", "--verbose", "--offline", "--isolated", "--no-cache", "-n", "--refresh", "-U", "--upgrade")
)
_DOCKER_VALUES = frozenset(
    (
        "-e",
        "--env",
        "--env-file",
        "-v",
        "--volume",
        "--mount",
        "--name",
        "--network",
        "--net",
        "-p",
        "--publish",
        "-w",
        "--workdir",
        "-u",
        "--user",
        "--entrypoint",
        "--platform",
        "--pull",
        "-l",
        "--label",
        "--add-host",
        "--cpus",
        "-m",
        "--memory",
        "--cap-add",
        "--cap-drop",
        "--security-opt",
        "--tmpfs",
        "--device",
        "--dns",
        "-h",
        "--hostname",
        "--ulimit",
        "--runtime",
        "--ipc",
        "--pid",
        "--gpus",
        "--log-driver",
        "--log-opt",
        "--restart",
        "--shm-size",
        "--stop-signal",
        "--stop-timeout",
    )
)
_DOCKER_FLAGS = frozenset(
    ("-i", "-t", "-it", "-ti", "-d", "--rm", "--interactive", "--tty", "--detach", "--init", "--read-only", "-q")
)
# launcher words -> (words that must follow it, options that take a value, flags, options naming the package)
_LAUNCHERS: dict[str, tuple[tuple[str, ...], frozenset[str], frozenset[str], frozenset[str]]] = {
    "npx": ((), _NPM_VALUES, _NPM_FLAGS, frozenset(("-p", "--package"))),
    "bunx": ((), _NPM_VALUES, _NPM_FLAGS, frozenset(("-p", "--package"))),
    "pnpx": ((), _NPM_VALUES, _NPM_FLAGS, frozenset(("-p", "--package"))),
    "pnpm": (("dlx",), _NPM_VALUES, _NPM_FLAGS, frozenset(("-p", "--package"))),
    "uvx": ((), _PY_VALUES, _PY_FLAGS, frozenset(("--from",))),
    "uv": (("tool", "run"), _PY_VALUES, _PY_FLAGS, frozenset(("--from",))),
    "pipx": (("run",), _PY_VALUES, _PY_FLAGS, frozenset(("--spec",))),
    "docker": (("run",), _DOCKER_VALUES, _DOCKER_FLAGS, frozenset()),
    "podman": (("run",), _DOCKER_VALUES, _DOCKER_FLAGS, frozenset()),
}


def derive_server_package(command: str, args: Sequence[str]) -> str | None:
    """Return the npm or PyPI package or container image that ``command args…`` runs, as written; None for a
    command line of another shape (see the module)."""
    if not isinstance(command, str) or not all(isinstance(a, str) for a in args):
        return None
    launcher = re.sub(r"\.(cmd|exe)$", "", re.split(r"[\\/]", command)[-1].lower())
    known = _LAUNCHERS.get(launcher)
    if known is None:
        return None
    words, values, flags, naming = known
    rest = list(args[:MAX_SCANNED_ARGS])
    if tuple(rest[: len(words)]) != words:
        return None
    rest = rest[len(words) :]
    named: str | None = None
    i = 0
    while i < len(rest):
        arg = rest[i]
        option, eq, inline = arg.partition("=")
        if not arg.startswith("-") or arg == "-":
            return _check_package(named or arg)
        if arg == "--":
            return _check_package(named or (rest[i + 1] if i + 1 < len(rest) else ""))
        if option in values:
            value = inline if eq else (rest[i + 1] if i + 1 < len(rest) else "")
            if option in naming:
                named = value
            i += 1 if eq else 2
        elif arg in flags:
            i += 1
        else:
            return None  # an option this table does not know: what follows it cannot be told
    return None


def _check_package(text: str) -> str | None:
    """``text`` when it reads as a package or image name (not a path, URL or shell string), else None."""
    if not text or len(text) > MAX_PACKAGE_CHARS or "://" in text or text.startswith((".", "/", "~")):
        return None
    return text if _PACKAGE.fullmatch(text) else None
