"""What the hook client imports: Claude Code starts it at every event, so its start is Python's start plus the
modules it imports, and it imports only what it uses. Each test runs a real hook process under
``python -X importtime`` against a stand-in engine (a socket at the engine's place that answers at once) and
compares the modules it imported with those of Python starting an empty module the same way."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from support.engines import kill_engines

from monitor.hosts._hook import locate_engine, parse_options

ROOT = Path(__file__).resolve().parents[2]
PRE_TOOL_USE = (ROOT / "samples" / "claude-code" / "hooks.jsonl").read_text().splitlines()[2].encode()

# The client's own modules and the C modules under ``socket``, ``json`` and ``zlib`` (the engine's key).
CLIENT = {
    "__future__",
    "_json",
    "_socket",
    "zlib",
    "monitor",
    "monitor.errors",
    "monitor.hosts",
    "monitor.hosts._hook",
    "monitor.hosts._hook_json",
    "monitor.hosts._hook_reply",
    "monitor.hosts._hook_trust",
    "monitor.hosts.claude_code",
}
# Finding the user's state directory (no --state-dir, no $TRIFECTA_STATE_DIR) takes platformdirs and what it
# imports, but never the store itself (SQLite).
STORE = {"sqlite3", "_sqlite3", "monitor.store._store", "monitor.store._schema"}


def imported(command: list[str], *, cwd: Path, stdin: bytes = b"") -> tuple[set[str], bytes]:
    """The modules a process imports (``-X importtime``) and its stdout."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *command], input=stdin, capture_output=True, cwd=cwd, check=True
    )
    names = set()
    for line in done.stderr.decode().splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    return names - {"imported package"}, done.stdout


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No state directory from the caller's environment; the user's home in ``tmp_path``; this tree's ``monitor``."""
    monkeypatch.delenv("TRIFECTA_STATE_DIR", raising=False)
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    yield
    for state_dir in [tmp_path / "state", *tmp_path.glob("home/.local/state/*")]:
        kill_engines(state_dir)  # a client that missed the stand-in started a real engine: the test fails, not leaks


@pytest.fixture
def python_alone(tmp_path: Path) -> set[str]:
    """What Python imports to run an empty module with ``-m``, as the hook is run (``runpy`` and the site)."""
    folder = tmp_path / "empty"
    folder.mkdir()
    (folder / "empty_module.py").write_text("")
    names, _ = imported(["-m", "empty_module"], cwd=folder)
    return names


@contextmanager
def stand_in_engine(path: str) -> Iterator[None]:
    """A socket at the engine's place that reads one request and answers ``allow``."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    server.settimeout(30)

    def answer() -> None:
        conn, _ = server.accept()
        with conn:
            while conn.recv(65536):
                pass
            conn.sendall(json.dumps({"action": "allow", "message": "ok", "committed": True}).encode())

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    try:
        yield
    finally:
        thread.join(timeout=30)
        server.close()


def hook_event(tmp_path: Path, *options: str) -> set[str]:
    """The modules of one hook process answering a ``PreToolUse`` with a stand-in engine's ``allow``."""
    paths = locate_engine(parse_options(list(options)))
    os.makedirs(paths.state_dir, mode=0o700, exist_ok=True)
    made = not paths.socket
    if made:  # the state directory's path is too long for a socket: the client looks in a folder of /tmp
        paths.make_socket_dir()
    try:
        with stand_in_engine(paths.socket):
            command = ["-m", "monitor", "hook", "claude-code", *options, "--on-allow", "allow"]
            names, out = imported(command, cwd=tmp_path, stdin=PRE_TOOL_USE)
    finally:
        if made:
            shutil.rmtree(os.path.dirname(paths.socket), ignore_errors=True)
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "allow"  # the engine's answer, relayed
    return names


def test_a_hook_event_imports_only_the_client(tmp_path: Path, python_alone: set[str]) -> None:
    extra = hook_event(tmp_path, "--state-dir", str(tmp_path / "state")) - python_alone
    assert extra <= CLIENT, f"the hook client imports more than it uses: {sorted(extra - CLIENT)}"


def test_a_hook_event_in_the_environments_state_dir_imports_only_the_client(
    tmp_path: Path, python_alone: set[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRIFECTA_STATE_DIR", str(tmp_path / "state"))
    extra = hook_event(tmp_path) - python_alone
    assert extra <= CLIENT, f"the hook client imports more than it uses: {sorted(extra - CLIENT)}"


def test_the_users_state_dir_is_found_without_loading_the_store(tmp_path: Path) -> None:
    names = hook_event(tmp_path)
    assert "platformdirs" in names  # the user's state directory is platformdirs' to say
    assert not names & STORE, sorted(names & STORE)


def test_help_imports_only_the_client(tmp_path: Path, python_alone: set[str]) -> None:
    names, out = imported(["-m", "monitor", "hook", "claude-code", "--help"], cwd=tmp_path)
    assert out.startswith(b"usage: trifecta hook claude-code")
    assert names - python_alone <= CLIENT - {"zlib"}, sorted(names - python_alone - CLIENT)
