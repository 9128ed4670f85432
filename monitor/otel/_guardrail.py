"""Guardrail telemetry: each decision written with the guardrail attribute names being proposed for OpenTelemetry.

The names and values come from the proposal open-telemetry/semantic-conventions-genai pull request #427
("gen-ai: add run guardrail span and security finding", open, successor of #262), as its document
``docs/gen-ai/gen-ai-security.md`` stands in its latest revision (status: Development; its first description
used a ``gen_ai.security.*`` namespace, since renamed to ``gen_ai.guardrail.*``). They may change: they are
kept here as our own constants (nothing is imported from ``opentelemetry-semantic-conventions``), written only
with ``guardrail_attributes=True``.

The proposal keeps the *verdict* (what the guardrail decided) apart from the *action* (what the caller
enforced). The monitor's decision is the verdict: ``allow`` → ``allow``, ``confirm`` and ``review`` →
``escalate``, ``deny`` → ``deny``. The span processor only observes: a tool span reaches it after its call ran,
and a host that asks first (``check_tool_call``) applies the answer itself. So what the processor enforced is
always ``audit`` (the decision is recorded, execution unchanged), whatever the verdict and whether or not the
policy's ``enforce`` is on (``enforce`` changes the verdict, never what the processor does).
"""

from __future__ import annotations

from typing import Any

from monitor.decide import Policy, PolicyMode
from monitor.models import Decision

GUARDRAIL_PROPOSAL = "open-telemetry/semantic-conventions-genai#427"
"""Where the guardrail names below are proposed (in development: they may change)."""

ATTR_GUARDRAIL_COMPONENT_NAME = "gen_ai.guardrail.component.name"
"""The guardrail that decided: always :data:`GUARDRAIL_COMPONENT`."""
ATTR_GUARDRAIL_TARGET_TYPE = "gen_ai.guardrail.target.type"
"""What was evaluated, by direction: ``input`` (a requested call, before its result)."""
ATTR_GUARDRAIL_TARGET_SUBTYPE = "gen_ai.guardrail.target.subtype"
"""What was evaluated: ``tool_call``."""
ATTR_GUARDRAIL_TARGET_ID = "gen_ai.guardrail.target.id"
"""The call the decision is about (the monitor's call id: the tool call id when the span gave one)."""
ATTR_GUARDRAIL_VERDICT_TYPE = "gen_ai.guardrail.verdict.type"
"""The verdict: ``allow``, ``escalate`` or ``deny`` (:data:`VERDICT_BY_ACTION`)."""
ATTR_GUARDRAIL_VERDICT_CODE = "gen_ai.guardrail.verdict.code"
"""The monitor's own action behind the verdict (``allow``, ``confirm``, ``review``, ``deny``)."""
ATTR_GUARDRAIL_VERDICT_REASON = "gen_ai.guardrail.verdict.reason"
"""The decision's reason codes, joined by commas (low cardinality; no user content)."""
ATTR_GUARDRAIL_ACTION_TYPE = "gen_ai.guardrail.action.type"
"""What the span processor enforced: always ``audit`` (it records; the host executes or not)."""
ATTR_GUARDRAIL_POLICY_ID = "gen_ai.guardrail.security.policy.id"
"""The policy that produced the verdict: ``trifecta-monitor/<posture>``, with ``+enforce`` when enforcing and
``+reviewed-only`` under that application policy."""
ATTR_GUARDRAIL_POLICY_RULE_ID = "gen_ai.guardrail.security.policy.rule.id"
"""The reviewed rules that classified the call, their ids joined by commas (absent when none did)."""

GUARDRAIL_COMPONENT = "trifecta-monitor"
"""The value of :data:`ATTR_GUARDRAIL_COMPONENT_NAME`."""
ACTION_AUDIT = "audit"
"""The proposal's action value for "recorded for audit without changing execution"."""

VERDICT_BY_ACTION: dict[str, str] = {"allow": "allow", "confirm": "escalate", "review": "escalate", "deny": "deny"}
"""The proposal's verdict value for each of the monitor's actions (another action is written as it is)."""


def make_policy_id(posture: str, policy: Policy | None) -> str:
    """The :data:`ATTR_GUARDRAIL_POLICY_ID` value: ``trifecta-monitor/balanced``, ``…/strict+enforce``, and with an
    application policy other than the default its name too (``…/balanced+reviewed-only``)."""
    suffix = "+enforce" if policy is not None and policy.enforce else ""
    if policy is not None and policy.mode is not PolicyMode.DEFAULT:
        suffix += f"+{policy.mode.value}"
    return f"{GUARDRAIL_COMPONENT}/{posture}{suffix}"


def make_guardrail_attributes(decision: Decision, policy_id: str) -> dict[str, Any]:
    """The guardrail attributes of one decision: the verdict (the monitor's decision), the action the span
    processor enforced (``audit``), the policy and the reviewed rules behind it, and the call it is about."""
    action = decision.action.value
    attributes: dict[str, Any] = {
        ATTR_GUARDRAIL_COMPONENT_NAME: GUARDRAIL_COMPONENT,
        ATTR_GUARDRAIL_TARGET_TYPE: "input",
        ATTR_GUARDRAIL_TARGET_SUBTYPE: "tool_call",
        ATTR_GUARDRAIL_TARGET_ID: decision.call_id,
        ATTR_GUARDRAIL_VERDICT_TYPE: VERDICT_BY_ACTION.get(action, action),
        ATTR_GUARDRAIL_VERDICT_CODE: action,
        ATTR_GUARDRAIL_ACTION_TYPE: ACTION_AUDIT,
        ATTR_GUARDRAIL_POLICY_ID: policy_id,
    }
    if decision.reasons:
        attributes[ATTR_GUARDRAIL_VERDICT_REASON] = ",".join(reason.value for reason in decision.reasons)
    if decision.rule_ids:
        attributes[ATTR_GUARDRAIL_POLICY_RULE_ID] = ",".join(decision.rule_ids)
    return attributes
