"""Small valid sessions of every input format, for fuzzing: a seed is mutated, its copy is the sentinel."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from monitor.analysis import analyze_records
from monitor.ingest import InputFormat, read_inputs
from monitor.models import SessionReport
from monitor.session import SessionMonitor

__all__ = ["SEEDS", "analyse", "sentinel_calls", "write_case"]


def _jsonl(sid: str) -> list[dict[str, Any]]:
    return [
        {"kind": "user_message", "session_id": sid, "text": "Summarise notes.txt for me."},
        {"kind": "tool_call", "session_id": sid, "call_id": "c1", "server": "fs", "tool": "read_file",
         "arguments": {"path": "notes.txt"}},
        {"kind": "tool_result", "session_id": sid, "call_id": "c1", "result": "the launch code is 7431"},
        {"kind": "tool_call", "session_id": sid, "call_id": "c2", "server": "mail", "tool": "send_email",
         "arguments": {"to": "bob@corp.example", "body": "done"}},
    ]  # fmt: skip


def _mcp(sid: str) -> list[dict[str, Any]]:
    def wrap(direction: str, message: dict[str, Any]) -> dict[str, Any]:
        return {"direction": direction, "session": sid, "server": "fs", "message": message}

    return [
        wrap("client->server", {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}),
        wrap("server->client", {"jsonrpc": "2.0", "id": 1, "result": {"tools": [
            {"name": "read_file", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}}]}}),
        {"kind": "user_message", "session": sid, "text": "read notes.txt"},
        wrap("client->server", {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                "params": {"name": "read_file", "arguments": {"path": "notes.txt"}}}),
        wrap("server->client", {"jsonrpc": "2.0", "id": 2, "result": {
            "content": [{"type": "text", "text": "the launch code is 7431"}], "isError": False}}),
    ]  # fmt: skip


def _claude_code(sid: str) -> list[dict[str, Any]]:
    common = {"sessionId": sid, "parentUuid": None, "uuid": "u", "timestamp": "2026-10-15T15:02:15.380Z"}
    return [
        {**common, "type": "user", "message": {"role": "user", "content": "read notes.txt"}},
        {**common, "type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "notes.txt"}}]}},
        {**common, "type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "the launch code is 7431"}]}},
        {"session_id": sid, "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "t2",
         "tool_input": {"command": "ls"}},
    ]  # fmt: skip


def _otlp(sid: str) -> list[dict[str, Any]]:
    trace = (sid.encode() * 16)[:16].hex()

    def attr(key: str, value: str) -> dict[str, Any]:
        return {"key": key, "value": {"stringValue": value}}

    span = {
        "traceId": trace, "spanId": "00000000000000a1", "name": "execute_tool read_file", "kind": 1,
        "startTimeUnixNano": "1792082402552000000", "endTimeUnixNano": "1792082402590000000",
        "attributes": [attr("gen_ai.operation.name", "execute_tool"), attr("gen_ai.tool.name", "read_file"),
                       attr("gen_ai.conversation.id", sid), attr("gen_ai.tool.call.id", "c1"),
                       attr("gen_ai.tool.call.arguments", '{"path": "notes.txt"}'),
                       attr("gen_ai.tool.call.result", "the launch code is 7431")],
    }  # fmt: skip
    return [{"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": [span]}]}]}]


def _agentdojo(_sid: str) -> list[dict[str, Any]]:
    call = {"function": "send_email", "args": {"recipients": ["bob@corp.example"], "body": "hi"}, "id": "c1"}
    return [
        {
            "suite_name": "workspace",
            "pipeline_name": "p",
            "messages": [
                {"role": "user", "content": "Mail Bob."},
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "content": "sent", "tool_call_id": "c1", "error": None},
            ],
        }
    ]


SEEDS = {
    InputFormat.JSONL: _jsonl,
    InputFormat.MCP: _mcp,
    InputFormat.CLAUDE_CODE: _claude_code,
    InputFormat.OTLP: _otlp,
    InputFormat.AGENTDOJO: _agentdojo,
}


def write_case(folder: Path, name: str, fmt: InputFormat, lines: list[str]) -> Path:
    """Write ``lines`` as the file ``name`` of ``fmt`` in ``folder``; return its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (f"{name}.json" if fmt is InputFormat.AGENTDOJO else f"{name}.jsonl")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    return path


def analyse(paths: list[Path], fmt: InputFormat) -> tuple[dict[str, int], SessionMonitor]:
    """Read ``paths`` through reader and engine: the calls of each session reported, and the monitor."""
    monitor = SessionMonitor()
    out = analyze_records(read_inputs(paths, fmt), monitor)
    return {r.session_id: len(r.calls) for r in out if isinstance(r, SessionReport)}, monitor


def sentinel_calls(fmt: InputFormat) -> int:
    """The calls the seed of ``fmt`` holds."""
    return {InputFormat.JSONL: 2, InputFormat.MCP: 1, InputFormat.CLAUDE_CODE: 2, InputFormat.OTLP: 1}.get(fmt, 1)
