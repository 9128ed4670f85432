"""The proxy's audit log: what the proxy told the monitor, as native JSONL events, one line per event.

Each line is an event of the native format (``trifecta schema events``): ``tools_listed`` for each
``tools/list`` page the server returned (with the server's ``identity`` when the proxy knows it),
``tool_call`` for each call the client requested (whether or not it was forwarded), ``tool_result`` for each
result that came back from the server. The lines are exactly the monitor calls the proxy made, in order, so
``trifecta analyze`` on the log replays the session and reaches the same decisions. A call the proxy answered
itself (denied, declined, or not confirmable) has no ``tool_result``: it never ran.

When the event format has room for them, a ``tool_call`` line also carries the proxy's ``decision`` and the
call's ``outcome`` (forwarded, blocked, asked, unconfirmed); the reader then keeps them for the
record and decides again. The file is opened for appending and flushed after every line, so a proxy that is
killed loses nothing it wrote.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import orjson

from monitor.models import Decision, ServerIdentity, ToolCall


class AuditLog:
    """An append-only JSONL audit log (one flushed line per event). Writing never raises: a failure is
    counted in :attr:`errors` and reported once through ``report``."""

    def __init__(self, path: Path, report: Any = None) -> None:
        self.path = path
        self.errors = 0
        self._report = report
        self._lock = threading.Lock()
        self._fh: IO[bytes] | None = None
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = path.open("ab")

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            if self._fh is not None:
                self._fh.close()
                self._fh = None

    def write_tools(
        self, session_id: str, server: str, tools: list[Any], identity: ServerIdentity | None = None
    ) -> None:
        """A ``tools/list`` page as the server returned it, with the server's identity when the proxy knows it."""
        event: dict[str, Any] = {"kind": "tools_listed", "session_id": session_id, "server": server, "tools": tools}
        if identity is not None:
            event["identity"] = identity.model_dump(exclude_none=True)
        self._write(event)

    def write_call(
        self,
        session_id: str,
        server: str,
        tool: str,
        arguments: dict[str, Any] | None,
        decision: Decision,
        outcome: str,
    ) -> None:
        """A requested call, with the decision on it and what the proxy did with it."""
        line: dict[str, Any] = {
            "kind": "tool_call",
            "session_id": session_id,
            "call_id": decision.call_id,
            "server": server,
            "tool": tool,
            "arguments": arguments,
        }
        if "decision" in ToolCall.model_fields:
            line["decision"] = decision.model_dump(mode="json")
        if "outcome" in ToolCall.model_fields:
            line["outcome"] = outcome
        self._write(line)

    def write_result(self, session_id: str, call_id: str, result: Any, is_error: bool) -> None:
        """A result the server returned for a forwarded call."""
        self._write(
            {
                "kind": "tool_result",
                "session_id": session_id,
                "call_id": call_id,
                "result": result,
                "is_error": is_error,
            }
        )

    def _write(self, event: dict[str, Any]) -> None:
        event["time"] = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        try:
            data = orjson.dumps(event, option=orjson.OPT_NON_STR_KEYS) + b"\n"
        except (TypeError, orjson.JSONEncodeError) as exc:
            self._fail(f"an event could not be written as JSON ({exc}); it is missing from the log")
            return
        with self._lock:
            if self._fh is None:
                return
            try:
                self._fh.write(data)
                self._fh.flush()
            except OSError as exc:
                self._fail(f"cannot write {self.path}: {exc.strerror or exc}")

    def _fail(self, message: str) -> None:
        self.errors += 1
        if self.errors == 1 and self._report is not None:
            self._report(f"audit log: {message}")
