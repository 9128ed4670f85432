"""``monitor.lint._findings``: findings are strict, frozen values; JSON pointer tokens are escaped."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from monitor.lint import LintFinding, LintReport, LintSeverity, escape_pointer_token


def test_finding_values_are_frozen_and_strict() -> None:
    finding = LintFinding(
        id="hint-missing",
        severity=LintSeverity.WARNING,
        file="f.json",
        pointer="/tools/0/annotations/readOnlyHint",
        message="m",
        hint="h",
        fingerprint="x",
    )
    with pytest.raises(ValidationError):
        finding.id = "other"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        LintFinding.model_validate({**finding.model_dump(), "extra": 1})


def test_an_empty_report_exits_zero() -> None:
    report = LintReport()
    assert (report.findings, report.has_errors, report.exit_code) == ((), False, 0)
    assert report.count(LintSeverity.ERROR) == 0


def test_escape_pointer_token() -> None:
    assert escape_pointer_token("a/b~c") == "a~1b~0c"
