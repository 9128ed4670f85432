import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from monitor import SessionMonitor
from monitor.analysis import AnalysisProgress, analyze_records
from monitor.ingest import read_inputs
from monitor.models import (
    AnalysisSummary,
    Record,
    RecordError,
    SessionEnd,
    SessionReport,
    ToolCall,
    ToolResult,
    UserMessage,
)


def many_sessions(n: int) -> Iterator[Record]:
    for i in range(n):
        sid = f"s{i}"
        yield UserMessage(session_id=sid, text="hi")
        yield ToolCall(session_id=sid, call_id="c1", server="srv", tool="read_file", arguments={"path": "a"})
        yield ToolResult(session_id=sid, call_id="c1", result="content " * 20)
        yield SessionEnd(session_id=sid)


def test_sessions_are_forgotten_as_soon_as_they_are_reported() -> None:
    monitor = SessionMonitor()
    count = 0
    for report in analyze_records(many_sessions(500), monitor):
        assert isinstance(report, SessionReport)
        assert monitor.sessions() == []  # memory follows the open sessions, not the ones written out
        count += 1
    assert count == 500


def test_errors_pass_through_and_unended_sessions_are_flushed() -> None:
    records: list[Record] = [
        UserMessage(session_id="a", text="hi"),
        RecordError(source="f:2", message="bad"),
    ]
    out = list(analyze_records(records, SessionMonitor()))
    assert out[0] == RecordError(source="f:2", message="bad")
    assert isinstance(out[1], SessionReport) and out[1].session_id == "a"


def test_summary_counts() -> None:
    summary = AnalysisSummary()
    for report in analyze_records(many_sessions(3), SessionMonitor()):
        assert isinstance(report, SessionReport)
        summary.add(report)
    assert (summary.sessions, summary.calls) == (3, 3)
    assert summary.by_action == {"allow": 3}


# -- an engine failure on one session is that session's error -------------------------------------------------


def _fail_on_session(monkeypatch: pytest.MonkeyPatch, session_id: str) -> None:
    """Make the engine raise on every call of one session (a stand-in for any bug in it)."""
    real = SessionMonitor._before_call

    def before_call(self: SessionMonitor, state: Any, *args: Any) -> Any:
        if state.session_id == session_id:
            raise ZeroDivisionError("planted")
        return real(self, state, *args)

    monkeypatch.setattr(SessionMonitor, "_before_call", before_call)


def test_an_engine_failure_is_the_sessions_error_and_the_others_go_on(monkeypatch: pytest.MonkeyPatch) -> None:
    _fail_on_session(monkeypatch, "s1")

    out = list(analyze_records(many_sessions(3), SessionMonitor()))

    errors = [r for r in out if isinstance(r, RecordError)]
    assert [e.source for e in errors] == ["input: session s1"]
    assert errors[0].message == (
        "the engine failed on its tool_call 'c1': ZeroDivisionError: planted; judged without it (monitor-error)"
    )
    reports = [r for r in out if isinstance(r, SessionReport)]
    assert [r.session_id for r in reports] == ["s0", "s1", "s2"]
    assert [len(r.calls) for r in reports] == [1, 0, 1]


def test_an_engine_failure_names_the_record_it_failed_on(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _fail_on_session(monkeypatch, "s1")
    path = tmp_path / "t.jsonl"
    path.write_text(
        "\n".join(json.dumps(r.model_dump(mode="json")) for r in many_sessions(2) if not isinstance(r, SessionEnd))
        + "\n",
        encoding="utf-8",
    )

    out = list(analyze_records(read_inputs([path]), SessionMonitor()))

    [error] = [r for r in out if isinstance(r, RecordError)]
    lines = path.read_text(encoding="utf-8").splitlines()
    first_call = next(n for n, line in enumerate(lines, 1) if '"s1"' in line and '"tool_call"' in line)
    assert error.source == f"{path}:{first_call}: session s1"
    assert "ZeroDivisionError: planted" in error.message
    assert sorted(r.session_id for r in out if isinstance(r, SessionReport)) == ["s0", "s1"]


def test_a_failure_to_end_a_session_is_its_error(monkeypatch: pytest.MonkeyPatch) -> None:
    real = SessionMonitor.end_session

    def end_session(self: SessionMonitor, session_id: str) -> SessionReport:
        if session_id == "s0":
            raise RuntimeError("cannot report")
        return real(self, session_id)

    monkeypatch.setattr(SessionMonitor, "end_session", end_session)

    out = list(analyze_records(many_sessions(2), SessionMonitor()))

    assert [type(r).__name__ for r in out] == ["RecordError", "SessionReport"]
    assert "RuntimeError: cannot report" in out[0].message  # type: ignore[union-attr]


def test_without_a_failure_nothing_is_added() -> None:
    out = list(analyze_records(many_sessions(2), SessionMonitor()))
    assert all(isinstance(r, SessionReport) for r in out)


@pytest.mark.parametrize("debug", [False, True])
def test_analyze_reports_an_engine_failure_and_exits_2(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, debug: bool
) -> None:
    from click.testing import CliRunner

    from monitor.cli import main

    _fail_on_session(monkeypatch, "s1")
    path = tmp_path / "t.jsonl"
    path.write_text(
        "\n".join(json.dumps(r.model_dump(mode="json")) for r in many_sessions(3) if not isinstance(r, SessionEnd))
        + "\n",
        encoding="utf-8",
    )

    result = CliRunner().invoke(main, ["analyze", str(path), "--format", "jsonl", *(["--debug"] if debug else [])])

    assert result.exit_code == 2
    assert [json.loads(line)["session_id"] for line in result.stdout.splitlines()] == ["s0", "s1", "s2"]
    line = next(
        n
        for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if '"s1"' in text and '"c1"' in text
    )
    said = f"error: {path}:{line}: session s1: the engine failed on its tool_call 'c1': ZeroDivisionError: planted"
    assert said in result.stderr
    assert ("Traceback (most recent call last)" in result.stderr) == debug


def test_a_session_s_source_is_the_file_its_first_record_came_from() -> None:
    stream = read_inputs([])

    def records() -> Iterator[Record]:
        for index, name in enumerate(["first.jsonl", "second.jsonl"]):
            stream.current = name
            yield UserMessage(session_id="s", text=f"message {index}")
            stream.current = name
            yield UserMessage(session_id=f"only-in-{name}", text="hi")

    stream._records = records()
    progress = AnalysisProgress()
    reports = [r for r in analyze_records(stream, SessionMonitor(), progress) if isinstance(r, SessionReport)]
    assert {r.session_id: r.source for r in reports} == {
        "s": "first.jsonl",
        "only-in-first.jsonl": "first.jsonl",
        "only-in-second.jsonl": "second.jsonl",
    }
    assert (progress.records, progress.sessions, progress.errors) == (4, 3, 0)


def test_the_batch_collector_settings_hold_inside_and_are_put_back_after() -> None:
    import gc

    from monitor.analysis import collect_for_batch

    before, frozen = gc.get_threshold(), gc.get_freeze_count()
    kept = [object() for _ in range(10)]
    with collect_for_batch():
        assert gc.get_threshold()[0] >= 50_000 and gc.get_freeze_count() > frozen
        out = list(analyze_records(many_sessions(3), SessionMonitor()))
    assert gc.get_threshold() == before and gc.get_freeze_count() == frozen
    assert [r.session_id for r in out if isinstance(r, SessionReport)] == ["s0", "s1", "s2"]
    assert len(kept) == 10


def test_batches_on_two_threads_leave_the_collector_as_they_found_it() -> None:
    """A Dask worker with several threads runs parts at once: the first batch in sets the collector, the last
    one out restores it, whatever the order they end in."""
    import gc
    import threading

    from monitor.analysis import collect_for_batch

    before = gc.get_threshold()
    first_in, second_in, first_may_leave = threading.Event(), threading.Event(), threading.Event()

    def first() -> None:
        with collect_for_batch():
            first_in.set()
            first_may_leave.wait(10)

    worker = threading.Thread(target=first)
    worker.start()
    assert first_in.wait(10)
    with collect_for_batch():
        second_in.set()
        first_may_leave.set()
        worker.join(10)
        assert gc.get_threshold()[0] >= 50_000  # the first batch left; this one still runs with the settings
    assert gc.get_threshold() == before
