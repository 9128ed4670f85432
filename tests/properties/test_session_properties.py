"""Properties of the session engine that hold for every session, checked on drawn sessions.

See docs/design.md, "The security invariant" and "The session engine".

- Legs, levels and alerts never go down over a session.
- Hints and labels an untrusted server gives (tool annotations, result-level labels) never lower risk: every call's
  action, level and legs are at least what the same session gets with no hints at all.
- Calls that touch none of the session's data and destinations never turn a ``confirm`` (or ``deny``) into a
  weaker answer.
- Decisions do not depend on how sessions interleave: several sessions driven together (by hypothesis-chosen
  interleavings on one thread, and by real threads) get the same decisions, alerts and levels as one by one.

Budgets: ``TRIFECTA_PROPERTIES=long`` runs 2,000 examples per property instead of the CI default (docs/testing.md).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from properties.sessions import (
    HINTS,
    POLICIES,
    POSTURES,
    PROFILES,
    RESULT_LABELS,
    SERVER,
    SESSIONS,
    TOOL_NAMES,
    Driver,
    Step,
    legs_of,
    new_monitor,
    replay,
    tool_definitions,
    unrelated_calls,
    with_unrelated,
)

from monitor import Action, Policy, SessionMonitor
from monitor.models import Posture, SessionReport
from monitor.testing import RecordingSink

PROFILE = PROFILES[os.environ.get("TRIFECTA_PROPERTIES", "ci")]


# -- legs never decrease -------------------------------------------------------------------------------------------


@PROFILE
@given(
    steps=SESSIONS,
    posture=POSTURES,
    policy=POLICIES,
    trusted=st.booleans(),
    hints=st.dictionaries(st.sampled_from(TOOL_NAMES), HINTS),
)
def test_legs_levels_and_alerts_never_go_down(
    steps: list[Step], posture: Posture, policy: Policy, trusted: bool, hints: dict[str, dict[str, Any]]
) -> None:
    monitor = new_monitor(posture, policy)
    monitor.register_tools("s", SERVER, tool_definitions(hints), trusted=trusted)
    driver = Driver(monitor, "s")
    before = monitor.session("s")
    for i, step in enumerate([*steps, None]):
        if step is None:
            driver.finish()
        else:
            driver.feed(i, step)
        after = monitor.session("s")
        assert set(after.legs) >= set(before.legs), (i, step)
        assert after.level.rank >= before.level.rank, (i, step)
        assert list(after.alerts[: len(before.alerts)]) == list(before.alerts), (i, step)
        for call in after.calls[len(before.calls) :]:
            assert call.decision.legs_before >= frozenset(before.legs), (i, step)
        before = after


# -- untrusted hints and labels never lower risk -------------------------------------------------------------------


@PROFILE
@given(
    steps=SESSIONS,
    posture=POSTURES,
    policy=POLICIES,
    hints=st.dictionaries(st.sampled_from(TOOL_NAMES), HINTS),
    labels=st.lists(RESULT_LABELS, min_size=15, max_size=15).map(lambda drawn: dict(enumerate(drawn))),
)
def test_untrusted_hints_and_labels_never_lower_risk(
    steps: list[Step],
    posture: Posture,
    policy: Policy,
    hints: dict[str, dict[str, Any]],
    labels: dict[int, dict[str, bool]],
) -> None:
    bare, hinted = new_monitor(posture, policy), new_monitor(posture, policy)
    bare.register_tools("s", SERVER, tool_definitions(), trusted=False)
    hinted.register_tools("s", SERVER, tool_definitions(hints), trusted=False)
    without = replay(bare, "s", steps, labels={})
    with_hints = replay(hinted, "s", steps, labels=labels)
    for call_id in without.order:
        plain, labelled = without.decisions[call_id], with_hints.decisions[call_id]
        assert labelled.action.rank >= plain.action.rank, (call_id, plain, labelled)
        assert labelled.level.rank >= plain.level.rank, (call_id, plain, labelled)
        assert labelled.legs_call >= plain.legs_call, (call_id, plain, labelled)
        assert labelled.legs_before >= plain.legs_before, (call_id, plain, labelled)
    assert legs_of(hinted, "s") >= legs_of(bare, "s")
    assert hinted.session("s").level.rank >= bare.session("s").level.rank


# -- unrelated calls never weaken a decision -----------------------------------------------------------------------


@PROFILE
@given(
    steps=SESSIONS,
    posture=POSTURES,
    policy=POLICIES,
    insertions=st.lists(st.tuples(st.integers(0, 14), unrelated_calls()), min_size=1, max_size=4),
)
def test_unrelated_calls_never_turn_a_confirm_into_allow(
    steps: list[Step], posture: Posture, policy: Policy, insertions: list[tuple[int, Step]]
) -> None:
    original = replay(new_monitor(posture, policy), "s", steps)
    extended = replay(new_monitor(posture, policy), "s", with_unrelated(steps, insertions))
    for call_id in original.order:
        before, after = original.decisions[call_id], extended.decisions[call_id]
        if before.action is not Action.ALLOW:
            assert after.action.rank >= before.action.rank, (call_id, before, after)


# -- decisions do not depend on interleaving -----------------------------------------------------------------------

SEVERAL_SESSIONS = st.lists(SESSIONS, min_size=2, max_size=4)


def session_view(monitor: SessionMonitor, session_id: str) -> tuple[Any, ...]:
    """What a host sees of one session: levels, legs, every call's decision, every alert."""
    report: SessionReport = monitor.session(session_id)
    return (report.level, frozenset(report.legs), [c.decision for c in report.calls], list(report.alerts))


def sink_view(sink: RecordingSink, session_id: str) -> tuple[list[Any], list[Any], list[Any]]:
    """What a sink was pushed about one session, in order."""
    return (
        [n.decision for n in sink.decisions if n.session_id == session_id],
        [n.alert for n in sink.alerts if n.session_id == session_id],
        [(n.level, n.legs) for n in sink.levels if n.session_id == session_id],
    )


def one_by_one(
    sessions: Sequence[list[Step]], posture: Posture, policy: Policy
) -> tuple[SessionMonitor, RecordingSink]:
    """Every session replayed in turn on one monitor."""
    sink = RecordingSink()
    monitor = new_monitor(posture, policy, sink=sink)
    for n, steps in enumerate(sessions):
        replay(monitor, f"s{n}", steps)
    return monitor, sink


@PROFILE
@given(sessions=SEVERAL_SESSIONS, posture=POSTURES, policy=POLICIES, data=st.data())
def test_interleaved_sessions_decide_as_one_by_one(
    sessions: list[list[Step]], posture: Posture, policy: Policy, data: st.DataObject
) -> None:
    """A hypothesis-chosen interleaving of the sessions' steps on one thread (shrinkable, reproducible)."""
    expected, expected_sink = one_by_one(sessions, posture, policy)
    sink = RecordingSink()
    monitor = new_monitor(posture, policy, sink=sink)
    drivers = [Driver(monitor, f"s{n}") for n in range(len(sessions))]
    remaining = [list(enumerate(steps)) for steps in sessions]
    while any(remaining):
        n = data.draw(st.sampled_from([k for k, left in enumerate(remaining) if left]))
        drivers[n].feed(*remaining[n].pop(0))
        if not remaining[n]:
            drivers[n].finish()
    for n in range(len(sessions)):
        assert session_view(monitor, f"s{n}") == session_view(expected, f"s{n}"), n
        assert sink_view(sink, f"s{n}") == sink_view(expected_sink, f"s{n}"), n


@contextmanager
def frequent_thread_switches() -> Iterator[None]:
    """Make the interpreter switch threads as often as it can, so that the sessions' operations interleave."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(interval)


@PROFILE
@given(sessions=SEVERAL_SESSIONS, posture=POSTURES, policy=POLICIES)
def test_sessions_driven_from_threads_decide_as_one_by_one(
    sessions: list[list[Step]], posture: Posture, policy: Policy
) -> None:
    """One thread per session, started together; each session gets what it gets alone."""
    expected, expected_sink = one_by_one(sessions, posture, policy)
    sink = RecordingSink()
    monitor = new_monitor(posture, policy, sink=sink)
    start = threading.Barrier(len(sessions))
    failures: list[BaseException] = []

    def drive(n: int) -> None:
        try:
            start.wait()
            replay(monitor, f"s{n}", sessions[n])
        except BaseException as exc:  # reported below, on the test's thread
            failures.append(exc)

    threads = [threading.Thread(target=drive, args=(n,)) for n in range(len(sessions))]
    with frequent_thread_switches():
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert not failures, failures
    assert monitor.internal_errors == 0 and monitor.sink_errors == 0
    for n in range(len(sessions)):
        assert session_view(monitor, f"s{n}") == session_view(expected, f"s{n}"), n
        assert sink_view(sink, f"s{n}") == sink_view(expected_sink, f"s{n}"), n
