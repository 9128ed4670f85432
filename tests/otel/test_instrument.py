"""Zero-code installation: the example program of docs/examples/otel run under the real ``opentelemetry-instrument``
command (packages ``opentelemetry-distro`` and ``opentelemetry-instrumentation``), configured by environment
variables only.

The program traces the GitHub MCP incident with the GenAI semantic conventions' spans (``invoke_agent``,
``chat``, ``execute_tool``; development status, 2026-10). Its output is read as the SDK's console exporters write
it: one JSON object per log record (``ConsoleLogRecordExporter``: ``body``, ``attributes``, ``event_name``) and per
span (``ConsoleSpanExporter``: ``name``, ``context``, ``attributes``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

EXAMPLE = Path(__file__).parents[2] / "docs" / "examples" / "otel" / "github_incident.py"
INSTRUMENT = Path(sys.executable).parent / "opentelemetry-instrument"
SESSION = "conv_trifecta_zero_code"


def test_opentelemetry_instrument_is_installed_with_the_test_extra() -> None:
    assert INSTRUMENT.exists(), f"{INSTRUMENT} is missing: install the project with '.[test]' (or '.[otel]')"


def run_instrumented(**variables: str) -> tuple[list[dict[str, Any]], str]:
    """Run the example under ``opentelemetry-instrument`` with these variables (and none of the caller's
    ``OTEL_*``/``TRIFECTA_*``); the JSON objects it printed, and its standard error."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("OTEL_", "TRIFECTA_"))}
    env.update({"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "console"})
    env.update(variables)
    done = subprocess.run(
        [str(INSTRUMENT), sys.executable, str(EXAMPLE), SESSION],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return read_json_objects(done.stdout), done.stderr


def read_json_objects(text: str) -> list[dict[str, Any]]:
    """The JSON objects printed one after the other (the console exporters indent theirs over several lines)."""
    decoder = json.JSONDecoder()
    objects, index = [], 0
    while True:
        while index < len(text) and text[index].isspace():
            index += 1
        if index >= len(text):
            return objects
        value, index = decoder.raw_decode(text, index)
        objects.append(value)


def read_alerts(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``trifecta.alert`` log records' attributes."""
    return [item["attributes"] for item in objects if item.get("event_name") == "trifecta.alert"]


def test_the_switch_adds_the_processor_and_its_alerts_are_exported_as_log_records() -> None:
    # The engine in its own process (the default), at the application's priority on a busy test machine.
    objects, _ = run_instrumented(TRIFECTA_ENABLED="true", TRIFECTA_ENGINE_NICENESS="0", OTEL_TRACES_EXPORTER="console")
    alerts = read_alerts(objects)
    exfiltration = [alert for alert in alerts if alert["trifecta.alert.kind"] == "exfiltration"]
    assert len(exfiltration) == 1, alerts
    alert = exfiltration[0]
    assert alert["trifecta.session_id"] == SESSION
    assert (alert["trifecta.server"], alert["trifecta.tool"]) == ("github", "create_pull_request")
    assert alert["trifecta.alert.path"] == [
        "toolu_01u8jzPde0IgxLd6GncfBAep",
        "toolu_01fJBd0Kh8oOOL8dKLzdocJ2",
        "toolu_01isAjIhKtJ0RlgLKOmxgJTe",
    ]
    assert "gen_ai.guardrail.verdict.type" not in alert  # guardrail attributes are off by default
    # The distro's own exporters still run beside the processor: the spans are exported, stamped.
    spans = {item["name"]: item for item in objects if "context" in item and "name" in item}
    pull_request = spans["execute_tool mcp__github__create_pull_request"]
    assert pull_request["attributes"]["trifecta.session_id"] == SESSION


def test_selecting_the_configurator_by_name_adds_the_processor() -> None:
    objects, _ = run_instrumented(OTEL_PYTHON_CONFIGURATOR="trifecta", TRIFECTA_WORKER="thread")
    kinds = {alert["trifecta.alert.kind"] for alert in read_alerts(objects)}
    assert "exfiltration" in kinds


def test_without_the_switch_nothing_is_added() -> None:
    objects, _ = run_instrumented()
    assert read_alerts(objects) == []
    objects, _ = run_instrumented(OTEL_PYTHON_CONFIGURATOR="trifecta", TRIFECTA_ENABLED="false")
    assert read_alerts(objects) == []


def test_the_sdk_switch_turns_it_off_too() -> None:
    objects, _ = run_instrumented(TRIFECTA_ENABLED="true", OTEL_SDK_DISABLED="true")
    assert read_alerts(objects) == []


def test_a_bad_value_is_logged_and_the_application_runs_without_the_processor() -> None:
    objects, stderr = run_instrumented(TRIFECTA_ENABLED="true", TRIFECTA_SESSION_TTL="an hour")
    assert read_alerts(objects) == []
    assert "TRIFECTA_SESSION_TTL='an hour' is not valid: expected positive seconds" in stderr


def test_guardrail_attributes_by_variable() -> None:
    objects, _ = run_instrumented(
        TRIFECTA_ENABLED="true", TRIFECTA_GUARDRAIL_ATTRIBUTES="true", TRIFECTA_WORKER="thread"
    )
    decisions = [item["attributes"] for item in objects if item.get("event_name") == "trifecta.decision"]
    assert [d["gen_ai.guardrail.verdict.type"] for d in decisions] == ["allow", "allow", "escalate"]
    assert {d["gen_ai.guardrail.action.type"] for d in decisions} == {"audit"}
    assert {d["trifecta.session_id"] for d in decisions} == {SESSION}


def test_the_engine_process_is_not_instrumented_itself() -> None:
    """``opentelemetry-instrument`` puts its ``sitecustomize`` folder first on ``PYTHONPATH``; the engine process
    must not inherit it (its exporters would write into the engine's pipe)."""
    from monitor.otel._workers import make_child_environment

    folder = os.path.join("venv", "site-packages", "opentelemetry", "instrumentation", "auto_instrumentation")
    env = make_child_environment({"PYTHONPATH": os.pathsep.join([folder, "/app"]), "HOME": "/root"})
    assert env == {"PYTHONPATH": "/app", "HOME": "/root"}
    assert make_child_environment({"PYTHONPATH": folder}) == {}
