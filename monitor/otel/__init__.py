"""Live OpenTelemetry: a span processor that feeds traced agent sessions to the monitor as they run.

Platform teams that already trace their agents add the monitor with one line::

    provider.add_span_processor(TrifectaSpanProcessor(logger_provider=logger_provider))

**Configured the OpenTelemetry way.** :func:`read_processor_options` reads every option from ``TRIFECTA_*``
environment variables (:data:`ENVIRONMENT_VARIABLES`), and :func:`install_processor` adds a processor so
configured to the global tracer provider, never raising (a bad value is logged and nothing is installed). Under
``opentelemetry-instrument``, ``TRIFECTA_ENABLED=true`` (the post-instrumentation hook
:func:`install_after_instrumentation`) or ``OTEL_PYTHON_CONFIGURATOR=trifecta`` (:class:`TrifectaConfigurator`)
installs it with no code; with no ``logger_provider``, alerts go to the global logger provider.
``guardrail_attributes`` also records each decision with the guardrail attribute names proposed for the GenAI
semantic conventions (:data:`GUARDRAIL_PROPOSAL`; in development).

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
``trifecta.level`` and ``trifecta.legs`` too: the session's level and legs when the call starts, the legs as
one string (:func:`format_legs`); they are written only once the engine has analysed every span of the session
that ended before (a stamp never says less than the truth): until then the level is :data:`LEVEL_PENDING` (no
legs), replaced by the true level and legs if the engine catches up while the span records, and
:data:`LEVEL_UNKNOWN` for a session that lost spans. ``level_stamps`` (:class:`LevelStamps`) puts them
on every span of the session instead, or on none. Each alert
becomes one OpenTelemetry log record (event name ``trifecta.alert``) in the trace context of the span that
triggered it, goes to the ``on_alert`` callback, and is counted when a meter provider is given; a ``sink``
(:class:`~monitor.types.AlertSink`) is pushed every decision, change of level and alert, as notices.

**Where the work happens.** On the application's threads the processor only resolves sessions, stamps spans and
queues one compact record per span of agent work; the engine runs in a child process (or, with
``worker="thread"``, on the processor's own thread), so the application neither waits for it nor shares the
interpreter lock with it. A span of agent work that ends wakes the delivery at once, so that a call's decision
is stamped on the session's next spans as soon as the engine made it.
:meth:`TrifectaSpanProcessor.check_tool_call` waits for its answer (every span ended before it is analysed
first); ``force_flush`` waits until everything queued was analysed. As the OpenTelemetry SDK separates span
processors from exporters, the processor keeps only the SDK's hooks and hands each alert to one exporter per
destination (log records, metric counters, the callback, the sink).

**Writing what ``analyze`` reads.** :class:`OtlpJsonFileExporter` is a span exporter that writes OTLP JSON lines
(the ``otel`` extra): traces recorded with it are read by ``trifecta analyze`` as they are.

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

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from monitor.otel._auto import TrifectaConfigurator, install_after_instrumentation
    from monitor.otel._config import LevelStamps, WorkerKind
    from monitor.otel._env import ENVIRONMENT_VARIABLES, EnvironmentVariable, install_processor, read_processor_options
    from monitor.otel._file_exporter import OtlpJsonFileExporter
    from monitor.otel._guardrail import (
        ATTR_GUARDRAIL_ACTION_TYPE,
        ATTR_GUARDRAIL_COMPONENT_NAME,
        ATTR_GUARDRAIL_POLICY_ID,
        ATTR_GUARDRAIL_POLICY_RULE_ID,
        ATTR_GUARDRAIL_TARGET_ID,
        ATTR_GUARDRAIL_TARGET_SUBTYPE,
        ATTR_GUARDRAIL_TARGET_TYPE,
        ATTR_GUARDRAIL_VERDICT_CODE,
        ATTR_GUARDRAIL_VERDICT_REASON,
        ATTR_GUARDRAIL_VERDICT_TYPE,
        GUARDRAIL_PROPOSAL,
        make_guardrail_attributes,
        make_policy_id,
    )
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
        DECISION_EVENT_NAME,
        LEVEL_PENDING,
        LEVEL_UNKNOWN,
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

# The names below are imported when first used (PEP 562): the auto-instrumentation hooks (``_auto``), which run in
# every program ``opentelemetry-instrument`` starts, import the span processor only when it is switched on.
_HOMES = {
    "ALERT_EVENT_NAME": "monitor.otel._names",
    "ATTR_ACTION": "monitor.otel._names",
    "ATTR_ALERT_KIND": "monitor.otel._names",
    "ATTR_ALERT_PATH": "monitor.otel._names",
    "ATTR_ALERT_SEVERITY": "monitor.otel._names",
    "ATTR_CALL_ID": "monitor.otel._names",
    "ATTR_ERROR_KIND": "monitor.otel._names",
    "ATTR_EVIDENCE": "monitor.otel._names",
    "ATTR_GUARDRAIL_ACTION_TYPE": "monitor.otel._guardrail",
    "ATTR_GUARDRAIL_COMPONENT_NAME": "monitor.otel._guardrail",
    "ATTR_GUARDRAIL_POLICY_ID": "monitor.otel._guardrail",
    "ATTR_GUARDRAIL_POLICY_RULE_ID": "monitor.otel._guardrail",
    "ATTR_GUARDRAIL_TARGET_ID": "monitor.otel._guardrail",
    "ATTR_GUARDRAIL_TARGET_SUBTYPE": "monitor.otel._guardrail",
    "ATTR_GUARDRAIL_TARGET_TYPE": "monitor.otel._guardrail",
    "ATTR_GUARDRAIL_VERDICT_CODE": "monitor.otel._guardrail",
    "ATTR_GUARDRAIL_VERDICT_REASON": "monitor.otel._guardrail",
    "ATTR_GUARDRAIL_VERDICT_TYPE": "monitor.otel._guardrail",
    "ATTR_LEGS": "monitor.otel._names",
    "ATTR_LEVEL": "monitor.otel._names",
    "ATTR_SERVER": "monitor.otel._names",
    "ATTR_SESSION_ID": "monitor.otel._names",
    "ATTR_TOOL": "monitor.otel._names",
    "BAGGAGE_SESSION_KEYS": "monitor.otel._names",
    "DECISION_EVENT_NAME": "monitor.otel._names",
    "ENVIRONMENT_VARIABLES": "monitor.otel._env",
    "EnvironmentVariable": "monitor.otel._env",
    "GUARDRAIL_PROPOSAL": "monitor.otel._guardrail",
    "LEVEL_PENDING": "monitor.otel._names",
    "LEVEL_UNKNOWN": "monitor.otel._names",
    "LevelStamps": "monitor.otel._config",
    "METRIC_ALERTS": "monitor.otel._names",
    "METRIC_DECISIONS": "monitor.otel._names",
    "METRIC_DROPPED": "monitor.otel._names",
    "METRIC_INTERNAL_ERRORS": "monitor.otel._names",
    "TrifectaAlert": "monitor.otel._names",
    "OtlpJsonFileExporter": "monitor.otel._file_exporter",
    "TrifectaConfigurator": "monitor.otel._auto",
    "TrifectaSpanProcessor": "monitor.otel._processor",
    "WorkerKind": "monitor.otel._config",
    "format_legs": "monitor.otel._names",
    "install_after_instrumentation": "monitor.otel._auto",
    "install_processor": "monitor.otel._env",
    "make_guardrail_attributes": "monitor.otel._guardrail",
    "make_policy_id": "monitor.otel._guardrail",
    "read_legs": "monitor.otel._names",
    "read_processor_options": "monitor.otel._env",
    "summarize_evidence": "monitor.otel._names",
}


# The PEP 562 loader the top-level package has too: each keeps its own, as neither may import the other.
def __getattr__(name: str) -> Any:
    """Import a public name on first use."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'monitor.otel' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "ALERT_EVENT_NAME",
    "ATTR_ACTION",
    "ATTR_ALERT_KIND",
    "ATTR_ALERT_PATH",
    "ATTR_ALERT_SEVERITY",
    "ATTR_CALL_ID",
    "ATTR_ERROR_KIND",
    "ATTR_EVIDENCE",
    "ATTR_GUARDRAIL_ACTION_TYPE",
    "ATTR_GUARDRAIL_COMPONENT_NAME",
    "ATTR_GUARDRAIL_POLICY_ID",
    "ATTR_GUARDRAIL_POLICY_RULE_ID",
    "ATTR_GUARDRAIL_TARGET_ID",
    "ATTR_GUARDRAIL_TARGET_SUBTYPE",
    "ATTR_GUARDRAIL_TARGET_TYPE",
    "ATTR_GUARDRAIL_VERDICT_CODE",
    "ATTR_GUARDRAIL_VERDICT_REASON",
    "ATTR_GUARDRAIL_VERDICT_TYPE",
    "ATTR_LEGS",
    "ATTR_LEVEL",
    "ATTR_SERVER",
    "ATTR_SESSION_ID",
    "ATTR_TOOL",
    "BAGGAGE_SESSION_KEYS",
    "DECISION_EVENT_NAME",
    "ENVIRONMENT_VARIABLES",
    "EnvironmentVariable",
    "GUARDRAIL_PROPOSAL",
    "LEVEL_PENDING",
    "LEVEL_UNKNOWN",
    "LevelStamps",
    "METRIC_ALERTS",
    "METRIC_DECISIONS",
    "METRIC_DROPPED",
    "METRIC_INTERNAL_ERRORS",
    "OtlpJsonFileExporter",
    "TrifectaAlert",
    "TrifectaConfigurator",
    "TrifectaSpanProcessor",
    "WorkerKind",
    "format_legs",
    "install_after_instrumentation",
    "install_processor",
    "make_guardrail_attributes",
    "make_policy_id",
    "read_legs",
    "read_processor_options",
    "summarize_evidence",
]
