"""Live OpenTelemetry: a span processor that feeds traced agent sessions to the monitor as they run.

Platform teams that already trace their agents add the monitor with one line::

    provider.add_span_processor(TrifectaSpanProcessor(logger_provider=logger_provider))

**What it reads.** Spans are decoded by the same code as the offline OTLP reader
(:mod:`monitor.spans`: :func:`~monitor.spans.extract_span_facts` and
:func:`~monitor.spans.assemble_trace`), so the three attribute flavours (GenAI/MCP semantic
conventions, OpenInference, Traceloop) and the session keys are the reader's. A tool span feeds the engine
when it ends: it ends after its call ran, so the call is decided (``before_call``) and then its result
recorded (``after_call``). One logical call seen as several nested spans (an agent's ``execute_tool`` span,
the MCP client span, the MCP server span) is held until its outermost tool span ends and then merged, exactly
as the reader merges it. Chat spans give the user messages and the tool definitions offered to the model,
read when the span starts and again when it ends; each is taken once per session.

**What it writes.** Every span of a session gets ``trifecta.session_id`` when it starts, and each tool span
``trifecta.level`` and ``trifecta.legs`` too: the session's level and legs as the engine knows them when the
call starts, the legs as one string (:func:`format_legs`). ``level_stamps`` (:class:`LevelStamps`) puts them
on every span of the session instead, or on none. Each alert
becomes one OpenTelemetry log record (event name ``trifecta.alert``) in the trace context of the span that
triggered it, goes to the ``on_alert`` callback, and is counted when a meter provider is given.

**Where the work happens.** On the application's threads the processor only resolves sessions, stamps spans and
queues one compact record per span of agent work; the engine runs in a child process (or, with
``worker="thread"``, on the processor's own thread), so the application neither waits for it nor shares the
interpreter lock with it. A span of agent work that ends wakes the delivery at once, so that a call's decision
is stamped on the session's next spans as soon as the engine made it.
:meth:`TrifectaSpanProcessor.check_tool_call` waits for its answer (every span ended before it is analysed
first); ``force_flush`` waits until everything queued was analysed. As the OpenTelemetry SDK separates span
processors from exporters, the processor keeps only the SDK's hooks and hands each alert to one exporter per
destination (log records, metric counters, the callback).

**Safety.** No hook raises into the application: failures are counted (:attr:`TrifectaSpanProcessor.errors`) and
logged once per kind. Nothing is exported by the processor itself: log records go through the given logger
provider's processors. Memory is bounded: span links (``max_spans``, ``span_ttl``), sessions (``max_sessions``,
``session_ttl``, and the engine process's ``max_engine_bytes``) and the queue to the engine
(``max_queue_bytes``: beyond it spans are dropped, counted in :attr:`TrifectaSpanProcessor.dropped`, and their
session gets a ``monitoring-gap`` alert). A dead engine process is restarted (its sessions get a
``monitoring-gap`` alert); after repeated deaths the engine runs on a thread. Spans started and log records
emitted on the processor's own threads (by a log record processor, an ``on_alert`` callback, a logging handler)
are not processed again.
"""

from monitor.otel._config import LevelStamps, WorkerKind
from monitor.otel._names import (
    ALERT_EVENT_NAME,
    ATTR_ACTION,
    ATTR_ALERT_KIND,
    ATTR_ALERT_PATH,
    ATTR_ALERT_SEVERITY,
    ATTR_CALL_ID,
    ATTR_ERROR_KIND,
    ATTR_EVIDENCE,
    ATTR_LEGS,
    ATTR_LEVEL,
    ATTR_SERVER,
    ATTR_SESSION_ID,
    ATTR_TOOL,
    BAGGAGE_SESSION_KEYS,
    METRIC_ALERTS,
    METRIC_DECISIONS,
    METRIC_DROPPED,
    METRIC_INTERNAL_ERRORS,
    TrifectaAlert,
    format_legs,
    read_legs,
    summarize_evidence,
)
from monitor.otel._processor import TrifectaSpanProcessor

__all__ = [
    "ALERT_EVENT_NAME",
    "ATTR_ACTION",
    "ATTR_ALERT_KIND",
    "ATTR_ALERT_PATH",
    "ATTR_ALERT_SEVERITY",
    "ATTR_CALL_ID",
    "ATTR_ERROR_KIND",
    "ATTR_EVIDENCE",
    "ATTR_LEGS",
    "ATTR_LEVEL",
    "ATTR_SERVER",
    "ATTR_SESSION_ID",
    "ATTR_TOOL",
    "BAGGAGE_SESSION_KEYS",
    "LevelStamps",
    "METRIC_ALERTS",
    "METRIC_DECISIONS",
    "METRIC_DROPPED",
    "METRIC_INTERNAL_ERRORS",
    "TrifectaAlert",
    "TrifectaSpanProcessor",
    "WorkerKind",
    "format_legs",
    "read_legs",
    "summarize_evidence",
]
