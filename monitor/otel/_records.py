"""The records the span processor sends to its engine, and the messages the engine sends back.

Each is a JSON array (so that it crosses a pipe as one line of ``orjson`` output) whose first element names
its kind; the constants below are the positions of the other fields. Span and trace ids are integers (a
trace id as its high and low 64 bits); times are the processor's clock, in seconds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

__all__: list[str] = []  # the wire format between the processor and its engine is private

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
OUT_ALERT = "a"
"""``[a, trace_hi, trace_lo, span, log attributes, message, alert JSON, decision JSON or null]``: the log
record is prepared by the engine, and the alert and decision are JSON text, read only for ``on_alert``, so
that emitting it costs the application's process little."""
OUT_DECISIONS = "d"
"""``[d, {action: count}]``: calls decided since the last such message."""
OUT_REPLY = "r"
"""``[r, request, answer]``."""
OUT_ENDED = "x"
"""``[x, session]``: the engine ended the session (expired, evicted, or asked to)."""
OUT_LOG = "l"
"""``[l, level, text]``: a log record of the engine process, to be logged by the processor."""
OUT_ERROR = "E"
"""``[E, kind, count, first traceback or ""]``: failures the engine caught."""


def make_call_key(server: str, tool: str, arguments: Mapping[str, Any] | None) -> tuple[str, str, bytes]:
    """How a call decided by ``check_tool_call`` is recognised when its span arrives without a call id."""
    return server, tool, orjson.dumps(arguments, option=orjson.OPT_SORT_KEYS, default=str)
