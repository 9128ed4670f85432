"""Properties of every reader and of the engine, over arbitrary mutations of valid records (hypothesis).

For each input format: a valid session whose one record is mutated (any JSON value put anywhere in it, keys
deleted, the line cut short, arbitrary bytes) is read, next to an untouched *sentinel* session, by the
format's reader and the engine. Nothing raises, the engine never fails, and the sentinel is reported with
all its calls. The engine alone: arbitrary JSON arguments and results never make it fail.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.fuzz_seeds import SEEDS, analyse, sentinel_calls, write_case

from monitor.ingest import InputFormat, read_tool_lists
from monitor.lint import lint_paths
from monitor.session import SessionMonitor

SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=25,
)


def _slots(value: Any) -> list[tuple[Any, Any]]:
    out: list[tuple[Any, Any]] = []
    stack = [value]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, child in items:
            out.append((node, key))
            stack.append(child)
    return out


@st.composite
def mutated_line(draw: st.DrawFn, record: dict[str, Any]) -> str:
    """One record, mutated: a value replaced by any JSON, a key deleted, or its text cut or garbled."""
    value = json.loads(json.dumps(record))
    how = draw(st.sampled_from(["replace", "replace", "delete", "cut", "garble", "whole"]))
    slots = _slots(value)
    if how == "whole":
        return json.dumps(draw(JSON))
    if how in ("replace", "delete") and slots:
        parent, key = draw(st.sampled_from(slots))
        if how == "replace":
            parent[key] = draw(JSON)
        else:
            del parent[key]
    text = json.dumps(value)
    if how == "cut":
        text = text[: draw(st.integers(0, len(text)))]
    elif how == "garble":
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.text(max_size=5)) + text[at:]
    return text.replace("\n", " ")


@pytest.mark.parametrize("fmt", list(SEEDS))
def test_sentinels_are_read_whole(tmp_path: Path, fmt: InputFormat) -> None:
    """The property below relies on this: each unmutated seed gives its session with all its calls."""
    lines = [json.dumps(r) for r in SEEDS[fmt]("zz")]
    sessions, monitor = analyse([write_case(tmp_path / "z", "zz", fmt, lines)], fmt)
    assert sessions == {"zz": sentinel_calls(fmt)} and monitor.internal_errors == 0


@pytest.mark.parametrize("fmt", list(SEEDS))
@SETTINGS
@given(data=st.data())
def test_a_mutated_record_never_raises_and_the_session_after_it_is_kept(
    tmp_path_factory: pytest.TempPathFactory, fmt: InputFormat, data: st.DataObject
) -> None:
    folder = tmp_path_factory.mktemp("case")
    records = SEEDS[fmt]("aa")
    target = data.draw(st.integers(0, len(records) - 1))
    lines = [json.dumps(r) for r in records]
    lines[target] = data.draw(mutated_line(records[target]))
    sentinel = [json.dumps(r) for r in SEEDS[fmt]("zz")]
    paths = [write_case(folder / "a", "aa", fmt, lines), write_case(folder / "z", "zz", fmt, sentinel)]
    if fmt is InputFormat.AGENTDOJO:
        paths = [p.parent for p in paths]

    sessions, monitor = analyse(paths, fmt)

    assert monitor.internal_errors == 0
    assert sessions.get("zz") == sentinel_calls(fmt)


@pytest.mark.parametrize("fmt", list(SEEDS))
@SETTINGS
@given(content=st.binary(max_size=300))
def test_any_bytes_never_raise(tmp_path_factory: pytest.TempPathFactory, fmt: InputFormat, content: bytes) -> None:
    path = tmp_path_factory.mktemp("bytes") / ("x.json" if fmt is InputFormat.AGENTDOJO else "x.jsonl")
    path.write_bytes(content)

    _, monitor = analyse([path], fmt)
    read_tool_lists([path])

    assert monitor.internal_errors == 0


TOOLS = {
    "tools": [
        {
            "name": "send_email",
            "description": "Send an email.",
            "inputSchema": {"type": "object", "properties": {"to": {"type": "string"}}},
            "annotations": {"readOnlyHint": False, "openWorldHint": True},
        }
    ]
}


@SETTINGS
@given(data=st.data())
def test_a_mutated_tool_list_never_raises_and_the_next_file_is_read(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    folder = tmp_path_factory.mktemp("tools")
    (folder / "a.json").write_text(data.draw(mutated_line(TOOLS)), encoding="utf-8", errors="surrogatepass")
    (folder / "b.json").write_text(json.dumps(TOOLS), encoding="utf-8")

    lists, _ = read_tool_lists([folder / "a.json", folder / "b.json"])
    report = lint_paths([folder / "a.json"])
    monitor = SessionMonitor()
    for i, tool_list in enumerate(lists):
        monitor.register_tools(f"s{i}", tool_list.server_name, list(tool_list.tools))

    assert report is not None
    assert monitor.internal_errors == 0
    assert [len(t.tools) for t in lists if t.file.endswith("b.json")] == [1]


@SETTINGS
@given(arguments=st.dictionaries(st.text(max_size=10), JSON, max_size=5), result=JSON, server=st.text(max_size=8))
def test_the_engine_never_fails_on_arbitrary_arguments_and_results(
    arguments: dict[str, Any], result: Any, server: str
) -> None:
    monitor = SessionMonitor()
    monitor.observe_user_message("s", "send the notes to bob@corp.example")
    monitor.register_tools("s", server or "srv", [{"name": "send", "inputSchema": arguments}])
    first = monitor.before_call("s", server or "srv", "read_notes", arguments, call_id="c1")
    monitor.after_call("s", first.call_id, result)
    monitor.before_call("s", server or "srv", "send_email", arguments, call_id="c2")
    monitor.end_session("s")

    assert monitor.internal_errors == 0
