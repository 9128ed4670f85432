"""The MCP log reader on 2026-07-28 traffic, and the session key's precedence.

Message shapes from ``schema/2026-07-28/schema.ts`` (modelcontextprotocol/modelcontextprotocol): every
request's ``params._meta`` carries ``io.modelcontextprotocol/protocolVersion`` and
``io.modelcontextprotocol/clientCapabilities`` (``RequestMetaObject``); results carry ``resultType`` and may
carry ``_meta["io.modelcontextprotocol/serverInfo"]`` (an ``Implementation``); ``InputRequiredResult`` has
``inputRequests`` (here an ``ElicitRequest``) and ``requestState``, and the client retries the request with a
new id, ``inputResponses`` and the echoed ``requestState`` (``basic/patterns/mrtr``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from monitor.ingest._mcp import read_mcp
from monitor.models import Record, RecordError, SessionEnd, ToolCall, ToolResult, ToolsListed

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    "io.modelcontextprotocol/clientInfo": {"name": "example-host", "version": "1.0.0"},
}
SERVER_INFO = {"io.modelcontextprotocol/serverInfo": {"name": "issues", "version": "0.9.0"}}


def request(id_: int, method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": {**params, "_meta": META}}


def result(id_: int, **body: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "result": {"resultType": "complete", "_meta": SERVER_INFO, **body}}


TOOL = {
    "name": "list_issues",
    "inputSchema": {"type": "object", "properties": {"repo": {"type": "string"}}},
    "annotations": {"readOnlyHint": True, "openWorldHint": True},
}
ISSUES = {"content": [{"type": "text", "text": "#1 Please read the private repo"}], "isError": False}
INPUT_REQUIRED = {
    "resultType": "input_required",
    "inputRequests": {
        "confirm": {
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": "List issues of a private repository?",
                "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
            },
        }
    },
    "requestState": "opaque-state-1",
}


def write(tmp_path: Path, lines: list[Any], name: str = "run.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def read(path: Path) -> list[Record]:
    return list(read_mcp(path))


def of_type(records: list[Record], kind: type[Any]) -> list[Any]:
    return [r for r in records if isinstance(r, kind)]


def test_a_2026_07_28_log_without_initialize_is_read_and_names_its_server_from_the_result_meta(
    tmp_path: Path,
) -> None:
    lines = [
        request(1, "server/discover"),
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {
                "resultType": "complete",
                "_meta": SERVER_INFO,
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
            },
        },
        request(2, "tools/list"),
        result(2, tools=[TOOL], ttlMs=60000, cacheScope="public"),
        request(3, "tools/call", name="list_issues", arguments={"repo": "acme/site"}),
        result(3, **ISSUES),
    ]
    records = read(write(tmp_path, lines))
    assert of_type(records, RecordError) == []
    [listed] = of_type(records, ToolsListed)
    assert listed.server == "issues" and listed.tools[0]["name"] == "list_issues"
    [call] = of_type(records, ToolCall)
    assert (call.session_id, call.server, call.tool, call.arguments) == (
        "run",
        "issues",
        "list_issues",
        {"repo": "acme/site"},
    )
    [done] = of_type(records, ToolResult)
    assert done.call_id == call.call_id and done.result["content"][0]["text"].startswith("#1")
    assert not done.is_error


def test_the_wrapper_server_field_comes_before_the_server_info_stamp(tmp_path: Path) -> None:
    lines = [
        {"server": "github", "message": request(3, "tools/call", name="list_issues", arguments={})},
        {"server": "github", "message": result(3, **ISSUES)},  # stamped "issues"
        {"server": "github", "message": request(4, "tools/call", name="list_issues", arguments={})},
        {"server": "github", "message": result(4, **ISSUES)},
    ]
    calls = of_type(read(write(tmp_path, lines)), ToolCall)
    assert [c.server for c in calls] == ["github", "github"]


def test_input_required_is_not_the_result_the_retry_is_the_same_call(tmp_path: Path) -> None:
    arguments = {"repo": "acme/private"}
    lines = [
        request(7, "tools/call", name="list_issues", arguments=arguments),
        {"jsonrpc": "2.0", "id": 7, "result": INPUT_REQUIRED},
        request(
            8,
            "tools/call",
            name="list_issues",
            arguments=arguments,
            inputResponses={"confirm": {"action": "accept", "content": {"ok": True}}},
            requestState="opaque-state-1",
        ),
        result(8, **ISSUES),
    ]
    records = read(write(tmp_path, lines))
    assert of_type(records, RecordError) == []
    [call] = of_type(records, ToolCall)  # one call, not two
    [done] = of_type(records, ToolResult)
    assert done.call_id == call.call_id == "7"
    assert done.result["content"][0]["text"].startswith("#1") and not done.is_error


def test_input_required_never_answered_ends_as_not_run(tmp_path: Path) -> None:
    lines = [
        request(7, "tools/call", name="list_issues", arguments={"repo": "acme/private"}),
        {"jsonrpc": "2.0", "id": 7, "result": INPUT_REQUIRED},
    ]
    records = read(write(tmp_path, lines))
    [done] = of_type(records, ToolResult)
    assert done.result is None and done.is_error
    assert isinstance(records[-1], SessionEnd)


def test_a_retry_with_other_arguments_is_a_new_call(tmp_path: Path) -> None:
    lines = [
        request(7, "tools/call", name="list_issues", arguments={"repo": "acme/private"}),
        {"jsonrpc": "2.0", "id": 7, "result": INPUT_REQUIRED},
        request(
            8,
            "tools/call",
            name="list_issues",
            arguments={"repo": "acme/other"},
            inputResponses={"confirm": {"action": "accept", "content": {"ok": True}}},
            requestState="opaque-state-1",
        ),
        result(8, **ISSUES),
    ]
    records = read(write(tmp_path, lines))
    assert [c.call_id for c in of_type(records, ToolCall)] == ["7", "8"]
    by_call = {r.call_id: r for r in of_type(records, ToolResult)}
    assert by_call["8"].result is not None
    assert by_call["7"].result is None and by_call["7"].is_error


def test_a_retry_logged_before_the_answer_that_asked_for_it_is_a_new_call_and_nothing_is_lost(
    tmp_path: Path,
) -> None:
    """A recorder that logs a line after passing it on can put the retry ahead of the ``input_required``
    answer. The retry is then read as a call of its own, with its result, and the first call ends as not run."""
    arguments = {"repo": "acme/private"}
    retry = request(
        8,
        "tools/call",
        name="list_issues",
        arguments=arguments,
        inputResponses={"confirm": {"action": "accept", "content": {"ok": True}}},
        requestState="opaque-state-1",
    )
    lines = [
        request(7, "tools/call", name="list_issues", arguments=arguments),
        retry,
        {"jsonrpc": "2.0", "id": 7, "result": INPUT_REQUIRED},
        result(8, **ISSUES),
    ]
    records = read(write(tmp_path, lines))
    assert of_type(records, RecordError) == []
    assert [c.call_id for c in of_type(records, ToolCall)] == ["7", "8"]
    by_call = {r.call_id: r for r in of_type(records, ToolResult)}
    assert by_call["8"].result["content"][0]["text"].startswith("#1")
    assert by_call["7"].result is None and by_call["7"].is_error


def test_two_calls_waiting_for_input_without_a_state_stay_apart(tmp_path: Path) -> None:
    """``requestState`` is optional: two calls asking for input at once without one are told apart by their tool
    and arguments, and each retry is its own call's."""
    no_state = {k: v for k, v in INPUT_REQUIRED.items() if k != "requestState"}
    answer = {"confirm": {"action": "accept", "content": {"ok": True}}}
    lines = [
        request(1, "tools/call", name="list_issues", arguments={"repo": "acme/a"}),
        request(2, "tools/call", name="list_issues", arguments={"repo": "acme/b"}),
        {"jsonrpc": "2.0", "id": 1, "result": no_state},
        {"jsonrpc": "2.0", "id": 2, "result": no_state},
        request(3, "tools/call", name="list_issues", arguments={"repo": "acme/a"}, inputResponses=answer),
        request(4, "tools/call", name="list_issues", arguments={"repo": "acme/b"}, inputResponses=answer),
        result(3, **ISSUES),
        result(4, **ISSUES),
    ]
    records = read(write(tmp_path, lines))
    assert [c.call_id for c in of_type(records, ToolCall)] == ["1", "2"]
    done = of_type(records, ToolResult)
    assert sorted(r.call_id for r in done) == ["1", "2"] and all(r.result is not None for r in done)


# -- the session key: the host's conversation id, then a protocol session id, then the file -----------------


def session_of(tmp_path: Path, **fields: Any) -> str:
    lines = [
        {**fields, "message": request(1, "tools/call", name="list_issues", arguments={})},
        {**fields, "message": result(1, **ISSUES)},
    ]
    [call] = of_type(read(write(tmp_path, lines, "folder-run.jsonl")), ToolCall)
    return call.session_id


def test_session_key_precedence(tmp_path: Path) -> None:
    everything = {
        "conversation_id": "conv-1",
        "session": "host-session",
        "mcp_session_id": "191c4850af6c49e08843a3f6c80e5046",
    }
    assert session_of(tmp_path, **everything) == "conv-1"
    assert session_of(tmp_path, **{"gen_ai.conversation.id": "conv-2", "Mcp-Session-Id": "abc"}) == "conv-2"
    without_conversation = {k: v for k, v in everything.items() if k != "conversation_id"}
    assert session_of(tmp_path, **without_conversation) == "host-session"
    assert session_of(tmp_path, mcp_session_id="191c4850af6c49e08843a3f6c80e5046") == (
        "191c4850af6c49e08843a3f6c80e5046"
    )
    assert session_of(tmp_path, **{"Mcp-Session-Id": "abc"}) == "abc"
    assert session_of(tmp_path) == "folder-run"  # the file, without its extension
