"""Telling input formats apart, and reading a mix of inputs."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from monitor.ingest import InputFormat, RecordError, SessionEnd, detect_format, read_inputs
from monitor.models import ToolCall, UserMessage

RunFactory = Callable[..., dict[str, Any]]
Writer = Callable[..., Path]

USER_LINE = {"kind": "user_message", "session_id": "j1", "text": "hello"}
CALL_LINE = {"kind": "tool_call", "session_id": "j1", "call_id": "c1", "server": "srv", "tool": "lookup"}


def _write_run(path: Path, run: dict[str, Any], *, indent: int | None = 4) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(run, indent=indent), encoding="utf-8")
    return path


# -- detect_format ------------------------------------------------------------------------------------------


def test_detects_native_jsonl(tmp_path: Path, write_jsonl: Writer) -> None:
    path = write_jsonl(tmp_path / "trace.jsonl", [USER_LINE, CALL_LINE])

    assert detect_format(path) is InputFormat.JSONL


def test_detects_native_jsonl_whatever_the_name_and_leading_blank_lines(tmp_path: Path, write_jsonl: Writer) -> None:
    path = write_jsonl(tmp_path / "trace.log", ["", "  ", {"session_id": "s", "kind": "tool_result", "call_id": "c"}])

    assert detect_format(path) is InputFormat.JSONL


def test_detects_agentdojo_run(tmp_path: Path, agentdojo_run: RunFactory) -> None:
    pretty = _write_run(tmp_path / "none.json", agentdojo_run())
    compact = _write_run(tmp_path / "compact.json", agentdojo_run(), indent=None)
    no_suite = agentdojo_run()
    del no_suite["suite_name"]
    only_pipeline = _write_run(tmp_path / "pipeline.json", no_suite)

    assert detect_format(pretty) is InputFormat.AGENTDOJO
    assert detect_format(compact) is InputFormat.AGENTDOJO
    assert detect_format(only_pipeline) is InputFormat.AGENTDOJO


@pytest.mark.parametrize("name", ["runs.tar.gz", "runs.tgz", "runs.tar"])
def test_detects_archives_by_name(tmp_path: Path, name: str, write_archive: Any) -> None:
    path = write_archive(tmp_path / name, {"a/none.json": b"{}"})

    assert detect_format(path) is InputFormat.AGENTDOJO


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"just some text\nover two lines\n",
        b'{"foo": 1}\n',
        b'{"messages": []}',
        b'{"kind": "user_message", "text": "no session id"}\n',
        b"\x00\x01\x02binary",
    ],
    ids=["empty", "text", "other-json", "messages-only", "kind-without-session", "binary"],
)
def test_unknown_content_is_not_detected(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "input.json"
    path.write_bytes(content)

    assert detect_format(path) is None


def test_unreadable_path_is_not_detected(tmp_path: Path) -> None:
    assert detect_format(tmp_path / "missing.jsonl") is None
    assert detect_format(tmp_path) is None  # a folder cannot be opened as a file


# -- read_inputs --------------------------------------------------------------------------------------------


def test_folder_mixing_both_formats(
    tmp_path: Path, write_jsonl: Writer, agentdojo_run: RunFactory, write_archive: Any
) -> None:
    root = tmp_path / "inputs"
    write_jsonl(root / "native" / "trace.jsonl", [USER_LINE, CALL_LINE])
    _write_run(root / "gpt-4o" / "workspace" / "user_task_0" / "none" / "none.json", agentdojo_run())
    write_archive(
        root / "more.tar.gz",
        {"m/banking/user_task_1/none/none.json": json.dumps(agentdojo_run(suite_name="banking")).encode()},
    )
    (root / "notes.txt").write_text("ignored: not a data file")

    records = list(read_inputs([root]))

    assert [r for r in records if isinstance(r, RecordError)] == []
    ends = [r.session_id for r in records if isinstance(r, SessionEnd)]
    assert sorted(ends) == sorted(["j1", "gpt-4o/workspace/user_task_0/none/none", "m/banking/user_task_1/none/none"])
    calls = {r.session_id: r for r in records if isinstance(r, ToolCall)}
    assert calls["j1"].server == "srv"
    assert calls["gpt-4o/workspace/user_task_0/none/none"].server == "agentdojo-workspace"
    assert calls["m/banking/user_task_1/none/none"].server == "agentdojo-banking"
    assert len([r for r in records if isinstance(r, UserMessage)]) == 3


def test_several_paths_are_read_in_order(tmp_path: Path, write_jsonl: Writer, agentdojo_run: RunFactory) -> None:
    run = _write_run(tmp_path / "b" / "first.json", agentdojo_run())
    trace = write_jsonl(tmp_path / "a" / "second.jsonl", [USER_LINE])

    records = list(read_inputs([run, trace]))

    assert [r.session_id for r in records if isinstance(r, SessionEnd)] == ["first", "j1"]


def test_file_of_unknown_format_in_a_folder_is_an_error(tmp_path: Path, write_jsonl: Writer) -> None:
    root = tmp_path / "inputs"
    write_jsonl(root / "a.jsonl", [USER_LINE])
    unknown = root / "b.json"
    unknown.write_text('{"hello": "world"}')

    records = list(read_inputs([root]))

    [error] = [r for r in records if isinstance(r, RecordError)]
    assert error.source == str(unknown)
    assert "--input-format" in error.message
    assert [r.session_id for r in records if isinstance(r, SessionEnd)] == ["j1"]


def test_explicit_format_skips_detection(tmp_path: Path, write_jsonl: Writer) -> None:
    # A first line that detection does not recognise, read as JSONL because the user said so.
    path = write_jsonl(tmp_path / "trace.txt", ["garbage", USER_LINE])

    assert detect_format(path) is None
    records = list(read_inputs([path], InputFormat.JSONL))

    assert [r.source for r in records if isinstance(r, RecordError)] == [f"{path}:1"]
    assert [r.session_id for r in records if isinstance(r, SessionEnd)] == ["j1"]


def test_missing_path_is_an_error_and_the_rest_is_read(tmp_path: Path, write_jsonl: Writer) -> None:
    missing = tmp_path / "does-not-exist.jsonl"
    trace = write_jsonl(tmp_path / "trace.jsonl", [USER_LINE])

    records = list(read_inputs([missing, trace]))

    [error] = [r for r in records if isinstance(r, RecordError)]
    assert error.source == str(missing)
    assert error.message
    assert [r.session_id for r in records if isinstance(r, SessionEnd)] == ["j1"]


def test_explicit_agentdojo_format_reads_archives_inside_a_folder(
    tmp_path: Path, agentdojo_run: RunFactory, write_archive: Any
) -> None:
    """``--input-format agentdojo`` on a folder reads what auto detection reads there, archives included."""
    root = tmp_path / "inputs"
    _write_run(root / "gpt-4o" / "workspace" / "user_task_0" / "none" / "none.json", agentdojo_run())
    write_archive(
        root / "sub" / "more.tar.gz",
        {"m/banking/user_task_1/none/none.json": json.dumps(agentdojo_run(suite_name="banking")).encode()},
    )
    expected = ["gpt-4o/workspace/user_task_0/none/none", "m/banking/user_task_1/none/none"]

    auto = list(read_inputs([root]))
    explicit = list(read_inputs([root], InputFormat.AGENTDOJO))

    assert sorted(r.session_id for r in auto if isinstance(r, SessionEnd)) == expected
    assert [r for r in explicit if isinstance(r, RecordError)] == []
    assert sorted(r.session_id for r in explicit if isinstance(r, SessionEnd)) == expected
