"""The session side of the ``reviewed-only`` policy (docs/policy.md): the facts :func:`monitor.decide.decide`
reads about a call — whether a reviewed rule covers its tool, whether it writes, whether an approval on record
covers it, whether it repeats a write whose outcome is unknown, and what of it lies outside the session's scope.
"""

from __future__ import annotations

from typing import Any

from monitor.classify import CallClassification, classify_effects
from monitor.decide import Policy, PolicyMode, ReviewFacts
from monitor.evidence import extract_destinations
from monitor.models import Leg, ToolContext
from monitor.session._approvals import hash_arguments
from monitor.session._state import SessionState

MAX_ATTEMPTS = 4096
"""The most distinct writes a session remembers for retry checks; the oldest are forgotten first."""


def gather_reviewed_facts(
    state: SessionState,
    policy: Policy,
    context: ToolContext,
    classified: CallClassification,
    examined: dict[str, Any] | None,
    cut: bool,
) -> tuple[ReviewFacts, tuple[str, str, str] | None]:
    """Return what the ``reviewed-only`` policy reads of a call (its :class:`~monitor.decide.ReviewFacts`), and the
    key of the call as an attempt of a write (None for a read). An approval that covers the call is used by
    :func:`remember_attempt`, once the call is decided. ``examined`` and ``cut`` are the call's arguments as the
    engine examined them (None: not recorded). Under any other policy: the defaults, and the session is left as it
    is."""
    if policy.mode is not PolicyMode.REVIEWED_ONLY:
        return ReviewFacts(), None
    server, tool = context.server, context.name
    writes = _writes(context, classified)
    approved, retry_of, key = False, None, None
    if writes:
        key = (server, tool, hash_arguments(context.arguments))
        approved = state.approvals.covers(*key)
        earlier = state.by_id.get(state.attempts.get(key, ""))
        if earlier is not None and (not earlier.answered or earlier.failed) and not classified.retry_safe:
            retry_of = earlier.call_id
    scope = state.scope if state.scope is not None else policy.scope
    outside: tuple[str, ...] = ()
    if scope is not None:
        # Destinations are read only for a scope that lists them.
        by_destination = scope.destinations is not None
        # Every place any argument names, not only recipient arguments: ``target``, ``server``, a link in a body.
        destinations = (
            extract_destinations(examined, classified.destinations, every=True) if by_destination and examined else []
        )
        outside = scope.find_outside(server, tool, destinations)
        if by_destination and (cut or context.arguments is None):  # what was not examined counts against the call
            outside = (*outside, "destinations in arguments that could not all be examined")
    facts = ReviewFacts(
        reviewed=bool(classified.rule_ids),
        writes=writes,
        approved=approved,
        retry_of=retry_of,
        outside_scope=outside,
        review_requested=_requests_review(context),
    )
    return facts, key


def remember_attempt(state: SessionState, key: tuple[str, str, str] | None, call_id: str, denied: bool) -> None:
    """Remember a write as the latest attempt of its kind (server, tool, arguments), for the retry rule, and use
    the approval that covered it (a single-use one is then gone). A denied call never ran: the earlier attempt,
    if any, stays the latest, and its approval stays on record."""
    if key is None or denied:
        return
    state.approvals.use(*key)
    state.attempts.pop(key, None)
    state.attempts[key] = call_id
    while len(state.attempts) > MAX_ATTEMPTS:
        del state.attempts[next(iter(state.attempts))]


def _writes(context: ToolContext, classified: CallClassification) -> bool:
    """A call writes unless its reviewed rule says it only reads, or (the rule silent) its annotations say
    ``readOnlyHint: true`` and it has no destructive, privileged or code-execution effect. Either way, a call
    that sends out (an ``external_communication`` leg, e.g. a read of a remote share) writes."""
    if Leg.EXTERNAL_COMMUNICATION in classified.classification.legs or classified.read_only is False:
        return True
    if classified.read_only:
        return False
    annotations = context.definition.annotations if context.definition is not None else None
    if annotations is None or annotations.readOnlyHint is not True:
        return True
    return bool(classify_effects(context))


def _requests_review(context: ToolContext) -> bool:
    """The tool's action-metadata extension asks for a person's confirmation (``requiresReview: true``). Only
    adds a confirmation, so it is taken from any server; a value that is not a boolean counts as a request."""
    metadata = context.definition.action_metadata if context.definition is not None else None
    if not isinstance(metadata, dict) or "requiresReview" not in metadata:
        return False
    return metadata["requiresReview"] is not False
