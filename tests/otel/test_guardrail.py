"""Guardrail telemetry: each decision written with the attribute names proposed in
open-telemetry/semantic-conventions-genai pull request #427 (``docs/gen-ai/gen-ai-security.md``, development
status: ``gen_ai.guardrail.verdict.type`` = allow | audit | deny | escalate | modify | warn,
``gen_ai.guardrail.action.type`` = allow | audit | block | escalate | modify), behind a switch.

The session is the GitHub MCP incident of docs/examples/otel (GenAI semantic-convention spans).
"""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.trace import TracerProvider
from support.otel_example import load_example

from monitor.decide import Policy, PolicyMode
from monitor.models import Action, Decision, Level, Reason
from monitor.otel import (
    ATTR_GUARDRAIL_ACTION_TYPE,
    ATTR_GUARDRAIL_POLICY_ID,
    ATTR_GUARDRAIL_POLICY_RULE_ID,
    ATTR_GUARDRAIL_TARGET_ID,
    ATTR_GUARDRAIL_VERDICT_CODE,
    ATTR_GUARDRAIL_VERDICT_REASON,
    ATTR_GUARDRAIL_VERDICT_TYPE,
    TrifectaSpanProcessor,
    make_guardrail_attributes,
    make_policy_id,
)

SESSION = "conv_guardrail"
CALLS = ["toolu_01u8jzPde0IgxLd6GncfBAep", "toolu_01fJBd0Kh8oOOL8dKLzdocJ2", "toolu_01isAjIhKtJ0RlgLKOmxgJTe"]


def run_incident(**options: Any) -> list[tuple[str | None, dict[str, Any]]]:
    """Trace the incident through a processor with these options; the log records (event name, attributes)."""
    logs = InMemoryLogRecordExporter()  # type: ignore[no-untyped-call]
    logger_provider = LoggerProvider(shutdown_on_exit=False)
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    provider = TracerProvider(shutdown_on_exit=False)
    options.setdefault("worker", "thread")
    processor = TrifectaSpanProcessor(logger_provider=logger_provider, **options)
    provider.add_span_processor(processor)
    example = load_example()
    example.CONVERSATION = SESSION
    try:
        example.main(provider.get_tracer("test"))
        assert processor.force_flush()
    finally:
        provider.shutdown()
    return [(r.log_record.event_name, dict(r.log_record.attributes or {})) for r in logs.get_finished_logs()]


def test_off_by_default_the_output_is_unchanged() -> None:
    records = run_incident()
    assert {event for event, _ in records} == {"trifecta.alert"}
    assert not [key for _, attributes in records for key in attributes if key.startswith("gen_ai.")]
    switched = run_incident(guardrail_attributes=True)
    # The same alerts, with the same trifecta attributes: the switch only adds.
    alerts = [a for event, a in switched if event == "trifecta.alert"]
    stripped = [{k: v for k, v in a.items() if not k.startswith("gen_ai.guardrail.")} for a in alerts]
    assert stripped == [attributes for _, attributes in records]


@pytest.mark.parametrize("worker", ["thread", "process"])
def test_each_decision_is_recorded_with_its_verdict_apart_from_the_action(worker: str) -> None:
    records = run_incident(guardrail_attributes=True, worker=worker, engine_niceness=0)
    decisions = [attributes for event, attributes in records if event == "trifecta.decision"]
    assert [d[ATTR_GUARDRAIL_TARGET_ID] for d in decisions] == CALLS
    assert [(d["trifecta.action"], d[ATTR_GUARDRAIL_VERDICT_CODE]) for d in decisions] == [
        ("allow", "allow"),
        ("allow", "allow"),
        ("confirm", "confirm"),
    ]
    # Verdict: what the monitor decided; action: what the processor enforced (it only records).
    assert [d[ATTR_GUARDRAIL_VERDICT_TYPE] for d in decisions] == ["allow", "allow", "escalate"]
    assert [d[ATTR_GUARDRAIL_ACTION_TYPE] for d in decisions] == ["audit", "audit", "audit"]
    assert {d[ATTR_GUARDRAIL_POLICY_ID] for d in decisions} == {"trifecta-monitor/balanced"}
    assert [d["trifecta.level"] for d in decisions] == ["partial", "armed", "exfiltration"]
    pull_request = decisions[2]
    assert pull_request[ATTR_GUARDRAIL_POLICY_RULE_ID].endswith("/create_pull_request")
    assert "private-fragment" in pull_request[ATTR_GUARDRAIL_VERDICT_REASON].split(",")
    # The exfiltration alert carries its call's decision the same way.
    (alert,) = [a for event, a in records if event == "trifecta.alert" and a["trifecta.alert.kind"] == "exfiltration"]
    assert (alert[ATTR_GUARDRAIL_VERDICT_TYPE], alert[ATTR_GUARDRAIL_ACTION_TYPE]) == ("escalate", "audit")
    assert alert[ATTR_GUARDRAIL_TARGET_ID] == CALLS[2]


def test_enforcing_names_the_policy_but_the_processor_still_only_records() -> None:
    records = run_incident(guardrail_attributes=True, posture="strict", policy=Policy(enforce=True))
    decisions = [attributes for event, attributes in records if event == "trifecta.decision"]
    assert {d[ATTR_GUARDRAIL_POLICY_ID] for d in decisions} == {"trifecta-monitor/strict+enforce"}
    assert {d[ATTR_GUARDRAIL_ACTION_TYPE] for d in decisions} == {"audit"}


def test_the_policy_id_names_the_posture_enforcement_and_application_policy() -> None:
    assert make_policy_id("balanced", None) == "trifecta-monitor/balanced"
    assert make_policy_id("strict", Policy(enforce=True)) == "trifecta-monitor/strict+enforce"
    reviewed = Policy(mode=PolicyMode.REVIEWED_ONLY)
    assert make_policy_id("balanced", reviewed) == "trifecta-monitor/balanced+reviewed-only"


def test_a_deny_is_a_deny_verdict_recorded_not_enforced() -> None:
    decision = Decision(
        call_id="call-9",
        action=Action.DENY,
        level=Level.EXFILTRATION,
        legs_before=frozenset(),
        legs_call=frozenset(),
        reasons=(Reason.DESTINATION_ATTACKER_SUGGESTED, Reason.PRIVATE_FRAGMENT),
    )
    attributes = make_guardrail_attributes(decision, "trifecta-monitor/balanced+enforce")
    assert attributes[ATTR_GUARDRAIL_VERDICT_TYPE] == "deny"
    assert attributes[ATTR_GUARDRAIL_ACTION_TYPE] == "audit"
    assert attributes[ATTR_GUARDRAIL_VERDICT_REASON] == "destination-attacker-suggested,private-fragment"
    assert ATTR_GUARDRAIL_POLICY_RULE_ID not in attributes  # no reviewed rule decided it
    review = make_guardrail_attributes(decision.model_copy(update={"action": Action.REVIEW}), "p")
    assert (review[ATTR_GUARDRAIL_VERDICT_TYPE], review[ATTR_GUARDRAIL_VERDICT_CODE]) == ("escalate", "review")
