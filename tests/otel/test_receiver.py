"""The receiver: each message of the engine reaches the part it is for; a failing exporter stops no other."""

from __future__ import annotations

import threading
import time
from typing import Any, ClassVar

import pytest

from monitor.otel import _records as rec
from monitor.otel._config import ProcessorConfig
from monitor.otel._engine import SpanEngine
from monitor.otel._exporters import ExportedAlert
from monitor.otel._failures import Failures
from monitor.otel._links import SessionLinks
from monitor.otel._receiver import Receiver
from monitor.otel._requests import Requests
from monitor.session import SessionMonitor


class FakeDelivery:
    """Queues nothing: the test answers the requests."""

    own_threads: ClassVar[set[int]] = set()

    def put_request(self, record: tuple[Any, ...], reply: Any = None, session: str | None = None) -> None:
        pass


class Collecting:
    """An exporter that keeps the alerts."""

    failure_kind = "collecting"

    def __init__(self) -> None:
        self.alerts: list[ExportedAlert] = []

    def export(self, alert: ExportedAlert) -> None:
        self.alerts.append(alert)


class Failing:
    """An exporter that always fails."""

    failure_kind = "emit_log"

    def export(self, alert: ExportedAlert) -> None:
        raise RuntimeError("injected")


def make_receiver() -> tuple[Receiver, Collecting, Failures]:
    """A receiver with a failing exporter before a collecting one."""
    config = ProcessorConfig()
    failures = Failures()
    links = SessionLinks(config, time.monotonic)
    requests = Requests(config, time.monotonic, FakeDelivery())  # type: ignore[arg-type]
    collecting = Collecting()
    return Receiver(links, requests, [Failing(), collecting], None, failures), collecting, failures


def wait_for_question(receiver: Receiver) -> None:
    """Wait until a question is in flight."""
    deadline = time.monotonic() + 5
    while not receiver.requests._replies and time.monotonic() < deadline:
        time.sleep(0.005)


def test_every_exporter_gets_each_alert_whatever_another_one_does() -> None:
    receiver, collecting, failures = make_receiver()
    sent: list[list[Any]] = []
    SpanEngine(SessionMonitor(), sent.append, ProcessorConfig()).handle([rec.GAP, 1.0, "s", 1])
    alerts = [m for m in sent if m[0] == rec.OUT_ALERT]
    for message in alerts:
        receiver.on_output(message)
    assert [a.message for a in collecting.alerts] == [m[5] for m in alerts]
    assert failures.read() == {"emit_log": len(alerts)}
    receiver.on_output([rec.OUT_ALERT, "too short"])
    receiver.on_output([])
    assert failures.read() == {"emit_log": len(alerts), "output": 2}


def test_stamps_replies_and_an_engine_death_reach_their_parts() -> None:
    receiver, _, failures = make_receiver()
    receiver.on_output([rec.OUT_STAMP, "s", "armed", "untrusted_content"])
    receiver.on_output([rec.OUT_STAMP, "t", "partial", "private_data"])
    receiver.on_output([rec.OUT_ENDED, "t"])
    answered: list[Any] = []

    def ask() -> None:
        try:
            answered.append(receiver.requests.ask(rec.ASK_LIST, None, 5.0))
        except RuntimeError as error:
            answered.append(error)

    asking = threading.Thread(target=ask)
    asking.start()
    wait_for_question(receiver)
    receiver.on_output([rec.OUT_REPLY, 1, ["s"]])
    asking.join(5)
    assert answered == [["s"]]
    asking = threading.Thread(target=ask)
    asking.start()
    wait_for_question(receiver)
    assert receiver.on_exit() == ["s"]  # the stamped sessions ("t" ended); the question fails
    asking.join(5)
    assert isinstance(answered[-1], RuntimeError)
    assert receiver.on_exit() == [] and failures.read() == {}


def test_the_engines_failures_and_log_records_are_this_processs(caplog: pytest.LogCaptureFixture) -> None:
    receiver, _, failures = make_receiver()
    caplog.set_level("WARNING", logger="monitor.otel")
    receiver.on_output([rec.OUT_ERROR, "engine", 2, "Traceback ..."])
    receiver.on_output([rec.OUT_LOG, 30, "rules reloaded"])
    assert failures.read() == {"engine": 2}
    assert [r.getMessage() for r in caplog.records][-1] == "trifecta-monitor engine: rules reloaded"


def test_a_batch_that_was_not_delivered_makes_its_sessions_stamps_unknown() -> None:
    receiver, _, _ = make_receiver()
    progress = receiver.links.progress
    progress.note("s", 1)
    progress.note("t", 2)
    start = rec.dump_record((rec.START, 0.0, 1, 0, 0, "s", "chat", 0, {}))
    receiver.on_lost([start, rec.dump_record((rec.MARK, 2))])
    # A later mark acknowledges number 2, but the engine never saw s's records: its stamp stays unknown.
    progress.acknowledge(2, lambda session: ("clean", ""))
    assert progress.find_wait("s") == -1
    assert progress.find_wait("t") == 0
