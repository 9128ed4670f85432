"""A stdio relay that records MCP traffic: ``tee_stdio.py LOG [--server NAME] -- COMMAND...``.

Starts COMMAND, copies every line from our stdin to its stdin and from its stdout to our stdout, and appends
each line to LOG as a wrapper line ``{"direction": "client->server" | "server->client", "message": ...}``,
the format :func:`monitor.ingest.read_mcp` reads. With ``--server NAME`` each line also names the server as a
host names it (``"server": NAME``), whatever the server announces.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from typing import IO, Any


def relay(
    source: IO[bytes], sink: IO[bytes], direction: str, log: IO[str], lock: threading.Lock, server: str | None
) -> None:
    """Copy lines from ``source`` to ``sink``, recording each one before it is passed on.

    Recording first keeps the log in causal order: the other side cannot answer a line (a retry after
    ``input_required``, say) before that line is in the log.
    """
    for line in iter(source.readline, b""):
        try:
            message: Any = json.loads(line)
        except ValueError:
            message = None
        if message is not None:
            with lock:
                named = {"server": server} if server is not None else {}
                log.write(json.dumps({"direction": direction, **named, "message": message}) + "\n")
                log.flush()
        sink.write(line)
        sink.flush()
    sink.close()


def main() -> int:
    """Run the relay until the server exits."""
    log_path, command = sys.argv[1], sys.argv[sys.argv.index("--") + 1 :]
    options = sys.argv[2 : sys.argv.index("--")]
    server = options[options.index("--server") + 1] if "--server" in options else None
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    lock = threading.Lock()
    with open(log_path, "a", encoding="utf-8") as log:
        up = threading.Thread(target=relay, args=(sys.stdin.buffer, child.stdin, "client->server", log, lock, server))
        down = threading.Thread(
            target=relay, args=(child.stdout, sys.stdout.buffer, "server->client", log, lock, server)
        )
        up.start()
        down.start()
        down.join()
        code = child.wait()
    return code


if __name__ == "__main__":
    sys.exit(main())
