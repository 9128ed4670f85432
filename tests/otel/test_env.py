"""The span processor configured by ``TRIFECTA_*`` environment variables, and installed from them.

Boolean variables follow the OpenTelemetry specification's convention for environment variables
(``true``/``false``, case-insensitive; "Configuration: Environment Variable Specification", v1.45); the SDK's
own switch ``OTEL_SDK_DISABLED`` installs nothing.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import NoOpTracerProvider
from support.otel_example import load_example

from monitor.classify import RuleSet
from monitor.decide import Policy, PolicyMode
from monitor.models import Posture
from monitor.otel import (
    ENVIRONMENT_VARIABLES,
    LevelStamps,
    TrifectaSpanProcessor,
    WorkerKind,
    install_processor,
    read_processor_options,
)
from monitor.otel._config import ProcessorConfig

EVERY_OPTION = {
    "TRIFECTA_POSTURE": "STRICT",
    "TRIFECTA_TRUSTED_SERVERS": " github , linear ",
    "TRIFECTA_POLICY": "Reviewed-Only",
    "TRIFECTA_ENFORCE": "True",
    "TRIFECTA_ALLOWLIST": "example.com,ops@example.org",
    "TRIFECTA_CONVERSATION_IS_PRIVATE": "false",
    "TRIFECTA_HIJACK": "FALSE",
    "TRIFECTA_WORKER": "thread",
    "TRIFECTA_MAX_SPANS": "500",
    "TRIFECTA_SPAN_TTL": "60.5",
    "TRIFECTA_MAX_SESSIONS": "70",
    "TRIFECTA_SESSION_TTL": "120",
    "TRIFECTA_MAX_QUEUE_BYTES": "1048576",
    "TRIFECTA_MAX_ENGINE_BYTES": "2097152",
    "TRIFECTA_CHECK_TIMEOUT": "0.5",
    "TRIFECTA_LEVEL_STAMPS": "all",
    "TRIFECTA_ENGINE_NICENESS": "0",
    "TRIFECTA_GUARDRAIL_ATTRIBUTES": "true",
}


def _processors(provider: TracerProvider) -> list[Any]:
    return list(provider._active_span_processor._span_processors)


def test_every_option_is_read_from_its_own_variable() -> None:
    options = read_processor_options(EVERY_OPTION)
    assert options == {
        "posture": Posture.STRICT,
        "trusted_servers": ("github", "linear"),
        "policy": Policy(
            mode=PolicyMode.REVIEWED_ONLY,
            enforce=True,
            allowlist=("example.com", "ops@example.org"),
            conversation_is_private=False,
            hijack=False,
        ),
        "worker": WorkerKind.THREAD,
        "max_spans": 500,
        "span_ttl": 60.5,
        "max_sessions": 70,
        "session_ttl": 120.0,
        "max_queue_bytes": 1048576,
        "max_engine_bytes": 2097152,
        "check_timeout": 0.5,
        "level_stamps": LevelStamps.ALL,
        "engine_niceness": 0,
        "guardrail_attributes": True,
    }
    processor = TrifectaSpanProcessor(**options)
    try:
        config = processor.config
        assert (config.max_spans, config.span_ttl, config.max_sessions, config.session_ttl) == (500, 60.5, 70, 120.0)
        assert config.trusted_servers == frozenset({"github", "linear"})
        assert config.guardrail_attributes and config.level_stamps is LevelStamps.ALL
        assert processor.worker_kind is WorkerKind.THREAD
    finally:
        processor.shutdown()


def test_unset_or_empty_variables_leave_the_defaults() -> None:
    assert read_processor_options({}) == {}
    assert read_processor_options(dict.fromkeys(EVERY_OPTION, " ")) == {}
    # Values equal to the defaults give the default policy, not a new one.
    assert read_processor_options({"TRIFECTA_ENFORCE": "false", "TRIFECTA_HIJACK": "true"}) == {}


def test_every_documented_variable_is_read(tmp_path: Path) -> None:
    documented = {variable.name for variable in ENVIRONMENT_VARIABLES}
    read = set(EVERY_OPTION) | {"TRIFECTA_ENABLED", "TRIFECTA_RULES", "TRIFECTA_BUILTIN_RULES"}
    assert documented == read
    table = (Path(__file__).parents[2] / "docs" / "otel.md").read_text(encoding="utf-8")
    rows = {
        line.split("|")[1].strip(" `"): line.split("|")
        for line in table.splitlines()
        if line.startswith("| `TRIFECTA_")
    }
    config = ProcessorConfig()
    for variable in ENVIRONMENT_VARIABLES:
        row = rows[variable.name]
        assert variable.default in row[4], (variable.name, row[4])  # the documented default is the one read
        default = getattr(config, variable.option, None)
        if isinstance(default, int | float) and not isinstance(default, bool):
            assert float(variable.default) == default, variable.name  # and the processor's own


@pytest.mark.parametrize(
    ("name", "value", "accepted"),
    [
        ("TRIFECTA_POSTURE", "lax", "strict, balanced"),
        ("TRIFECTA_POLICY", "reviewed", "default, reviewed-only"),
        ("TRIFECTA_WORKER", "fork", "process, thread"),
        ("TRIFECTA_LEVEL_STAMPS", "some", "tools, all, none"),
        ("TRIFECTA_MAX_SPANS", "lots", "a positive integer"),
        ("TRIFECTA_MAX_SPANS", "0", "a positive integer"),
        ("TRIFECTA_MAX_SESSIONS", "-3", "a positive integer"),
        ("TRIFECTA_MAX_QUEUE_BYTES", "1.5", "a positive integer (bytes)"),
        ("TRIFECTA_MAX_ENGINE_BYTES", "1e9", "a positive integer (bytes)"),
        ("TRIFECTA_SPAN_TTL", "-1", "positive seconds"),
        ("TRIFECTA_SESSION_TTL", "nan", "positive seconds"),
        ("TRIFECTA_CHECK_TIMEOUT", "soon", "positive seconds"),
        ("TRIFECTA_CHECK_TIMEOUT", "1e10", "positive seconds"),
        ("TRIFECTA_ENGINE_NICENESS", "20", "an integer from 0 to 19"),
        ("TRIFECTA_ENFORCE", "enabled", "true or false (1/0, yes/no, on/off)"),
        ("TRIFECTA_GUARDRAIL_ATTRIBUTES", "2", "true or false (1/0, yes/no, on/off)"),
        ("TRIFECTA_BUILTIN_RULES", "none", "true or false (1/0, yes/no, on/off)"),
        ("TRIFECTA_CONVERSATION_IS_PRIVATE", "y", "true or false (1/0, yes/no, on/off)"),
        ("TRIFECTA_HIJACK", "disabled", "true or false (1/0, yes/no, on/off)"),
    ],
)
def test_a_bad_value_names_the_variable_and_what_it_accepts(name: str, value: str, accepted: str) -> None:
    with pytest.raises(ValueError) as raised:
        read_processor_options({name: value})
    assert str(raised.value) == f"{name}={value!r} is not valid: expected {accepted}"


def test_rules_folders_and_the_builtin_switch(tmp_path: Path) -> None:
    options = read_processor_options({"TRIFECTA_BUILTIN_RULES": "false"})
    assert isinstance(options["rules"], RuleSet) and len(options["rules"].rules) == 0
    missing = tmp_path / "missing"
    with pytest.raises(Exception, match="no such rules folder"):
        read_processor_options({"TRIFECTA_RULES": str(missing)})


def test_install_adds_the_processor_beside_the_exporters_already_there() -> None:
    provider = TracerProvider(shutdown_on_exit=False)
    before = _processors(provider)
    processor = install_processor(provider, environ={"TRIFECTA_WORKER": "thread", "TRIFECTA_MAX_SPANS": "9"})
    try:
        assert processor is not None and processor.config.max_spans == 9
        assert _processors(provider) == [*before, processor]
    finally:
        provider.shutdown()


@pytest.mark.parametrize(
    ("environ", "logged"),
    [
        ({"TRIFECTA_MAX_SPANS": "lots"}, "TRIFECTA_MAX_SPANS='lots' is not valid: expected a positive integer"),
        ({"TRIFECTA_RULES": "/nonexistent/rules"}, "no such rules folder"),
        ({"OTEL_SDK_DISABLED": "true"}, "OTEL_SDK_DISABLED is true"),
        ({"OTEL_SDK_DISABLED": "TRUE", "TRIFECTA_ENFORCE": "true"}, "OTEL_SDK_DISABLED is true"),
    ],
)
def test_install_never_raises_and_installs_nothing_half_configured(
    environ: dict[str, str], logged: str, caplog: pytest.LogCaptureFixture
) -> None:
    provider = TracerProvider(shutdown_on_exit=False)
    with caplog.at_level(logging.INFO, logger="monitor.otel"):
        assert install_processor(provider, environ={"TRIFECTA_WORKER": "thread", **environ}) is None
    assert _processors(provider) == []
    assert logged in caplog.text and ("not installed" in caplog.text or "NOT installed" in caplog.text)


def test_install_refuses_a_tracer_provider_that_is_not_the_sdks(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="monitor.otel"):
        assert install_processor(NoOpTracerProvider(), environ={}) is None
    assert "not the OpenTelemetry SDK's (NoOpTracerProvider)" in caplog.text


def test_alerts_go_to_the_global_logger_provider_when_none_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    """With no ``logger_provider``, the alerts' log records go to the global one
    (``opentelemetry._logs.get_logger_provider()``), as one configured by ``opentelemetry-instrument``."""
    import monitor.otel._processor as module

    logs = InMemoryLogRecordExporter()  # type: ignore[no-untyped-call]
    global_provider = LoggerProvider(shutdown_on_exit=False)
    global_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    monkeypatch.setattr(module, "get_logger_provider", lambda: global_provider)
    provider = TracerProvider(shutdown_on_exit=False)
    processor = install_processor(provider, environ={"TRIFECTA_WORKER": "thread"})
    assert processor is not None
    try:
        load_example().main(provider.get_tracer("test"))
        assert processor.force_flush()
        kinds = [record.log_record.attributes["trifecta.alert.kind"] for record in logs.get_finished_logs()]
        assert "exfiltration" in kinds
    finally:
        provider.shutdown()


def test_both_hooks_try_once_so_a_bad_value_is_logged_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The configurator and the post-instrument hook read the same environment: the second asks no more."""
    from monitor.otel import _auto

    monkeypatch.setattr(_auto, "_attempts", [])
    monkeypatch.setenv("TRIFECTA_SESSION_TTL", "an hour")
    with caplog.at_level("ERROR", logger="monitor.otel"):
        assert _auto.install_once() is None
        assert _auto.install_once() is None
    assert [r.getMessage() for r in caplog.records].count(
        "trifecta-monitor: the span processor is NOT installed, nothing is monitored: TRIFECTA_SESSION_TTL='an hour'"
        " is not valid: expected positive seconds"
    ) == 1


@pytest.mark.parametrize(
    ("value", "expected"), [("1", True), ("yes", True), ("ON", True), ("0", False), ("off", False)]
)
def test_switches_take_the_usual_spellings(value: str, expected: bool) -> None:
    """``TRIFECTA_ENFORCE=1`` turns enforcement on, as ``true`` does; ``off`` turns it off."""
    options = read_processor_options({"TRIFECTA_ENFORCE": value, "TRIFECTA_HIJACK": "true"})
    policy = options.get("policy")
    assert (policy.enforce if policy is not None else False) is expected


def test_a_value_that_is_no_switch_is_refused_loudly(capsys: pytest.CaptureFixture[str]) -> None:
    """``TRIFECTA_ENFORCE=enabled`` is refused at start-up: the processor is not installed, and the operator sees
    it on standard error, as an ERROR log record through the logger provider, and as a counted internal error."""
    logs = InMemoryLogRecordExporter()  # type: ignore[no-untyped-call]
    logger_provider = LoggerProvider(shutdown_on_exit=False)
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    metrics = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[metrics])
    provider = TracerProvider(shutdown_on_exit=False)
    processor = install_processor(
        provider,
        logger_provider=logger_provider,
        meter_provider=meter_provider,
        environ={"TRIFECTA_ENFORCE": "enabled"},
    )
    assert processor is None
    assert "the span processor is NOT installed" in capsys.readouterr().err
    [record] = logs.get_finished_logs()
    assert record.log_record.severity_text == "ERROR" and "TRIFECTA_ENFORCE='enabled'" in str(record.log_record.body)
    data = metrics.get_metrics_data()
    points = [
        point
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == "trifecta.internal_errors"
        for point in metric.data.data_points
    ]
    assert [(p.value, dict(p.attributes)) for p in points] == [(1, {"trifecta.error.kind": "install"})]


@pytest.mark.parametrize("entry", ["com", "*", ".co.uk", "*.corp.example", "github.io"])
def test_an_allowlist_entry_that_allows_everyone_under_a_suffix_is_refused(entry: str) -> None:
    """``TRIFECTA_ALLOWLIST=com`` would allow every .com address: refused, naming the entry."""
    with pytest.raises(ValueError, match="is refused"):
        read_processor_options({"TRIFECTA_ALLOWLIST": f"corp.example,{entry}"})
