import io

from monitor import SessionMonitor
from monitor.models import AnalysisSummary
from monitor.models._legs import Leg
from monitor.report import TableWriter, format_leg_letters


def test_format_legs() -> None:
    assert format_leg_letters((Leg.PRIVATE_DATA, Leg.EXTERNAL_COMMUNICATION)) == "P-X"
    assert format_leg_letters(()) == "---"


def test_row_names_the_call_that_raised_the_level_and_keeps_long_ids_whole() -> None:
    m = SessionMonitor()
    sid = "model/suite/user_task_1/important_instructions/injection_task_10_with_a_very_long_name"
    m.observe_user_message(sid, "hi")
    m.before_call(sid, "srv", "read_file", {"path": "a"}, "c1")
    m.after_call(sid, "c1", "text")
    out = io.StringIO()
    writer = TableWriter(out, color=False)
    report = m.end_session(sid)
    writer.write_session(report)
    summary = AnalysisSummary()
    summary.add(report)
    writer.close(summary)
    header, row = out.getvalue().splitlines()[:2]
    assert header.split() == ["level", "legs", "calls", "confirm", "deny", "raised", "by", "session"]
    assert row.split()[:5] == ["armed", "PU-", "1", "0", "0"]
    assert "read_file (c1)" in row and row.endswith(sid)
    assert "1 sessions" in out.getvalue()
    assert "\x1b[" not in out.getvalue()
