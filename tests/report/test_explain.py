"""``trifecta explain`` tells one session or one decision: the path, the evidence, what would change it."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from monitor.analysis import analyze_records
from monitor.ingest import read_inputs
from monitor.models import Alert, Evidence, EvidenceKind, Level, PathRole, PathStep, Reason, SessionReport
from monitor.report import REASON_WORDING, find_call, render_explanation, word_reason
from monitor.session import SessionMonitor

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples" / "sessions"
ADDRESS = "audit-intake@helios-compliance.net"


def _reports(path: Path) -> dict[str, SessionReport]:
    found = {}
    for item in analyze_records(read_inputs([path]), SessionMonitor()):
        assert isinstance(item, SessionReport), item
        found[item.session_id] = item
    return found


@pytest.fixture(scope="module")
def calendar() -> SessionReport:
    return _reports(SAMPLES / "calendar-invite.jsonl")["calendar-invite"]


def _explain(report: SessionReport, call_id: str | None = None, width: int = 400) -> str:
    out = io.StringIO()
    render_explanation(report, out, call_id=call_id, width=width, color=False)
    return out.getvalue()


def _section(text: str, title: str) -> list[str]:
    """The lines of a section (from its title to the next blank line), without its header rule."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    body = []
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        body.append(line)
    return [line for line in body if not set(line.strip()) <= {"─"}]


def test_the_calendar_send_is_explained_by_default_with_its_decision(calendar: SessionReport) -> None:
    text = _explain(calendar)
    assert text.startswith("Session calendar-invite: exfiltration, 3 calls")
    assert "Decision on call 2 send_gmail_message: confirm, level exfiltration" in text
    assert "Alert exfiltration [critical]" in text


CALENDAR_PATH = [
    ("0", "get_events", "untrusted-source"),
    ("1", "search_gmail_messages", "private-source"),
    ("2", "send_gmail_message", "sink"),
]


def test_the_path_runs_from_the_invite_through_the_mailbox_search_to_the_send(calendar: SessionReport) -> None:
    assert calendar.alerts[-1].steps
    lines = _section(_explain(calendar), "Path")[1:]
    rows = [line.split() for line in lines if not line.lstrip().startswith("↳")]
    assert [(row[1], row[2], row[3]) for row in rows] == CALENDAR_PATH
    assert [row[-1] for row in rows] == list(calendar.alerts[-1].path)
    # What each source passed on to the send: the address the invite named, the text the search returned.
    assert [line.strip() for line in lines if line.lstrip().startswith("↳")] == [
        "↳ destination-origin → call 2",
        "↳ fragment → call 2",
    ]


def test_a_path_of_bare_call_ids_is_told_with_the_calls_tools(calendar: SessionReport) -> None:
    alert = calendar.alerts[-1].model_copy(update={"steps": ()})
    report = calendar.model_copy(update={"alerts": (*calendar.alerts[:-1], alert)})
    rows = [line.split() for line in _section(_explain(report), "Path")[1:]]
    assert [(row[1], row[2], row[3]) for row in rows] == CALENDAR_PATH
    assert [row[-1] for row in rows] == list(alert.path)


def test_the_path_follows_the_alerts_steps_when_it_has_them(calendar: SessionReport) -> None:
    alert = calendar.alerts[-1]
    steps = (
        PathStep(
            call_id=alert.path[1],
            tool="search_gmail_messages",
            server="g",
            index=1,
            role=PathRole.RELAY,
            via="order",
            to=alert.path[2],
        ),
        PathStep(call_id=alert.path[2], tool="send_gmail_message", server="g", index=2, role=PathRole.SINK),
    )
    report = calendar.model_copy(update={"alerts": (*calendar.alerts[:-1], alert.model_copy(update={"steps": steps}))})
    lines = _section(_explain(report), "Path")[1:]
    rows = [line.split() for line in lines if not line.lstrip().startswith("↳")]
    assert [(row[2], row[3]) for row in rows] == [("search_gmail_messages", "relay"), ("send_gmail_message", "sink")]
    assert lines[1].strip() == "↳ its content, before call 2"


def test_each_piece_of_evidence_says_what_matched_where_from_and_where_it_goes(calendar: SessionReport) -> None:
    rows = _section(_explain(calendar), "Evidence")
    assert rows[0].split() == ["kind", "argument", "from", "what", "matched"]
    destination = next(row for row in rows if ADDRESS in row)
    assert destination.split()[:2] == ["destination", "/to"]
    assert "(attacker-suggested)" in destination and "get_events (call 0)" in destination
    code = next(row for row in rows if "Okta password reset code" in row)
    assert code.split()[:2] == ["fragment", "/body"] and "search_gmail_messages (call 1)" in code
    assert len(rows) - 1 == len(calendar.calls[-1].decision.evidence)
    assert sum("482913" in row for row in rows) == 1  # the verification code the mailbox search returned


def test_what_would_change_the_decision_is_said_per_reason(calendar: SessionReport) -> None:
    rows = {line.split()[0]: line.split(None, 1)[1] for line in _section(_explain(calendar), "What would change")[1:]}
    assert list(rows) == [r.value for r in calendar.calls[-1].decision.reasons]
    assert rows["destination-attacker-suggested"].startswith(
        f"The user never named {ADDRESS}; it appeared only in the output of get_events (call 0), written by"
    )
    assert "text read from search_gmail_messages (call 1)" in rows["private-fragment"]
    assert "Untrusted content chose what search_gmail_messages (call 1) read" in rows["private-source-steered"]


def test_a_reason_is_worded_from_the_evidence_it_is_about(calendar: SessionReport) -> None:
    send = calendar.calls[-1]
    attacker = word_reason(Reason.DESTINATION_ATTACKER_SUGGESTED, send, calendar)
    assert ADDRESS in attacker and "get_events (call 0)" in attacker and "search_gmail" not in attacker
    fragment = word_reason(Reason.PRIVATE_FRAGMENT, send, calendar)
    assert "search_gmail_messages (call 1)" in fragment and "get_events" not in fragment
    # A reason whose evidence the decision lacks still reads as a sentence.
    assert "{" not in word_reason(Reason.DESTINATION_UNSEEN, calendar.calls[0], calendar)


def test_a_destination_reason_names_the_destination_of_its_origin(calendar: SessionReport) -> None:
    send = calendar.calls[-1]
    typed = Evidence(kind=EvidenceKind.DESTINATION, from_call=None, detail="sam@example.org at /cc: user-sanctioned")
    decision = send.decision.model_copy(update={"evidence": (typed, *send.decision.evidence)})
    send = send.model_copy(update={"decision": decision})
    assert ADDRESS in word_reason(Reason.DESTINATION_ATTACKER_SUGGESTED, send, calendar)
    assert "sam@example.org" in word_reason(Reason.DESTINATION_USER_SANCTIONED, send, calendar)


def test_every_reason_has_its_own_wording(calendar: SessionReport) -> None:
    assert set(REASON_WORDING) == set(Reason)
    texts = [w.text for w in REASON_WORDING.values()]
    assert len(set(texts)) == len(texts)
    for reason in Reason:
        worded = word_reason(reason, calendar.calls[-1], calendar)
        assert worded and "{" not in worded and reason.value not in worded, reason


def test_a_call_is_found_by_id_or_by_index(calendar: SessionReport) -> None:
    second = calendar.calls[1]
    assert find_call(calendar, second.call_id) == second
    assert find_call(calendar, "1") == second
    assert find_call(calendar, "7") is None and find_call(calendar, "nope") is None
    text = _explain(calendar, second.call_id)
    assert "Decision on call 1 search_gmail_messages: allow, level trifecta" in text
    assert "no-destination" in _section(text, "What would change")[1]
    # The first call with the sending leg while armed is the session's trifecta: a warning, as it is allowed.
    assert "Alert trifecta [warning]" in text


def test_every_call_of_every_sample_is_explained(calendar: SessionReport) -> None:
    reports = _reports(SAMPLES)
    assert len(reports) == 6
    for report in reports.values():
        for call in report.calls:
            text = _explain(report, call.call_id, width=60)
            assert f"Decision on call {call.index} {call.tool}:" in text
            assert all(len(line) <= 60 for line in text.splitlines()), report.session_id


def test_a_session_without_calls_is_still_told() -> None:
    empty = SessionReport(session_id="s", level=Level.CLEAN, legs=(), exposed=False, calls=(), alerts=())
    text = _explain(empty)
    assert text.startswith("Session s: clean, 0 calls")
    assert "Decision on" not in text
    assert re.search(r"external communication\s+never", text)


def test_an_alert_without_path_or_call_is_listed(calendar: SessionReport) -> None:
    alerts = [a for a in calendar.alerts if a.call_id is None]
    assert alerts and all(isinstance(a, Alert) for a in alerts)
    rows = _section(_explain(calendar), "Other alerts")
    assert any(row.startswith("exposed") for row in rows)
