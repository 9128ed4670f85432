"""The records the span processor sends to its engine, and the messages the engine sends back.

Each is a JSON array (so that it crosses a pipe as one line of ``orjson`` output) whose first element names
its kind; the constants below are the positions of the other fields. Span and trace ids are integers (a
trace id as its high and low 64 bits); times are the processor's clock, in seconds.

Records are always written as lines (:func:`dump_record`): they wait in the processor's queue as bytes. The
engine's messages are lists: an engine on the processor's thread hands them over as they are, with the
alerts, decisions and reports in them as objects; the engine process writes each as a line, the objects as
their JSON text (:func:`encode_value`), which :func:`read_model` reads back where they are used.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import orjson
from pydantic import BaseModel

from monitor.spans import SpanRecord, StatusCode

_Model = TypeVar("_Model", bound=BaseModel)
_LOW_64 = (1 << 64) - 1

# -- processor -> engine -------------------------------------------------------------------------------

START = "s"
"""A chat span started with user messages or tool definitions on it."""
S_TIME, S_SPAN, S_TRACE_HI, S_TRACE_LO, S_SESSION, S_NAME, S_START, S_ATTRIBUTES = range(1, 9)

END = "e"
"""A tool or chat span ended. ``up`` is the nearest tool span above it (0: none). Only what the reader uses is
sent: the span's kind and status message are not."""
(
    E_TIME,
    E_SPAN,
    E_TRACE_HI,
    E_TRACE_LO,
    E_UP,
    E_SESSION,
    E_NAME,
    E_START,
    E_END_NS,
    E_STATUS,
    E_ATTRIBUTES,
) = range(1, 12)

CHECK = "k"
"""``check_tool_call``: decide a call now; the answer comes back as a reply."""
(
    K_TIME,
    K_REQUEST,
    K_SESSION,
    K_SPAN,
    K_UP,
    K_TRACE_HI,
    K_TRACE_LO,
    K_TRIGGER,
    K_SERVER,
    K_TOOL,
    K_ARGUMENTS,
    K_CALL_ID,
) = range(1, 13)

GAP = "g"
"""Spans of a session were dropped (the queue was full)."""
G_TIME, G_SESSION, G_COUNT = range(1, 4)

MARK = "m"
"""``[m, number]``: every record numbered up to ``number`` was queued before this (see
:mod:`~monitor.otel._progress`); the engine answers with :data:`OUT_ACK` once it handled them."""
M_NUMBER = 1

REQUEST = "q"
"""A question for the engine; answered by a reply once every record before it was handled."""
Q_REQUEST, Q_WHAT, Q_ARGUMENT = range(1, 4)
ASK_FLUSH = "flush"
ASK_SESSION = "session"
ASK_END = "end"
ASK_LIST = "list"
ASK_CLOSE = "close"

# -- engine -> processor -------------------------------------------------------------------------------

OUT_STAMP = "t"
"""``[t, session, level, legs]``: what new spans of the session are stamped with."""
OUT_ACK = "n"
"""``[n, number]``: every record numbered up to ``number`` was handled, and the stamps they gave were sent."""
OUT_DECIDED = "c"
"""``[c, notice]``: a call was decided (a :class:`~monitor.models.CallDecided`; only with ``decision_notices``)."""
OUT_ALERT = "a"
"""``[a, trace_hi, trace_lo, span, log attributes, message, notice]``: the log record is prepared by the
engine, so that emitting it costs the application's process little; the notice (an
:class:`~monitor.models.AlertRaised`) is read only for ``on_alert``."""
OUT_GUARDRAIL = "g"
"""``[g, trace_hi, trace_lo, span, log attributes, message]``: one decided call's log record, with the guardrail
attributes (only with ``guardrail_attributes``)."""
OUT_DECISIONS = "d"
"""``[d, {action: count}]``: calls decided since the last such message."""
OUT_REPLY = "r"
"""``[r, request, answer]``: a :class:`~monitor.models.Decision`, a :class:`~monitor.models.SessionReport`, a
list of session ids, or null."""
OUT_ENDED = "x"
"""``[x, session]``: the engine ended the session (expired, evicted, or asked to)."""
OUT_LOG = "l"
"""``[l, level, text]``: a log record of the engine process, to be logged by the processor."""
OUT_ERROR = "E"
"""``[E, kind, count, first traceback or ""]``: failures the engine caught."""


def make_call_key(server: str, tool: str, arguments: Mapping[str, Any] | None) -> tuple[str, str, bytes]:
    """How a call decided by ``check_tool_call`` is recognised when its span arrives without a call id."""
    return server, tool, orjson.dumps(arguments, option=orjson.OPT_SORT_KEYS, default=str)


def make_start(
    time: float, span_id: int, trace_id: int, session: str, name: str, start: int | None, attributes: Mapping[str, Any]
) -> tuple[Any, ...]:
    """The :data:`START` record of a chat span."""
    return (START, time, span_id, trace_id >> 64, trace_id & _LOW_64, session, name, start, attributes)


def make_end(
    time: float,
    span_id: int,
    trace_id: int,
    up: int,
    session: str,
    name: str,
    start: int | None,
    end: int | None,
    status: int,
    attributes: Mapping[str, Any],
) -> tuple[Any, ...]:
    """The :data:`END` record of a tool or chat span."""
    return (END, time, span_id, trace_id >> 64, trace_id & _LOW_64, up, session, name, start, end, status, attributes)


def make_check(
    time: float,
    request: int,
    session: str,
    span_id: int,
    up: int,
    trace_id: int,
    trigger: int,
    server: str,
    tool: str,
    arguments: Mapping[str, Any] | None,
    call_id: str | None,
) -> tuple[Any, ...]:
    """The :data:`CHECK` record of a ``check_tool_call`` question."""
    trace_hi, trace_lo = trace_id >> 64, trace_id & _LOW_64
    copied = dict(arguments) if arguments is not None else None
    return (CHECK, time, request, session, span_id, up, trace_hi, trace_lo, trigger, server, tool, copied, call_id)


def make_span_record(
    trace_hi: int,
    trace_lo: int,
    span_id: int,
    up: int,
    name: str,
    start: int | None,
    end: int | None,
    attributes: dict[str, Any],
    status: int,
) -> SpanRecord:
    """The :class:`SpanRecord` :func:`~monitor.spans.convert_readable_span` makes of the span, but for
    what the reader does not use (kind, status message, resource: the session is resolved already).

    The parent is the nearest tool span above (or none): only tool spans matter to how calls merge.
    """
    return SpanRecord(
        trace_id=f"{trace_hi:016x}{trace_lo:016x}",
        span_id=f"{span_id:016x}",
        parent_span_id=f"{up:016x}" if up else None,
        name=name,
        start_time_ns=start,
        end_time_ns=end,
        attributes=attributes,
        status_code=StatusCode(status),
    )


def dump_record(record: tuple[Any, ...]) -> bytes:
    """A record as one line (an attribute value ``orjson`` cannot write is written as text)."""
    try:
        return orjson.dumps(record, default=str, option=orjson.OPT_APPEND_NEWLINE)
    except TypeError:  # an integer beyond 64 bits in an attribute: written as text
        return orjson.dumps(_plain(record), default=str, option=orjson.OPT_APPEND_NEWLINE)


def read_span_session(line: bytes) -> str | None:
    """The session of a span's record (a :data:`START` or :data:`END` line); None for any other record."""
    record = orjson.loads(line)
    if record[0] == END:
        return str(record[E_SESSION])
    if record[0] == START:
        return str(record[S_SESSION])
    return None


def read_request_id(line: bytes) -> int | None:
    """The request a :data:`CHECK` or :data:`REQUEST` line asks; None for any other record."""
    if not line.startswith((b'["k",', b'["q",')):
        return None
    record = orjson.loads(line)
    return int(record[K_REQUEST if record[0] == CHECK else Q_REQUEST])


def encode_value(value: Any) -> Any:
    """What the engine process writes for a value ``orjson`` does not know: a model as its JSON text, anything
    else as text."""
    return value.model_dump_json() if isinstance(value, BaseModel) else str(value)


def read_model(model: type[_Model], value: _Model | str) -> _Model:
    """A model the engine sent: the object itself from an engine on this process's thread, else read from the
    JSON text the engine process wrote (raises ``pydantic.ValidationError`` when it is not one)."""
    return model.model_validate_json(value) if isinstance(value, str) else value


def _plain(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool) and not -(1 << 63) <= value < (1 << 64):
        return str(value)
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    return value
