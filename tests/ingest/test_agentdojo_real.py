"""Real AgentDojo runs (the sample in tests/data, the first 200 runs of the dev archive) read and analyse cleanly."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from monitor.analysis import analyze_records
from monitor.ingest import InputFormat, Record, RecordError, SessionEnd, read_inputs
from monitor.models import Leg, SessionReport, UserMessage
from monitor.session import SessionMonitor

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DEV_RUNS = PROJECT_ROOT / "tests" / "data" / "agentdojo-sample.tar.gz"
RUNS = 200


def _first_runs(records: Iterable[Record], n: int) -> Iterator[Record]:
    """Stop the stream after the n-th run has ended (the rest of the archive is never read)."""
    ended = 0
    for record in records:
        yield record
        if isinstance(record, SessionEnd):
            ended += 1
            if ended == n:
                return


def test_real_runs_read_and_analyse_cleanly() -> None:
    monitor = SessionMonitor()
    private_after_prompt: dict[str, bool] = {}

    def watch(records: Iterable[Record]) -> Iterator[Record]:
        # After the engine has taken a user message (the consumer asks for the next record only once it has
        # fed the previous one), the session must hold the private-data leg: the conversation is private.
        for record in records:
            yield record
            if isinstance(record, UserMessage):
                private_after_prompt[record.session_id] = Leg.PRIVATE_DATA in monitor.session(record.session_id).legs

    records = _first_runs(read_inputs([DEV_RUNS], InputFormat.AUTO), RUNS)
    output = list(analyze_records(watch(records), monitor))

    errors = [item for item in output if isinstance(item, RecordError)]
    assert errors == [], f"{len(errors)} records rejected, first: {errors[0]}"
    reports = [item for item in output if isinstance(item, SessionReport)]
    assert len(reports) == RUNS
    assert len({r.session_id for r in reports}) == RUNS
    assert set(private_after_prompt) == {r.session_id for r in reports}, "every run has a user prompt"
    no_private = [sid for sid, private in private_after_prompt.items() if not private]
    assert no_private == [], f"user message did not bring the private-data leg in {no_private[:5]}"
    for report in reports:
        assert Leg.PRIVATE_DATA in report.legs, report.session_id
        assert report.calls, f"{report.session_id}: no calls"
        assert report.session_id.count("/") == 4, report.session_id  # <model>/<suite>/<task>/<attack>/<run>
        assert all(call.server.startswith("agentdojo-") for call in report.calls)
