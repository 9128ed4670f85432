"""The ``explain`` command: its output is pinned by a golden file, and a wrong session or call is refused.

When a change to the explanation is intended, regenerate the golden file with::

    UPDATE_GOLDEN=1 pytest tests/cli/test_explain.py
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from monitor.cli._explain import explain

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "explain" / "calendar-invite.txt"
COMMAND = ["samples/sessions/calendar-invite.jsonl", "calendar-invite", "--width", "100"]


def _run(monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str, str]:
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(explain, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_the_calendar_explanation_is_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, err = _run(monkeypatch, *COMMAND)
    assert code == 0, err
    if os.environ.get("UPDATE_GOLDEN") == "1":
        GOLDEN.write_text(out, encoding="utf-8")
    assert GOLDEN.is_file(), f"no {GOLDEN.name}: create it with UPDATE_GOLDEN=1 pytest {Path(__file__).name}"
    assert out == GOLDEN.read_text(encoding="utf-8"), "trifecta explain changed: review the diff"


def test_the_docs_show_the_explanation_as_printed() -> None:
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    command = "$ trifecta explain " + " ".join(COMMAND)
    match = re.search(re.escape(command) + r"\n(.*?)```", page, re.DOTALL)
    assert match is not None, f"docs/cli.md no longer shows `{command}` and its output"
    assert match[1] == GOLDEN.read_text(encoding="utf-8")


def test_the_readme_quotes_the_one_line_of_the_explanation() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quoted = " ".join(line.removeprefix("> ") for line in readme.splitlines() if line.startswith("> "))
    printed = " ".join(GOLDEN.read_text(encoding="utf-8").split())
    assert quoted, "the README quotes no line of trifecta explain"
    assert f"In one line: {quoted}" in printed, "the README's quoted line is not what trifecta explain prints"


def test_an_unknown_session_is_refused_with_the_close_matches(monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, err = _run(monkeypatch, "samples/sessions", "calendar-invit")
    assert code == 2 and out == ""
    assert "error: no session 'calendar-invit' in samples/sessions; close matches: calendar-invite" in err
    code, _, err = _run(monkeypatch, "samples/sessions", "nothing-like-it")
    assert code == 2
    assert "sessions: calendar-benign, calendar-invite, github-benign, github-public-issue, supabase-benign, …" in err


def test_an_unknown_call_is_refused_with_the_sessions_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, err = _run(monkeypatch, "samples/sessions", "calendar-invite", "9")
    assert code == 2 and out == ""
    assert "error: no call '9' in session 'calendar-invite'; calls: 0 (toolu_01G8NPRVdD53X83RZJzzzzgE)" in err
    code, _, err = _run(monkeypatch, "samples/sessions", "calendar-invite", "toolu_01e3nNyjOq9wMxEhh2FDEEtX")
    assert code == 2 and "close matches: toolu_01e3nNyjOq9wMxEhh2FDEEtf" in err


def test_a_call_is_named_by_index_or_id(monkeypatch: pytest.MonkeyPatch) -> None:
    by_index = _run(monkeypatch, "samples/sessions", "calendar-invite", "1")
    by_id = _run(monkeypatch, "samples/sessions", "calendar-invite", "toolu_01OzdmenCkhvMdgaKjIg8xNb")
    assert by_index[0] == 0 and by_index[1] == by_id[1]
    assert "Decision on call 1 search_gmail_messages: allow" in by_index[1]


def test_unreadable_input_is_an_error_named_with_its_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    events = (ROOT / "samples/sessions/calendar-invite.jsonl").read_text(encoding="utf-8").splitlines()
    bad = tmp_path / "mixed.jsonl"
    bad.write_text("\n".join([*events[:2], "{not json", *events[2:]]) + "\n", encoding="utf-8")
    code, out, err = _run(monkeypatch, str(bad), "calendar-invite")
    assert code == 2
    assert f"error: {bad}:3" in err
    assert "Decision on call 2 send_gmail_message: confirm" in out  # everything readable is still explained
