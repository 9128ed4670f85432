"""Record the sample sessions as MCP JSON-RPC logs, through real MCP servers over stdio.

For each native session ``samples/sessions/<id>.jsonl`` this script starts itself again as an MCP server
(``record.py serve <session file>``): an ``MCPServer`` (the ``mcp`` SDK's FastMCP, renamed in mcp 2) named
after the session's server, whose ``tools/list`` answers the session's tool definitions exactly (names,
descriptions, input schemas, annotations) and whose ``tools/call`` answers, call by call, the results the
session recorded. An ``mcp.ClientSession`` connects to it over ``stdio_client``, initializes, lists the tools
and replays the session's calls in order.

Every JSON-RPC message that crosses the stdio transport, in both directions, is written to
``samples/mcp/<id>.jsonl`` as one wrapper line (see :func:`monitor.ingest.read_mcp`)::

    {"timestamp": "...", "direction": "client->server", "session": "<id>", "server": "<name>", "message": {...}}

The hook wraps the read and write streams of the stdio transport before they reach the client session, so
the log holds the messages exactly as the SDK sent and received them. Timestamps come from the native session
(a call's request at its ``tool_call`` time, its response at its ``tool_result`` time, the handshake just
before ``tools_listed``), so the files keep the session's timing and the script reproduces them byte for byte.

MCP carries no user messages. The user's message is written at its place as an extension line that is not
part of MCP, ``{"kind": "user_message", "timestamp": ..., "session": ..., "text": ...}``, which the MCP
reader accepts, so the replay gets the same user-sanctioned destinations as the native session.

Usage: ``python samples/mcp/record.py [--sessions DIR] [--out DIR]``. Needs ``mcp>=2.3``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.server.mcpserver import MCPServer
from mcp.shared.message import SessionMessage

HERE = Path(__file__).resolve().parent
DEFAULT_SESSIONS = HERE.parent / "sessions"
CLIENT_INFO = types.Implementation(name="trifecta-samples-recorder", version="1.0.0")
SERVER_VERSION = "1.0.0"
TO_SERVER = "client->server"
TO_CLIENT = "server->client"
# The handshake, placed just before the native tools_listed time: (start, end) offsets of each exchange.
INITIALIZE_OFFSETS = (timedelta(milliseconds=-120), timedelta(milliseconds=-80))
LIST_OFFSETS = (timedelta(milliseconds=-40), timedelta(0))


# -- the native session ------------------------------------------------------------------------------------


@dataclass
class RecordedCall:
    """One call of a native session, with the result it got."""

    tool: str
    arguments: dict[str, Any]
    requested: datetime
    result: Any = None
    is_error: bool = False
    answered: datetime | None = None


@dataclass
class NativeSession:
    """What the recorder replays from one native JSONL session."""

    session_id: str
    server: str
    tools: list[dict[str, Any]]
    listed: datetime
    steps: list[tuple[str, Any]] = field(default_factory=list)  # ("user", (time, text)) or ("call", RecordedCall)

    @property
    def calls(self) -> list[RecordedCall]:
        """The recorded calls, in order."""
        return [step for kind, step in self.steps if kind == "call"]


def parse_time(text: str) -> datetime:
    """Parse an RFC 3339 time as the native sessions write it."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def format_time(time: datetime) -> str:
    """Write a time like the native sessions: UTC, milliseconds, ``Z``."""
    return time.strftime("%Y-%m-%dT%H:%M:%S.") + f"{time.microsecond // 1000:03d}Z"


def load_session(path: Path) -> NativeSession:
    """Read a native session: one tools_listed, the user's message, and calls with their results."""
    session: NativeSession | None = None
    by_id: dict[str, RecordedCall] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        kind = event["kind"]
        if kind == "tools_listed":
            if session is not None:
                raise SystemExit(f"{path}: more than one tools_listed; the recorder replays one server")
            session = NativeSession(event["session_id"], event["server"], event["tools"], parse_time(event["time"]))
        elif session is None:
            raise SystemExit(f"{path}: events before tools_listed")
        elif kind == "user_message":
            session.steps.append(("user", (parse_time(event["time"]), event["text"])))
        elif kind == "tool_call":
            if event["server"] != session.server:
                raise SystemExit(f"{path}: call to another server {event['server']!r}")
            call = RecordedCall(event["tool"], event["arguments"], parse_time(event["time"]))
            by_id[event["call_id"]] = call
            session.steps.append(("call", call))
        elif kind == "tool_result":
            call = by_id[event["call_id"]]
            call.result, call.is_error = event["result"], event.get("is_error", False)
            call.answered = parse_time(event["time"])
    if session is None:
        raise SystemExit(f"{path}: no tools_listed")
    return session


# -- the server --------------------------------------------------------------------------------------------


class ReplayServer(MCPServer):
    """An MCPServer that lists recorded tool definitions verbatim and answers calls with recorded results.

    MCPServer derives a tool's input schema from a Python signature; the samples need the recorded
    schemas and annotations exactly, so ``list_tools`` and ``call_tool`` are overridden.
    """

    def __init__(self, session: NativeSession) -> None:
        super().__init__(name=session.server, version=SERVER_VERSION, log_level="WARNING")
        self.recorded_tools = [types.Tool.model_validate(tool) for tool in session.tools]
        self.pending = list(session.calls)

    async def list_tools(self) -> list[types.Tool]:
        """The recorded tools/list."""
        return self.recorded_tools

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> types.CallToolResult:
        """The recorded result of the next call, which must be this one."""
        if not self.pending or (self.pending[0].tool, self.pending[0].arguments) != (name, arguments):
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=f"unexpected call {name}")], is_error=True
            )
        call = self.pending.pop(0)
        result = types.CallToolResult.model_validate(call.result)
        if call.is_error and not result.is_error:
            result.is_error = True
        return result


def serve(session_file: Path) -> None:
    """Run the replay server of one session over stdio."""
    ReplayServer(load_session(session_file)).run("stdio")


# -- the client and the log ------------------------------------------------------------------------------


@dataclass
class Clock:
    """The time stamped on logged messages: an exchange's start, then its end once the server answers."""

    now: datetime
    end: datetime

    def exchange(self, start: datetime, end: datetime) -> None:
        """Stamp what follows as one exchange from ``start`` to ``end``."""
        self.now, self.end = start, end


class Log:
    """The wrapper lines of one session's log."""

    def __init__(self, session: NativeSession) -> None:
        self.session = session
        self.lines: list[str] = []

    def message(self, time: datetime, direction: str, message: types.JSONRPCMessage) -> None:
        """Log one JSON-RPC message as it crossed the transport."""
        self._write(
            {
                "timestamp": format_time(time),
                "direction": direction,
                "session": self.session.session_id,
                "server": self.session.server,
                "message": message.model_dump(mode="json", by_alias=True, exclude_unset=True),
            }
        )

    def user_message(self, time: datetime, text: str) -> None:
        """Log the user's message as the extension line (not part of MCP)."""
        self._write(
            {"kind": "user_message", "timestamp": format_time(time), "session": self.session.session_id, "text": text}
        )

    def _write(self, line: dict[str, Any]) -> None:
        self.lines.append(json.dumps(line, ensure_ascii=False))

    def text(self) -> str:
        """The log file's text."""
        return "".join(line + "\n" for line in self.lines)


class LoggedWriteStream:
    """The transport's write stream, logging each message the client sends, stamped as it is sent."""

    def __init__(self, inner: Any, log: Log, clock: Clock) -> None:
        self.inner, self.log, self.clock = inner, log, clock

    async def send(self, item: SessionMessage, /) -> None:
        """Log and forward one message."""
        self.log.message(self.clock.now, TO_SERVER, item.message)
        await self.inner.send(item)

    async def aclose(self) -> None:
        """Close the transport's stream."""
        await self.inner.aclose()

    async def __aenter__(self) -> LoggedWriteStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class LoggedReadStream:
    """The transport's read stream, logging each message the server sends as the client receives it."""

    def __init__(self, inner: Any, log: Log, clock: Clock) -> None:
        self.inner, self.log, self.clock = inner, log, clock

    async def receive(self) -> SessionMessage | Exception:
        """Receive, log and return one message (or a transport error, not logged)."""
        item: SessionMessage | Exception = await self.inner.receive()
        if isinstance(item, SessionMessage):
            self.clock.now = self.clock.end  # the server answered: what the client sends next comes after
            self.log.message(self.clock.now, TO_CLIENT, item.message)
        return item

    def __aiter__(self) -> LoggedReadStream:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        """Close the transport's stream."""
        await self.inner.aclose()

    async def __aenter__(self) -> LoggedReadStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


async def record(session_file: Path) -> str:
    """Replay one native session against its MCP server over stdio; return the log's text."""
    session = load_session(session_file)
    log = Log(session)
    clock = Clock(session.listed, session.listed)
    server_command = [str(Path(__file__).resolve()), "serve", str(session_file.resolve())]
    params = StdioServerParameters(command=sys.executable, args=server_command)
    async with stdio_client(params) as (transport_read, transport_write):
        read = LoggedReadStream(transport_read, log, clock)
        write = LoggedWriteStream(transport_write, log, clock)
        async with ClientSession(read, write, client_info=CLIENT_INFO) as client:
            await _replay(client, session, clock, log)
    return log.text()


async def _replay(client: ClientSession, session: NativeSession, clock: Clock, log: Log) -> None:
    listed = session.listed
    clock.exchange(listed + INITIALIZE_OFFSETS[0], listed + INITIALIZE_OFFSETS[1])
    await client.initialize()
    clock.exchange(listed + LIST_OFFSETS[0], listed + LIST_OFFSETS[1])
    listing = await client.list_tools()
    if listing.next_cursor is not None:
        raise RuntimeError("the replay server does not paginate")
    for kind, step in session.steps:
        if kind == "user":
            time, text = step
            log.user_message(time, text)
            continue
        call: RecordedCall = step
        clock.exchange(call.requested, call.answered or call.requested)
        result = await client.call_tool(call.tool, call.arguments)
        if result.is_error and not call.is_error:
            raise RuntimeError(f"{session.session_id}: {call.tool} failed in the replay: {result.content}")


def record_all(sessions: Path, out: Path, report: Callable[[str], None] = print) -> list[Path]:
    """Record every session under ``sessions`` into ``out``; return the files written."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for session_file in sorted(sessions.glob("*.jsonl")):
        target = out / session_file.name
        target.write_text(anyio.run(record, session_file), encoding="utf-8")
        report(f"wrote {target}")
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> None:
    """Command line: record all sessions, or (internally) serve one."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    sub = parser.add_subparsers(dest="command")
    serve_parser = sub.add_parser("serve", help="run the replay MCP server of one session over stdio")
    serve_parser.add_argument("session_file", type=Path)
    parser.add_argument("--sessions", type=Path, default=DEFAULT_SESSIONS, help="native JSONL sessions")
    parser.add_argument("--out", type=Path, default=HERE, help="where the MCP logs go")
    args = parser.parse_args(argv)
    if args.command == "serve":
        serve(args.session_file)
    else:
        record_all(args.sessions, args.out)


if __name__ == "__main__":
    main()
