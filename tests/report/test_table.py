import io

from monitor import SessionMonitor
from monitor.models import Action, AnalysisSummary, Leg, Level, SessionReport
from monitor.report import TableWriter, format_leg_letters
from monitor.report._table import shorten_call_id, shorten_source

LONG_CALL_ID = "toolu_01e3nNyjOq9wMxEhh2FDEEtf"
LONG_SOURCE = "/srv/traces/2026/12/01/team-payments/claude-code/calendar-invite.jsonl"


def _report(sid: str, call_id: str = "c1", source: str | None = None) -> SessionReport:
    m = SessionMonitor()
    m.observe_user_message(sid, "hi")
    m.before_call(sid, "srv", "read_file", {"path": "a"}, call_id)
    m.after_call(sid, call_id, "text")
    report = m.end_session(sid)
    return report.model_copy(update={"source": source})


def _render(report: SessionReport, *, wide: bool = False, summary: AnalysisSummary | None = None) -> str:
    out = io.StringIO()
    writer = TableWriter(out, color=False, wide=wide)
    writer.write_session(report)
    if summary is None:
        summary = AnalysisSummary()
        summary.add(report)
    writer.close(summary)
    return out.getvalue()


def test_format_legs() -> None:
    assert format_leg_letters((Leg.PRIVATE_DATA, Leg.EXTERNAL_COMMUNICATION)) == "P-X"
    assert format_leg_letters(()) == "---"


def test_row_names_the_call_that_raised_the_level_and_keeps_long_ids_whole() -> None:
    sid = "model/suite/user_task_1/important_instructions/injection_task_10_with_a_very_long_name"
    text = _render(_report(sid, source="traces/a.jsonl"))
    header, rule, row = text.splitlines()[:3]
    assert header.split() == ["level", "legs", "calls", "confirm", "deny", "raised", "by", "source", "session"]
    assert set(rule) == {"─"}
    assert row.split()[:5] == ["armed", "PUX", "1", "0", "0"]
    assert "read_file (c1)" in row and "traces/a.jsonl" in row and row.endswith(sid)
    assert "1 sessions" in text and "shown" not in text
    assert "\x1b[" not in text


def test_long_call_ids_and_sources_are_shortened_visibly_and_whole_with_wide() -> None:
    report = _report("s", call_id=LONG_CALL_ID, source=LONG_SOURCE)
    row = _render(report).splitlines()[2]
    assert LONG_CALL_ID not in row and LONG_SOURCE not in row
    assert f"read_file ({shorten_call_id(LONG_CALL_ID)})" in row and "…" in shorten_call_id(LONG_CALL_ID)
    assert shorten_source(LONG_SOURCE) in row and shorten_source(LONG_SOURCE).endswith("/calendar-invite.jsonl")
    wide = _render(report, wide=True).splitlines()[2]
    assert f"read_file ({LONG_CALL_ID})" in wide and LONG_SOURCE in wide and "…" not in wide


def test_shortening_keeps_what_fits_and_marks_what_it_cuts() -> None:
    assert shorten_call_id("c1") == "c1"
    assert shorten_call_id("x" * 16) == "x" * 16
    short = shorten_call_id("abcdefghijklmnopqrstuvwxyz")
    assert len(short) == 16 and short == "abcdefghij…vwxyz"
    assert shorten_source("a/b.jsonl") == "a/b.jsonl"
    assert shorten_source("d" * 26 + ".jsonl") == "d" * 26 + ".jsonl"  # exactly the width: whole
    assert shorten_source("/very/long/path/to/some/folder/of/traces/x.jsonl", 24) == "…/of/traces/x.jsonl"
    name = "n" * 40 + ".jsonl"
    assert shorten_source(f"/d/{name}", 20) == "…" + name[-19:]


def test_the_totals_say_how_many_sessions_were_shown_when_some_were_not() -> None:
    report = _report("s")
    summary = AnalysisSummary()
    summary.add(report)
    summary.add(report)
    text = _render(report, summary=summary)
    assert "2 sessions (" in text
    assert "1 of 2 sessions shown" in text


def test_a_table_fitted_to_a_terminal_width_keeps_every_line_within_it() -> None:
    report = _report("model/suite/user_task_1", call_id=LONG_CALL_ID, source=LONG_SOURCE)
    for width in (136, 120, 100):
        out = io.StringIO()
        writer = TableWriter(out, color=False, width=width)
        writer.write_session(report)
        table = out.getvalue().splitlines()
        assert all(len(line) <= width for line in table), (width, max(map(len, table)))
        assert table[2].rstrip().endswith("model/suite/user_task_1") and "…" in table[2]  # the session id stays whole
    # Output that is no terminal keeps the designed widths, the session id on one line however long.
    unfitted = _render(_report("s" * 150, source=LONG_SOURCE)).splitlines()
    assert unfitted[2].endswith("s" * 150) and shorten_source(LONG_SOURCE) in unfitted[2]


def test_a_narrow_terminal_wraps_the_session_id_and_the_tool_instead_of_cutting_them() -> None:
    sid = "model/suite/user_task_1/important_instructions/injection_task_10"
    report = _report(sid, call_id="c1", source=LONG_SOURCE)
    report = report.model_copy(
        update={"calls": (report.calls[0].model_copy(update={"tool": "a_tool_with_a_long_name"}),)}
    )
    out = io.StringIO()
    writer = TableWriter(out, color=False, width=80)
    writer.write_session(report)
    summary = AnalysisSummary()
    summary.add(report)
    writer.close(summary)
    lines = out.getvalue().splitlines()
    assert all(len(line) <= 80 for line in lines), max(map(len, lines))
    row = lines[2:]
    start = row[0].index("model/")
    assert "".join(line[start:].strip() for line in row if line[start:].strip()).startswith(sid)
    raised = row[0].index("a_tool")
    pieces = [line[raised:start].split()[0] for line in row if line[raised:start].strip()]
    assert "".join(pieces).startswith("a_tool_with_a_long_name(c1)")
    assert "…" not in "".join(pieces)


def test_a_trifecta_session_nothing_was_asked_in_is_not_painted_as_a_stopped_one() -> None:
    base = _report("s")
    allowed = base.model_copy(update={"level": Level.TRIFECTA})
    call = base.calls[0]
    asked = allowed.model_copy(
        update={
            "calls": (
                call.model_copy(update={"decision": call.decision.model_copy(update={"action": Action.CONFIRM})}),
            )
        }
    )

    def level_cell(report: SessionReport) -> str:
        out = io.StringIO()
        TableWriter(out, color=True).write_session(report)
        row = out.getvalue().splitlines()[2]
        return row[: row.index("trifecta")]

    assert level_cell(allowed).endswith("\x1b[33m")  # yellow
    assert level_cell(asked).endswith("\x1b[1;31m")  # bold red


def test_a_trifecta_session_is_yellow_only_when_every_known_action_was_allow() -> None:
    from monitor.models import Action, Level
    from monitor.report import style_level
    from monitor.report._table_style import ALLOWED_TRIFECTA_STYLE, LEVEL_STYLE

    assert style_level(Level.TRIFECTA, [Action.ALLOW, Action.ALLOW]) == ALLOWED_TRIFECTA_STYLE
    assert style_level(Level.TRIFECTA, [Action.ALLOW, Action.CONFIRM]) == LEVEL_STYLE[Level.TRIFECTA]
    assert style_level(Level.TRIFECTA, []) == LEVEL_STYLE[Level.TRIFECTA]  # nothing known: no reassurance
