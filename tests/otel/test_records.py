"""The wire format between the processor and its engine: records as lines, models as objects or JSON text."""

from __future__ import annotations

import orjson

from monitor.decide import decide_on_monitor_error
from monitor.models import Decision
from monitor.otel import _records as rec


def test_a_record_is_one_line_and_integers_beyond_64_bits_are_written_as_text() -> None:
    record = rec.make_end(1.5, 7, (3 << 64) | 4, 0, "s", "execute_tool", 10, 20, 2, {"big": 1 << 70, "n": 5})
    line = rec.dump_record(record)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    read = orjson.loads(line)
    assert read[0] == rec.END and read[rec.E_SPAN] == 7 and (read[rec.E_TRACE_HI], read[rec.E_TRACE_LO]) == (3, 4)
    assert read[rec.E_SESSION] == "s" and read[rec.E_STATUS] == 2
    assert read[rec.E_ATTRIBUTES] == {"big": str(1 << 70), "n": 5}


def test_the_session_of_a_span_record_and_the_request_of_a_question_are_read_back() -> None:
    start = rec.dump_record(rec.make_start(1.0, 2, 3, "chat-session", "chat", 5, {}))
    end = rec.dump_record(rec.make_end(1.0, 2, 3, 0, "tool-session", "execute_tool", 5, 6, 0, {}))
    check = rec.dump_record(rec.make_check(1.0, 41, "s", 0, 0, 3, 2, "mail", "send", None, None))
    question = rec.dump_record((rec.REQUEST, 42, rec.ASK_FLUSH, None))
    gap = rec.dump_record((rec.GAP, 1.0, "s", 3))
    assert [rec.read_span_session(line) for line in (start, end, check, question, gap)] == [
        "chat-session",
        "tool-session",
        None,
        None,
        None,
    ]
    assert [rec.read_request_id(line) for line in (start, end, check, question, gap)] == [None, None, 41, 42, None]


def test_a_model_crosses_the_pipe_as_its_json_text_and_reads_back_equal() -> None:
    decision = decide_on_monitor_error("c1")
    message = [rec.OUT_REPLY, 1, decision]
    crossed = orjson.loads(orjson.dumps(message, default=rec.encode_value))
    assert crossed[2] == decision.model_dump_json()
    assert rec.read_model(Decision, crossed[2]) == decision
    assert rec.read_model(Decision, decision) is decision  # an engine on a thread: the object itself
