"""The span processor configured the OpenTelemetry way: ``TRIFECTA_*`` environment variables.

:func:`read_processor_options` reads every option of :class:`~monitor.otel.TrifectaSpanProcessor` from the
environment (:data:`ENVIRONMENT_VARIABLES` lists them); a value it cannot read is a ``ValueError`` naming the
variable and the values it accepts, so that nothing is installed half-configured. :func:`install_processor`
adds a processor so configured to a tracer provider (the global one by default) and never raises: it logs why
it installed nothing. ``OTEL_SDK_DISABLED=true`` (the OpenTelemetry SDK's own switch) installs nothing.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from opentelemetry import trace as trace_api
from opentelemetry._logs import LoggerProvider
from opentelemetry.metrics import MeterProvider, get_meter_provider

from monitor.classify import load_rules
from monitor.decide import Policy, PolicyMode
from monitor.errors import TrifectaError
from monitor.models import Posture
from monitor.otel._config import LevelStamps, WorkerKind
from monitor.otel._flags import ENV_ENABLED, TRUE, read_flag
from monitor.otel._names import ATTR_ERROR_KIND, EVENT_NOT_INSTALLED, METRIC_INTERNAL_ERRORS, TrifectaAlert
from monitor.otel._processor import TrifectaSpanProcessor

logger = logging.getLogger("monitor.otel")

ENV_SDK_DISABLED = "OTEL_SDK_DISABLED"
"""The OpenTelemetry SDK's switch: ``true`` disables it, and the processor is not installed either."""


@dataclass(frozen=True, slots=True)
class EnvironmentVariable:
    """One ``TRIFECTA_*`` variable: the option it sets, what it accepts, and its default (as documented)."""

    name: str
    option: str
    accepts: str
    default: str


ENVIRONMENT_VARIABLES: tuple[EnvironmentVariable, ...] = (
    EnvironmentVariable(ENV_ENABLED, "(installs the processor)", "true, false (1/0, yes/no, on/off)", "false"),
    EnvironmentVariable("TRIFECTA_POSTURE", "posture", "strict, balanced", "balanced"),
    EnvironmentVariable("TRIFECTA_RULES", "rules (folders)", f"paths separated by {os.pathsep!r}", "none"),
    EnvironmentVariable(
        "TRIFECTA_BUILTIN_RULES", "rules (the built-in packs)", "true, false (1/0, yes/no, on/off)", "true"
    ),
    EnvironmentVariable("TRIFECTA_TRUSTED_SERVERS", "trusted_servers", "server names separated by ','", "none"),
    EnvironmentVariable("TRIFECTA_POLICY", "policy.mode", "default, reviewed-only", "default"),
    EnvironmentVariable("TRIFECTA_ENFORCE", "policy.enforce", "true, false (1/0, yes/no, on/off)", "false"),
    EnvironmentVariable("TRIFECTA_ALLOWLIST", "policy.allowlist", "addresses and domains separated by ','", "none"),
    EnvironmentVariable(
        "TRIFECTA_CONVERSATION_IS_PRIVATE",
        "policy.conversation_is_private",
        "true, false (1/0, yes/no, on/off)",
        "true",
    ),
    EnvironmentVariable("TRIFECTA_HIJACK", "policy.hijack", "true, false (1/0, yes/no, on/off)", "true"),
    EnvironmentVariable("TRIFECTA_WORKER", "worker", "process, thread", "process"),
    EnvironmentVariable("TRIFECTA_MAX_SPANS", "max_spans", "a positive integer", "100000"),
    EnvironmentVariable("TRIFECTA_SPAN_TTL", "span_ttl", "positive seconds", "3600"),
    EnvironmentVariable("TRIFECTA_MAX_SESSIONS", "max_sessions", "a positive integer", "10000"),
    EnvironmentVariable("TRIFECTA_SESSION_TTL", "session_ttl", "positive seconds", "3600"),
    EnvironmentVariable("TRIFECTA_MAX_QUEUE_BYTES", "max_queue_bytes", "a positive integer (bytes)", "134217728"),
    EnvironmentVariable("TRIFECTA_MAX_ENGINE_BYTES", "max_engine_bytes", "a positive integer (bytes)", "268435456"),
    EnvironmentVariable("TRIFECTA_CHECK_TIMEOUT", "check_timeout", "positive seconds", "5"),
    EnvironmentVariable("TRIFECTA_LEVEL_STAMPS", "level_stamps", "tools, all, none", "tools"),
    EnvironmentVariable("TRIFECTA_ENGINE_NICENESS", "engine_niceness", "an integer from 0 to 19", "10"),
    EnvironmentVariable(
        "TRIFECTA_GUARDRAIL_ATTRIBUTES", "guardrail_attributes", "true, false (1/0, yes/no, on/off)", "false"
    ),
)
"""Every variable :func:`read_processor_options` and the auto-instrumentation hooks read, in documented order."""

_BY_NAME = {variable.name: variable for variable in ENVIRONMENT_VARIABLES}
_BY_OPTION = {variable.option: variable.name for variable in ENVIRONMENT_VARIABLES}
# option keyword -> variable, for the options read as numbers
_INTEGERS = {o: _BY_OPTION[o] for o in ("max_spans", "max_sessions", "max_queue_bytes", "max_engine_bytes")}
_SECONDS = {o: _BY_OPTION[o] for o in ("span_ttl", "session_ttl", "check_timeout")}


def _fail(name: str, value: str) -> ValueError:
    return ValueError(f"{name}={value!r} is not valid: expected {_BY_NAME[name].accepts}")


def _text(environ: Mapping[str, str], name: str) -> str | None:
    """The variable's value, stripped; None when unset or empty (the default then applies)."""
    value = environ.get(name, "").strip()
    return value or None


def _choice(environ: Mapping[str, str], name: str, choices: tuple[str, ...]) -> str | None:
    value = _text(environ, name)
    if value is None:
        return None
    if value.lower() not in choices:
        raise _fail(name, value)
    return value.lower()


def _integer(environ: Mapping[str, str], name: str, low: int, high: int | None = None) -> int | None:
    value = _text(environ, name)
    if value is None:
        return None
    try:
        number = int(value)
    except ValueError:
        raise _fail(name, value) from None
    if number < low or (high is not None and number > high):
        raise _fail(name, value)
    return number


def _seconds(environ: Mapping[str, str], name: str) -> float | None:
    value = _text(environ, name)
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        raise _fail(name, value) from None
    if not 0 < number <= threading.TIMEOUT_MAX:  # a longer wait cannot be asked of a thread
        raise _fail(name, value)
    return number


def _names(environ: Mapping[str, str], name: str, separator: str) -> tuple[str, ...]:
    value = _text(environ, name)
    if value is None:
        return ()
    return tuple(part.strip() for part in value.split(separator) if part.strip())


def read_processor_options(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The :class:`~monitor.otel.TrifectaSpanProcessor` keyword arguments the ``TRIFECTA_*`` variables give
    (only those set; unset or empty variables leave the processor's defaults).

    Raises ValueError naming the variable and the values it accepts, and
    :class:`~monitor.errors.RuleLoadError` when a rules folder cannot be loaded.
    """
    env = os.environ if environ is None else environ
    options: dict[str, Any] = {}
    posture = _choice(env, "TRIFECTA_POSTURE", tuple(p.value for p in Posture))
    if posture is not None:
        options["posture"] = Posture(posture)
    worker = _choice(env, "TRIFECTA_WORKER", tuple(k.value for k in WorkerKind))
    if worker is not None:
        options["worker"] = WorkerKind(worker)
    stamps = _choice(env, "TRIFECTA_LEVEL_STAMPS", tuple(k.value for k in LevelStamps))
    if stamps is not None:
        options["level_stamps"] = LevelStamps(stamps)
    for option, name in _INTEGERS.items():
        number = _integer(env, name, 1)
        if number is not None:
            options[option] = number
    for option, name in _SECONDS.items():
        seconds = _seconds(env, name)
        if seconds is not None:
            options[option] = seconds
    niceness = _integer(env, "TRIFECTA_ENGINE_NICENESS", 0, 19)
    if niceness is not None:
        options["engine_niceness"] = niceness
    trusted = _names(env, "TRIFECTA_TRUSTED_SERVERS", ",")
    if trusted:
        options["trusted_servers"] = trusted
    if read_flag(env, "TRIFECTA_GUARDRAIL_ATTRIBUTES", False):
        options["guardrail_attributes"] = True
    policy = _read_policy(env)
    if policy is not None:
        options["policy"] = policy
    folders = _names(env, "TRIFECTA_RULES", os.pathsep)
    builtin = read_flag(env, "TRIFECTA_BUILTIN_RULES", True)
    if folders or not builtin:
        options["rules"] = load_rules(folders, builtin=builtin)
    return options


def _read_policy(env: Mapping[str, str]) -> Policy | None:
    """The policy the variables describe, or None when none of them is set (the default policy)."""
    defaults = Policy()
    mode = _choice(env, "TRIFECTA_POLICY", tuple(m.value for m in PolicyMode))
    policy = Policy(
        mode=PolicyMode(mode) if mode is not None else defaults.mode,
        enforce=read_flag(env, "TRIFECTA_ENFORCE", defaults.enforce),
        allowlist=_names(env, "TRIFECTA_ALLOWLIST", ","),
        conversation_is_private=read_flag(env, "TRIFECTA_CONVERSATION_IS_PRIVATE", defaults.conversation_is_private),
        hijack=read_flag(env, "TRIFECTA_HIJACK", defaults.hijack),
    )
    return None if policy == defaults else policy


def install_processor(
    tracer_provider: trace_api.TracerProvider | None = None,
    *,
    logger_provider: LoggerProvider | None = None,
    meter_provider: MeterProvider | None = None,
    on_alert: Callable[[TrifectaAlert], object] | None = None,
    environ: Mapping[str, str] | None = None,
) -> TrifectaSpanProcessor | None:
    """Add a :class:`~monitor.otel.TrifectaSpanProcessor` configured by the ``TRIFECTA_*`` variables to
    ``tracer_provider`` (default: the global one, which must be the SDK's); its alerts go to ``logger_provider``
    (default: the global one) and its counters to ``meter_provider`` (default: the global one).

    Never raises: returns None, and logs why on the ``monitor.otel`` logger, when ``OTEL_SDK_DISABLED`` is
    true, a variable cannot be read, the rules cannot be loaded, or the provider is not the SDK's. The
    processor is flushed when the interpreter exits, before the providers set up earlier shut down.
    """
    env = os.environ if environ is None else environ
    try:
        if env.get(ENV_SDK_DISABLED, "").strip().lower() == TRUE:  # the SDK's reading: anything else is false
            logger.info("trifecta-monitor: not installed, %s is true", ENV_SDK_DISABLED)
            return None
        options = read_processor_options(env)
        provider = tracer_provider if tracer_provider is not None else trace_api.get_tracer_provider()
        add = getattr(provider, "add_span_processor", None)
        if not callable(add):
            logger.error(
                "trifecta-monitor: not installed, the tracer provider is not the OpenTelemetry SDK's (%s)",
                type(provider).__name__,
            )
            return None
        processor = TrifectaSpanProcessor(
            **options,
            logger_provider=logger_provider,
            meter_provider=meter_provider if meter_provider is not None else get_meter_provider(),
            on_alert=on_alert,
        )
        add(processor)
    except (ValueError, TypeError, TrifectaError) as error:
        report_not_installed(str(error), logger_provider, meter_provider)
        return None
    except Exception as error:
        logger.exception("trifecta-monitor: not installed")
        report_not_installed(f"{type(error).__name__}: {error}", logger_provider, meter_provider, logged=True)
        return None
    atexit.register(_flush_at_exit, processor)
    return processor


def report_not_installed(
    why: str,
    logger_provider: LoggerProvider | None = None,
    meter_provider: MeterProvider | None = None,
    *,
    logged: bool = False,
) -> None:
    """Say loudly that the processor is not installed, where the application's operator looks: on standard
    error, as an ERROR on the ``monitor.otel`` logger, as an ERROR log record through the logger provider
    (default: the global one), and as ``trifecta.internal_errors`` (kind ``install``) on the meter provider
    (default: the global one). Never raises."""
    text = f"trifecta-monitor: the span processor is NOT installed, nothing is monitored: {why}"
    if not logged:
        logger.error("%s", text)
    with contextlib.suppress(Exception):
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
    with contextlib.suppress(Exception):
        from opentelemetry._logs import SeverityNumber, get_logger_provider

        provider = logger_provider if logger_provider is not None else get_logger_provider()
        provider.get_logger("trifecta-monitor").emit(
            severity_number=SeverityNumber.ERROR,
            severity_text="ERROR",
            body=text,
            attributes={ATTR_ERROR_KIND: "install"},
            event_name=EVENT_NOT_INSTALLED,
        )
    with contextlib.suppress(Exception):
        meters = meter_provider if meter_provider is not None else get_meter_provider()
        counter = meters.get_meter("trifecta-monitor").create_counter(
            METRIC_INTERNAL_ERRORS, unit="{error}", description="Internal failures of the trifecta monitor"
        )
        counter.add(1, {ATTR_ERROR_KIND: "install"})


def _flush_at_exit(processor: TrifectaSpanProcessor) -> None:
    """Analyse what is queued while the exporters set up before the processor still run (never raises)."""
    try:
        processor.force_flush(10_000)
    except Exception:
        logger.exception("trifecta-monitor: flush at exit failed")
