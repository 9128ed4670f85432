"""Every input that once crashed a reader or the engine (``tests/fuzz/corpus/<format>/``), replayed.

Each file is read with its format's reader and the engine, next to an untouched sentinel session: nothing
raises, the engine never fails, the sentinel is reported with all its calls, and the bad file is never
taken in silence (it gives an error naming it, or a session).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support.fuzz_seeds import SEEDS, analyse, sentinel_calls, write_case

from monitor.ingest import InputFormat, RecordError, read_inputs, read_tool_lists
from monitor.lint import lint_paths
from monitor.session import SessionMonitor

CORPUS = Path(__file__).parent / "corpus"
CASES = sorted(p for p in CORPUS.rglob("*") if p.is_file())


def test_the_corpus_covers_every_format() -> None:
    assert {p.parent.name for p in CASES} == {*(f.value for f in SEEDS), "toolslist"}


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.parent.name != "toolslist"], ids=lambda c: f"{c.parent.name}/{c.name}"
)
def test_a_corpus_case_is_read_without_a_crash_and_the_next_session_is_kept(tmp_path: Path, case: Path) -> None:
    fmt = InputFormat(case.parent.name)
    bad = tmp_path / "a" / ("aa.json" if fmt is InputFormat.AGENTDOJO else "aa.jsonl")
    bad.parent.mkdir()
    shutil.copyfile(case, bad)
    sentinel = write_case(tmp_path / "z", "zz", fmt, [json.dumps(r) for r in SEEDS[fmt]("zz")])
    paths = [bad.parent, sentinel.parent] if fmt is InputFormat.AGENTDOJO else [bad, sentinel]

    sessions, monitor = analyse(paths, fmt)
    errors = [r for r in read_inputs([paths[0]], fmt) if isinstance(r, RecordError)]

    assert monitor.internal_errors == 0
    assert sessions.get("zz") == sentinel_calls(fmt)
    assert any(str(bad) in e.source for e in errors) or set(sessions) - {"zz"}


@pytest.mark.parametrize("case", [c for c in CASES if c.parent.name == "toolslist"], ids=lambda c: c.name)
def test_a_corpus_tool_list_is_read_without_a_crash(case: Path) -> None:
    lists, problems = read_tool_lists([case])
    report = lint_paths([case])
    monitor = SessionMonitor()
    for i, tool_list in enumerate(lists):
        monitor.register_tools(f"s{i}", tool_list.server_name, list(tool_list.tools))

    assert monitor.internal_errors == 0
    assert problems or lists
    assert report is not None
