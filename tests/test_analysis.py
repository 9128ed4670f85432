from collections.abc import Iterator

from monitor import SessionMonitor
from monitor.analysis import analyze_records
from monitor.models import AnalysisSummary
from monitor.models._events import ToolCall, ToolResult, UserMessage
from monitor.models._records import Record, RecordError, SessionEnd
from monitor.models._reports import SessionReport


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
