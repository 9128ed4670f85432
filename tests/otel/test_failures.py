"""Internal failures: counted by kind, logged once per kind, told to the internal-errors counter."""

from __future__ import annotations

import logging

import pytest

from monitor.otel._failures import Failures


def test_failures_are_counted_by_kind_and_logged_once_per_kind(caplog: pytest.LogCaptureFixture) -> None:
    counted: list[tuple[str, int]] = []
    failures = Failures(lambda kind, count: counted.append((kind, count)))
    caplog.set_level(logging.DEBUG, logger="monitor.otel")
    for _ in range(3):
        try:
            raise RuntimeError("injected")
        except RuntimeError:
            failures.fail("on_end")
    failures.add("engine", 2, "Traceback: the engine's")
    failures.add("engine", 1, "")
    assert failures.read() == {"on_end": 3, "engine": 3}
    assert counted == [("on_end", 1)] * 3 + [("engine", 2), ("engine", 1)]
    logged = [r for r in caplog.records if r.name == "monitor.otel"]
    assert len(logged) == 2  # once per kind
    assert logged[0].exc_info is not None and "internal error in on_end" in logged[0].getMessage()
    assert "Traceback: the engine's" in logged[1].getMessage()


def test_a_failing_counter_is_never_raised() -> None:
    def broken(kind: str, count: int) -> None:
        raise RuntimeError("the meter failed")

    failures = Failures(broken)
    failures.fail("on_start")  # no exception
    assert failures.read() == {"on_start": 1}
