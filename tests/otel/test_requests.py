"""Questions for the engine: answered, timed out, lost, failed with their engine, refused on our own threads."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from monitor.decide import decide_on_monitor_error
from monitor.models import Decision
from monitor.otel import _records as rec
from monitor.otel._config import ProcessorConfig
from monitor.otel._links import CallPlace
from monitor.otel._requests import Requests


class FakeDelivery:
    """Keeps the requests queued; ``on_put`` plays the engine."""

    def __init__(self) -> None:
        self.own_threads: set[int] = set()
        self.records: list[tuple[Any, ...]] = []
        self.on_put: Callable[[tuple[Any, ...]], None] | None = None

    def put_request(self, record: tuple[Any, ...], reply: Any = None, session: str | None = None) -> None:
        self.records.append(record)
        if self.on_put is not None:
            self.on_put(record)


def make_requests(**options: Any) -> tuple[Requests, FakeDelivery]:
    """Requests over a fake delivery."""
    delivery = FakeDelivery()
    return Requests(ProcessorConfig(**options), time.monotonic, delivery), delivery  # type: ignore[arg-type]


def answer_later(requests: Requests, request: int, answer: Any) -> None:
    """The engine's reply, a little later, from another thread."""
    threading.Timer(0.05, requests.answer, (request, answer)).start()


def test_the_asking_thread_waits_for_the_engines_answer() -> None:
    requests, delivery = make_requests()
    delivery.on_put = lambda record: answer_later(requests, record[rec.Q_REQUEST], ["a", "b"])
    assert requests.ask(rec.ASK_LIST, None, 5.0) == ["a", "b"]
    assert delivery.records == [(rec.REQUEST, 1, rec.ASK_LIST, None)]
    assert requests.flush(5.0) is True
    delivery.on_put = None
    assert requests.flush(0.05) is False  # nobody answers this one


def test_a_question_fails_at_once_when_lost_or_when_its_engine_dies() -> None:
    requests, delivery = make_requests()
    delivery.on_put = lambda record: requests.fail_lost([rec.dump_record(record)])
    with pytest.raises(RuntimeError, match="the engine stopped before it answered"):
        requests.ask(rec.ASK_SESSION, "s", 5.0)
    delivery.on_put = lambda record: threading.Timer(0.05, requests.fail_pending).start()
    started = time.monotonic()
    with pytest.raises(RuntimeError, match="the engine stopped before it answered"):
        requests.ask(rec.ASK_SESSION, "s", 5.0)
    assert time.monotonic() - started < 4.0
    delivery.on_put = None
    with pytest.raises(TimeoutError, match=r"no answer from the engine within 0\.05 s"):
        requests.ask(rec.ASK_SESSION, "s", 0.05)


def test_questions_from_the_processors_own_threads_are_refused_without_waiting() -> None:
    requests, delivery = make_requests()
    delivery.own_threads.add(threading.get_ident())
    with pytest.raises(RuntimeError, match="asked from the processor's own thread"):
        requests.ask(rec.ASK_LIST, None, 60.0)
    assert requests.flush(60.0) is False and delivery.records == []


@pytest.mark.parametrize("as_text", [False, True])
def test_a_check_names_the_server_and_reads_the_decision_as_either_worker_sends_it(as_text: bool) -> None:
    requests, delivery = make_requests()
    decision = decide_on_monitor_error("c1")
    answer = decision.model_dump_json() if as_text else decision  # the engine process's, or the thread's
    delivery.on_put = lambda record: answer_later(requests, record[rec.K_REQUEST], answer)
    place = CallPlace("s", 0, 5, (1 << 64) | 2, 9)
    got = requests.check(place, "mcp__mail__send_email", {"to": "a@b.example"}, None, "c1")
    assert isinstance(got, Decision) and got == decision
    record = delivery.records[-1]
    assert record[rec.K_SESSION] == "s" and record[rec.K_UP] == 5 and record[rec.K_TRIGGER] == 9
    assert (record[rec.K_TRACE_HI], record[rec.K_TRACE_LO]) == (1, 2)
    assert (record[rec.K_SERVER], record[rec.K_TOOL], record[rec.K_CALL_ID]) == ("mail", "send_email", "c1")
    requests.check(place, "search", None, None, None)
    assert delivery.records[-1][rec.K_SERVER : rec.K_TOOL + 1] == ("unknown", "search")


def test_a_check_left_unanswered_times_out_after_check_timeout() -> None:
    requests, _ = make_requests(check_timeout=0.05)
    with pytest.raises(TimeoutError, match=r"check_tool_call: no answer from the engine within 0\.05 s"):
        requests.check(CallPlace("s", 0, 0, 1, 1), "mcp__web__fetch", {}, None, None)
