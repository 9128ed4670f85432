"""``analyze --jobs N`` as a library call: the same items in the same order as one process, a crashed worker is
its part's error (the rest still reported), warnings once, tracebacks not doubled."""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

import pytest

from monitor.analysis import AnalysisProgress, analyze_records
from monitor.errors import MonitorWarning
from monitor.ingest import InputFormat, read_inputs
from monitor.models import Posture, RecordError, SessionReport
from monitor.scale import EngineSpec, analyze_in_processes, analyze_paths
from monitor.session import MonitorConfig, SessionMonitor
from tests.scale.helpers import SAMPLES, as_data


def _single(paths: list[Path], spec: EngineSpec) -> list[tuple[str, Any]]:
    return as_data(analyze_records(read_inputs(paths), spec.build_monitor()))


@pytest.mark.parametrize("posture", [Posture.BALANCED, Posture.STRICT])
def test_two_processes_give_what_one_gives(mixed_inputs: list[Path], posture: Posture) -> None:
    spec = EngineSpec(MonitorConfig(posture=posture))
    progress = AnalysisProgress()

    got = as_data(analyze_in_processes(mixed_inputs, InputFormat.AUTO, spec, 2, progress))

    want = _single(mixed_inputs, spec)
    assert got == want
    assert sum(kind == "error" for kind, _ in want) >= 5  # the bad inputs are there, in their places
    assert progress.sessions == sum(kind == "session" for kind, _ in want)
    assert progress.errors == sum(kind == "error" for kind, _ in want)
    assert progress.records == sum(1 for _ in read_inputs(mixed_inputs))


def test_the_unreadable_inputs_are_errors_and_the_rest_is_analysed(mixed_inputs: list[Path]) -> None:
    got = list(analyze_paths(mixed_inputs, InputFormat.AUTO, EngineSpec(), jobs=2))

    errors = [e for e in got if isinstance(e, RecordError)]
    sources = [e.source for e in errors]
    assert str(mixed_inputs[2]) in sources  # the missing file
    assert any(e.source == str(mixed_inputs[4]) and "damaged" in e.message for e in errors)
    assert any(e.source == str(mixed_inputs[3]) and "cannot tell the input format" in e.message for e in errors)
    sessions = [r for r in got if isinstance(r, SessionReport)]
    assert {r.source for r in sessions} >= {str(p) for p in (SAMPLES / "sessions").glob("*.jsonl")}


def test_a_crashed_worker_is_its_parts_error_and_the_other_parts_are_reported(
    mixed_inputs: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = SessionMonitor.observe
    doomed = SAMPLES / "sessions" / "supabase-ticket.jsonl"

    def observe(self: SessionMonitor, event: Any) -> Any:
        if event.session_id == "supabase-ticket" and event.source and event.source.startswith(str(doomed)):
            os._exit(7)  # the worker process dies on this file only
        return real(self, event)

    monkeypatch.setattr(SessionMonitor, "observe", observe)  # inherited by the forked workers
    paths = [SAMPLES / "sessions", SAMPLES / "mcp"]

    got = list(analyze_in_processes(paths, InputFormat.AUTO, EngineSpec(), 2, start_method="fork"))

    errors = [e for e in got if isinstance(e, RecordError)]
    assert [(e.source, e.message) for e in errors] == [
        (
            str(doomed),
            "the worker process analysing it exited with status 7; the sessions of this part are not reported",
        )
    ]
    monkeypatch.setattr(SessionMonitor, "observe", real)
    # In its place: the one error instead of what the file gives, everything else as one process gives it.
    want = [
        errors[0] if isinstance(item, SessionReport) and item.source == str(doomed) else item
        for item in analyze_records(read_inputs(paths), SessionMonitor())
    ]
    assert as_data(got) == as_data(want)


def test_a_warning_raised_in_every_worker_is_shown_once(monkeypatch: pytest.MonkeyPatch) -> None:
    real = SessionMonitor.observe

    def observe(self: SessionMonitor, event: Any) -> Any:
        warnings.warn("the same warning from every part", MonitorWarning, stacklevel=1)
        return real(self, event)

    monkeypatch.setattr(SessionMonitor, "observe", observe)
    paths = sorted((SAMPLES / "sessions").glob("*.jsonl"))
    assert len(paths) >= 4

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        list(analyze_in_processes(paths, InputFormat.AUTO, EngineSpec(), 2, start_method="fork"))

    assert [str(w.message) for w in caught if w.category is MonitorWarning] == ["the same warning from every part"]


def test_the_default_number_of_workers_follows_the_cpus_this_process_may_use(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under a cpuset (a container, a CI runner) the machine has more cores than the process may use."""
    import os

    from monitor.scale import count_cores

    monkeypatch.delattr(os, "process_cpu_count", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3}, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    assert count_cores() == 1


def test_a_worker_is_one_batch_so_its_memos_keep_what_earlier_parts_read() -> None:
    """A part ends its own batch; the worker's batch lasts until the worker stops, so the memos keep the batch's
    bounds and what the first part read while the worker waits for the next part."""
    import signal
    import threading
    from multiprocessing import Pipe

    from monitor.evidence import BATCH_SCALE, clear_text_memos, count_memo_entries, read_memo_bounds
    from monitor.ingest import partition_inputs
    from monitor.scale._processes import _serve
    from tests.scale.helpers import DEV_RUNS

    parts = [part for part in partition_inputs([DEV_RUNS], InputFormat.AUTO) if part.work][:2]
    assert len(parts) == 2
    usual = read_memo_bounds()
    clear_text_memos()
    ours, theirs = Pipe()
    between: list[tuple[dict[str, tuple[int, int]], int]] = []

    def play_the_parent() -> None:
        ours.send(parts[0])
        ours.recv()
        between.append((read_memo_bounds(), count_memo_entries()))  # the worker waits for its next part
        ours.send(parts[1])
        ours.recv()
        ours.send(None)

    parent = threading.Thread(target=play_the_parent)
    saved = signal.getsignal(signal.SIGINT)
    parent.start()
    try:
        _serve(theirs, EngineSpec())  # on this thread: a worker sets its signal handler on its main thread
    finally:
        signal.signal(signal.SIGINT, saved)
    parent.join(10)
    bounds, kept = between[0]
    assert {name: budget for name, (_, budget) in bounds.items()} == {
        name: budget * BATCH_SCALE for name, (_, budget) in usual.items()
    }
    assert kept > 0
    assert read_memo_bounds() == usual  # the worker's batch ended with it
