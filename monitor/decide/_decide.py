"""From a call's facts to a decision: the gates, the decision table, then the overlays (unexamined content,
steered actions, the ``reviewed-only`` policy, the baseline client), none of which weakens what came before."""

from __future__ import annotations

import dataclasses

from monitor.clients import ClientAction, decide_for_client
from monitor.decide._facts import CallFacts, ReviewFacts
from monitor.decide._policy import Policy, PolicyMode
from monitor.decide._table import _SEEN_IN_CONTENT, FINDINGS, VERDICTS, is_exfiltration, view_call
from monitor.models import (
    Action,
    Decision,
    Effect,
    Evidence,
    EvidenceKind,
    FragmentMatch,
    LabelledDestination,
    Leg,
    Level,
    Origin,
    Reason,
    ToolAnnotations,
    Transform,
)

_CLIENT_ACTIONS = {
    ClientAction.ASK: (Action.CONFIRM, Reason.BASELINE_ASKS),
    ClientAction.BLOCK: (Action.DENY, Reason.BASELINE_BLOCKS),
}


def decide_on_monitor_error(call_id: str | None) -> Decision:
    """Return the fail-safe answer when the monitor itself failed: ``confirm``, reason ``monitor-error``
    (what could not be examined counts against the call, never for it)."""
    return Decision(
        call_id=call_id or "unknown",
        action=Action.CONFIRM,
        level=Level.CLEAN,
        legs_before=frozenset(),
        legs_call=frozenset(),
        reasons=(Reason.MONITOR_ERROR,),
    )


def decide(policy: Policy, facts: CallFacts) -> Decision:
    """Return the decision on one call: the monitor's, made stricter by the policy's baseline client if it has
    one. Pure: the same facts always give the same decision. Never raises on valid facts."""
    decision = decide_trifecta(policy, facts)
    request = facts.request
    if policy.hijack and request.effects and request.steered_by is not None:
        decision = _confirm_hijack(decision, request.effects, request.steered_by)
    if policy.mode is PolicyMode.REVIEWED_ONLY:
        decision = _apply_reviewed_only(decision, facts.review)
    if policy.baseline is None:
        return decision
    client = decide_for_client(policy.baseline, request.annotations or ToolAnnotations())
    if client not in _CLIENT_ACTIONS:
        return decision
    action, reason = _CLIENT_ACTIONS[client]
    final = _stricter(decision.action, action)
    return decision.model_copy(
        update={"action": final, "reasons": (*decision.reasons, reason), "monitor_action": decision.action}
    )


def decide_trifecta(policy: Policy, facts: CallFacts) -> Decision:
    """Return what the monitor alone decides for one call (no baseline client), as the module describes."""
    decision = _decide_on_evidence(policy, facts)
    context = facts.context
    if decision.action is not Action.ALLOW or not context.unexamined or decision.level is not Level.TRIFECTA:
        return decision
    # What was not examined counts as possibly carrying what would stop the call.
    if _decide_on_evidence(policy, _assume_unexamined(facts)).action is Action.ALLOW:
        return decision
    sources = context.unexamined_sources or ("",)
    unexamined = tuple(
        Evidence(
            kind=EvidenceKind.UNEXAMINED,
            from_call=source or None,
            detail=(
                f"the result of {source} ({_describe_unexamined(context.unexamined)}) was not fully examined"
                if source
                else f"content ({_describe_unexamined(context.unexamined)}) the session's evidence index dropped"
            ),
        )
        for source in sources
    )
    return decision.model_copy(
        update={
            "action": Action.CONFIRM,
            "reasons": (*decision.reasons, Reason.EVIDENCE_TRUNCATED),
            "evidence": (*decision.evidence, *unexamined),
        }
    )


def _assume_unexamined(facts: CallFacts) -> CallFacts:
    """The facts as they would be if what was not examined held what matters: private content of each cut
    source in the call's arguments, and untrusted text naming every destination that only a listing, private
    text or a delegation sanctioned."""
    context, route, cargo = facts.context, facts.route, facts.cargo
    sources = context.unexamined_sources or ("",)
    fragments, embedded_fragments = list(cargo.fragments), list(cargo.embedded_fragments)
    if Leg.PRIVATE_DATA in context.unexamined:
        assumed = [FragmentMatch(source, "content not examined", Transform.VERBATIM) for source in sources]
        fragments.extend(assumed)
        embedded_fragments.extend(assumed)
    destinations, targets = list(route.destinations), list(route.targets)
    if Leg.UNTRUSTED_CONTENT in context.unexamined:
        destinations = [_as_attackers(d, sources[0]) for d in destinations]
        targets = [_as_attackers(d, sources[0]) for d in targets]
    return dataclasses.replace(
        facts,
        route=dataclasses.replace(route, destinations=destinations, targets=targets),
        cargo=dataclasses.replace(cargo, fragments=fragments, embedded_fragments=embedded_fragments),
    )


def _as_attackers(labelled: LabelledDestination, source: str) -> LabelledDestination:
    if labelled.origin not in _SEEN_IN_CONTENT:
        return labelled
    return LabelledDestination(labelled.destination, Origin.ATTACKER, source or labelled.from_call)


def _describe_unexamined(legs: frozenset[Leg]) -> str:
    names = {Leg.PRIVATE_DATA: "private data", Leg.UNTRUSTED_CONTENT: "untrusted content"}
    return ", ".join(names[leg] for leg in sorted(legs & names.keys(), key=lambda leg: leg.value)) or "content"


def _decide_on_evidence(policy: Policy, facts: CallFacts) -> Decision:
    base_level = facts.context.level
    if Leg.EXTERNAL_COMMUNICATION not in facts.request.legs:
        return _decision(facts, Action.ALLOW, base_level, (Reason.NO_EXTERNAL_COMMUNICATION,))
    if base_level is not Level.ARMED:
        return _decision(facts, Action.ALLOW, base_level, (Reason.NOT_ARMED,))
    view = view_call(facts)
    reasons = [finding.reason for finding in FINDINGS if finding.holds(view)]
    verdict = next(row for row in VERDICTS if row.holds(view))
    reasons.extend(verdict.reasons(view))
    exfiltration = is_exfiltration(view)
    action = verdict.action
    if action is Action.CONFIRM and (view.attacker or view.lookalike) and exfiltration and policy.enforce:
        action = Action.DENY
        reasons.append(Reason.ENFORCED)
    # Exfiltration is a level of calls the policy asks about or blocks; an allowed send is a trifecta.
    level = Level.EXFILTRATION if exfiltration and action is not Action.ALLOW else Level.TRIFECTA
    return _decision(facts, action, level, tuple(reasons))


def _confirm_hijack(decision: Decision, effects: frozenset[Effect], steered_by: tuple[str, str]) -> Decision:
    """A destructive, privileged or code-execution call whose target or content untrusted content chose."""
    value, source = steered_by
    evidence = Evidence(
        kind=EvidenceKind.STEERING,
        from_call=source,
        detail=f"{value[:200]} ({', '.join(sorted(e.value for e in effects))})",
    )
    action = _stricter(decision.action, Action.CONFIRM)
    return decision.model_copy(
        update={
            "action": action,
            "reasons": (*decision.reasons, Reason.STEERED_ACTION),
            "evidence": (*decision.evidence, evidence),
        }
    )


def _apply_reviewed_only(decision: Decision, review: ReviewFacts) -> Decision:
    """The ``reviewed-only`` rules: each adds its reason, and the stricter action wins (the level is kept)."""
    rules: list[tuple[Action, Reason]] = []
    evidence = list(decision.evidence)
    if review.outside_scope:
        rules.append((Action.DENY, Reason.OUT_OF_SCOPE))
        evidence.extend(Evidence(kind=EvidenceKind.SCOPE, from_call=None, detail=o) for o in review.outside_scope)
    if not review.reviewed:
        rules.append((Action.REVIEW, Reason.TOOL_UNREVIEWED))
    if review.review_requested:
        rules.append((Action.CONFIRM, Reason.REVIEW_REQUESTED))
    if review.writes:
        rules.append(
            (Action.ALLOW, Reason.APPROVAL_USED) if review.approved else (Action.CONFIRM, Reason.APPROVAL_REQUIRED)
        )
    if review.writes and review.retry_of is not None:
        rules.append((Action.CONFIRM, Reason.RECONCILE))
        # Not a data flow (from_call stays empty): the earlier attempt is named in the detail.
        detail = f"earlier attempt {review.retry_of}: no result, or an error"
        evidence.append(Evidence(kind=EvidenceKind.RETRY, from_call=None, detail=detail))
    if not rules:
        return decision
    action = _stricter(decision.action, *(a for a, _ in rules))
    reasons = (*decision.reasons, *(r for _, r in rules))
    return decision.model_copy(update={"action": action, "reasons": reasons, "evidence": tuple(evidence)})


def _stricter(*actions: Action) -> Action:
    """The strictest of the actions (the earliest of equals)."""
    return max(actions, key=lambda a: a.rank)


def _decision(facts: CallFacts, action: Action, level: Level, reasons: tuple[Reason, ...]) -> Decision:
    evidence = [
        Evidence(
            kind=EvidenceKind.DESTINATION,
            from_call=d.from_call,
            detail=f"{d.destination.value} at {d.destination.path}: {d.origin.value}",
        )
        for d in facts.route.destinations
    ]
    evidence.extend(
        Evidence(kind=EvidenceKind.FRAGMENT, from_call=f.from_call, detail=f"{f.text[:200]} ({f.transform.value})")
        for f in facts.cargo.fragments
    )
    return Decision(
        call_id=facts.call_id,
        action=action,
        level=level,
        legs_before=facts.context.legs,
        legs_call=facts.request.legs,
        reasons=reasons,
        rule_ids=facts.request.rule_ids,
        evidence=tuple(evidence),
    )
