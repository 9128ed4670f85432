"""The session side of the ``reviewed-only`` policy (docs/policy.md): the facts :func:`monitor.decide.decide`
reads about a call — whether a reviewed rule covers its tool, whether it writes, whether an approval on record
covers it, whether it repeats a write whose outcome is unknown, and what of it lies outside the session's scope.
"""

from __future__ import annotations

from typing import Any

from monitor.classify import CallClassification, RuleSet, classify_effects
from monitor.decide import Policy, PolicyMode
from monitor.evidence import bound_arguments, extract_destinations
from monitor.models import Leg, ToolContext
from monitor.session._approvals import hash_arguments
from monitor.session._state import SessionState
from monitor.types import OverrideSource

MAX_ATTEMPTS = 4096
"""The most distinct writes a session remembers for retry checks; the oldest are forgotten first."""


def gather_reviewed_facts(
    state: SessionState,
    policy: Policy,
    rules: OverrideSource | None,
    context: ToolContext,
    classified: CallClassification,
    call_id: str,
) -> dict[str, Any]:
    """Return the ``reviewed-only`` fields of a call's :class:`~monitor.decide.CallFacts`. Uses the approval that
    covers the call (a single-use one is then gone) and remembers the call as the latest attempt of its kind.
    Under any other policy: no fields, and the session is left as it is."""
    if policy.mode is not PolicyMode.REVIEWED_ONLY:
        return {}
    server, tool, args = context.server, context.name, context.arguments
    entry = None
    if classified.rule_ids and isinstance(rules, RuleSet):
        found = rules.find(server, tool)
        entry = found[1] if found is not None else None
    writes = _writes(context, classified, entry.read_only if entry is not None else None)
    digest = hash_arguments(args)
    approved = writes and state.approvals.take(server, tool, digest)
    retry_of = None
    if writes:
        key = (server, tool, digest)
        earlier = state.by_id.get(state.attempts.pop(key, ""))
        if earlier is not None and (not earlier.answered or earlier.failed) and not (entry and entry.retry == "safe"):
            retry_of = earlier.call_id
        state.attempts[key] = call_id
        while len(state.attempts) > MAX_ATTEMPTS:
            del state.attempts[next(iter(state.attempts))]
    scope = state.scope if state.scope is not None else policy.scope
    outside: tuple[str, ...] = ()
    if scope is not None:
        examined, cut = bound_arguments(args) if args is not None else (None, True)
        destinations = extract_destinations(examined, classified.destinations) if examined else []
        outside = scope.find_outside(server, tool, destinations)
        if cut and scope.destinations is not None:  # what was not examined counts against the call
            outside = (*outside, "destinations in arguments that could not all be examined")
    return {
        "reviewed": bool(classified.rule_ids),
        "writes": writes,
        "approved": approved,
        "retry_of": retry_of,
        "outside_scope": outside,
        "review_requested": _requests_review(context),
    }


def _requests_review(context: ToolContext) -> bool:
    """The tool's action-metadata extension asks for a person's confirmation (``requiresReview: true``). Only
    adds a confirmation, so it is taken from any server; a value that is not a boolean counts as a request."""
    metadata = context.definition.action_metadata if context.definition is not None else None
    if not isinstance(metadata, dict) or "requiresReview" not in metadata:
        return False
    return metadata["requiresReview"] is not False


def _writes(context: ToolContext, classified: CallClassification, read_only: bool | None) -> bool:
    """A call writes unless its reviewed rule says it only reads, or (the rule silent) its annotations say
    ``readOnlyHint: true`` and it neither sends out nor has a destructive, privileged or code-execution effect."""
    if read_only is not None:
        return not read_only
    annotations = context.definition.annotations if context.definition is not None else None
    if annotations is None or annotations.readOnlyHint is not True:
        return True
    return Leg.EXTERNAL_COMMUNICATION in classified.classification.legs or bool(classify_effects(context))
