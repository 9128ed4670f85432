"""``monitor.ingest._toolslist``: the one tool-list reader, on every input shape, with server name and protocol
version where the file says them, and bad files named by file and line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from monitor.errors import InputError
from monitor.ingest import ToolList, ToolListProblem, parse_tool_list, read_tool_list, read_tool_lists

TOOL = {"name": "read_notes", "description": "Reads the notes.", "inputSchema": {"type": "object"}}
OTHER = {"name": "send_note", "description": "Sends a note.", "inputSchema": {"type": "object"}}


def write(path: Path, doc: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def write_lines(path: Path, *lines: Any) -> Path:
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n")
    return path


def read_one(path: Path) -> ToolList:
    """The lenient reader and the strict one agree on a file that holds one tool list."""
    lists, problems = read_tool_lists([path])
    assert problems == [] and len(lists) == 1
    assert read_tool_list(path) == lists[0]
    return lists[0]


def shape(tool_list: ToolList) -> tuple[Any, ...]:
    return (
        tool_list.server,
        tool_list.protocol_version,
        tool_list.line,
        tool_list.tool_pointers,
        [t["name"] for t in tool_list.tools],
    )


# -- the shapes ---------------------------------------------------------------------------------------------


def test_a_tools_list_result(tmp_path: Path) -> None:
    found = read_one(write(tmp_path / "t.json", {"tools": [TOOL, OTHER]}))
    assert shape(found) == (None, None, None, ("/tools/0", "/tools/1"), ["read_notes", "send_note"])
    assert found.file == str(tmp_path / "t.json") and found.server_name == "t"


def test_a_jsonrpc_response(tmp_path: Path) -> None:
    found = read_one(write(tmp_path / "r.json", {"jsonrpc": "2.0", "id": 2, "result": {"tools": [TOOL]}}))
    assert shape(found) == (None, None, None, ("/result/tools/0",), ["read_notes"])


def test_a_bare_array(tmp_path: Path) -> None:
    found = read_one(write(tmp_path / "a.json", [TOOL, OTHER]))
    assert shape(found) == (None, None, None, ("/0", "/1"), ["read_notes", "send_note"])


def test_one_tool(tmp_path: Path) -> None:
    found = read_one(write(tmp_path / "one.json", TOOL))
    assert shape(found) == (None, None, None, ("",), ["read_notes"])


def test_server_name_and_protocol_version_when_the_file_says_them(tmp_path: Path) -> None:
    data_file = read_one(
        write(tmp_path / "d.json", {"server": "notes", "protocolVersion": "2025-06-18", "tools": [TOOL]})
    )
    assert (data_file.server, data_file.protocol_version, data_file.protocol_version_source) == (
        "notes",
        "2025-06-18",
        "/protocolVersion",
    )
    captured = read_one(write(tmp_path / "c.json", {"serverInfo": {"name": "srv"}, "tools": [TOOL]}))
    assert captured.server == "srv"
    mcpdesc = {"info": {"name": "desc"}, "protocolVersions": ["2025-06-18", "2024-11-05"], "tools": [TOOL]}
    described = read_one(write(tmp_path / "m.json", mcpdesc))
    assert (described.server, described.protocol_version, described.protocol_version_source) == (
        "desc",
        "2024-11-05",
        "/protocolVersions/1",
    )


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "result": {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "notes"}},
}
LISTED = {"jsonrpc": "2.0", "id": 2, "result": {"tools": [TOOL, OTHER]}}


def test_a_jsonrpc_log_in_json_lines(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "s.jsonl", INITIALIZE, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, LISTED)
    found = read_one(path)
    assert shape(found) == (
        "notes",
        "2025-06-18",
        3,
        ("/result/tools/0", "/result/tools/1"),
        ["read_notes", "send_note"],
    )
    assert found.protocol_version_source == "line 1: /result/protocolVersion"


def test_a_wrapped_jsonrpc_log_names_the_server_of_each_line(tmp_path: Path) -> None:
    def wrap(server: str, message: dict[str, Any]) -> dict[str, Any]:
        return {"direction": "server->client", "server": server, "message": message}

    old = {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2024-11-05", "capabilities": {}}}
    path = write_lines(
        tmp_path / "w.jsonl", wrap("one", INITIALIZE), wrap("two", old), wrap("two", LISTED), wrap("one", LISTED)
    )
    lists, problems = read_tool_lists([path])
    assert problems == []
    assert [(x.server, x.protocol_version, x.line, x.tool_pointers[0]) for x in lists] == [
        ("two", "2024-11-05", 3, "/message/result/tools/0"),
        ("one", "2025-06-18", 4, "/message/result/tools/0"),
    ]


def test_a_jsonrpc_log_in_one_json_document(tmp_path: Path) -> None:
    found = read_one(write(tmp_path / "batch.json", [INITIALIZE, LISTED]))
    assert shape(found) == (
        "notes",
        "2025-06-18",
        None,
        ("/1/result/tools/0", "/1/result/tools/1"),
        ["read_notes", "send_note"],
    )
    assert found.protocol_version_source == "/0/result/protocolVersion"


def test_parse_tool_list_reads_a_decoded_document_at_a_pointer() -> None:
    found = parse_tool_list({"tools": [TOOL]}, "f.jsonl", 7, "/message/result")
    assert found is not None and (found.line, found.tool_pointers) == (7, ("/message/result/tools/0",))
    assert parse_tool_list({"hello": "world"}, "f.json") is None
    assert parse_tool_list("a string", "f.json") is None


def test_folders_are_walked_and_problems_come_in_input_order(tmp_path: Path) -> None:
    write(tmp_path / "tools" / "b.json", {"server": "b", "tools": [TOOL]})
    write(tmp_path / "tools" / "a" / "a.json", {"server": "a", "tools": [TOOL]})
    write(tmp_path / "tools" / ".hidden" / "c.json", {"server": "c", "tools": [TOOL]})
    (tmp_path / "empty").mkdir()
    lists, problems = read_tool_lists([tmp_path / "missing.json", tmp_path / "tools", tmp_path / "empty"])
    assert [x.server for x in lists] == ["a", "b"]
    assert problems == [
        ToolListProblem(file=str(tmp_path / "missing.json"), message="no such file or folder"),
        ToolListProblem(file=str(tmp_path / "empty"), message="no .json, .jsonl, .ndjson, .log files in this folder"),
    ]


# -- bad files ----------------------------------------------------------------------------------------------


def test_a_bad_line_of_a_log_is_named_by_file_and_line_and_the_good_lines_are_kept(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "log.jsonl", LISTED, "{not json", INITIALIZE)
    lists, problems = read_tool_lists([path])
    assert [x.line for x in lists] == [1]
    assert [p.source for p in problems] == [f"{path}:2"] and problems[0].message.startswith("not JSON: ")
    with pytest.raises(InputError) as raised:
        read_tool_list(path)
    assert str(raised.value) == f"{path}:2: {problems[0].message}"


def test_a_document_that_is_not_json_is_named_by_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{\n  "tools": [\n  }')
    lists, problems = read_tool_lists([path])
    assert lists == [] and [p.source for p in problems] == [str(path)]
    assert problems[0].message.startswith("not JSON: ") and "(line 3, column 3)" in problems[0].message
    with pytest.raises(InputError) as raised:
        read_tool_list(path)
    assert raised.value.source == f"{path}:3" and raised.value.message.startswith("not JSON: ")


@pytest.mark.parametrize(
    ("doc", "lenient", "strict"),
    [
        ({"hello": "world"}, "no tools here: expected", "no 'tools' array and not a single tool object"),
        ("a string", "no tools here: expected", "expected a tools/list result, a tools array or a tool object"),
        ({"resources": []}, "declares resources but no tools", "no 'tools' array and not a single tool object"),
    ],
)
def test_a_document_without_tools(tmp_path: Path, doc: Any, lenient: str, strict: str) -> None:
    path = write(tmp_path / "x.json", doc)
    lists, problems = read_tool_lists([path])
    assert lists == [] and problems[0].file == str(path) and problems[0].message.startswith(lenient)
    with pytest.raises(InputError) as raised:
        read_tool_list(path)
    assert (raised.value.source, raised.value.message) == (str(path), strict)


def test_json_lines_without_any_jsonrpc_message(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "x.jsonl", {"a": 1}, {"b": 2})
    _, problems = read_tool_lists([path])
    assert problems[0].message.startswith("JSON lines without any JSON-RPC message")
    with pytest.raises(InputError, match=rf"^{path}:2: not JSON: "):
        read_tool_list(path)


def test_a_log_without_tools_list_and_a_log_with_several(tmp_path: Path) -> None:
    none = write_lines(tmp_path / "none.jsonl", INITIALIZE, {"jsonrpc": "2.0", "id": 2, "method": "ping"})
    _, problems = read_tool_lists([none])
    assert [(p.source, p.message) for p in problems] == [
        (str(none), "an MCP JSON-RPC log without any tools/list result")
    ]
    several = write_lines(tmp_path / "several.jsonl", LISTED, LISTED)
    assert len(read_tool_lists([several])[0]) == 2
    with pytest.raises(InputError, match=r"2 tools/list results \(lines 1, 2\); give a file that holds one"):
        read_tool_list(several)


def test_an_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path / "t.json", {"tools": [TOOL]})

    def fail(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "read_bytes", fail)
    assert read_tool_lists([path])[1] == [ToolListProblem(file=str(path), message="cannot read: Permission denied")]
    with pytest.raises(InputError) as raised:
        read_tool_list(path)
    assert str(raised.value) == f"{path}: cannot read: Permission denied"


def test_tool_lists_are_values(tmp_path: Path) -> None:
    found = read_one(write(tmp_path / "t.json", {"server": "demo", "tools": [TOOL]}))
    assert found.tools[0]["name"] == "read_notes" and found.tool_pointers == ("/tools/0",)
    assert found.server_name == "demo"
    with pytest.raises(ValueError):
        found.server = "other"  # type: ignore[misc]
