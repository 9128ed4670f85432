"""One session's engine, on its state: decide a requested call and record it, record a result, and let what ran
enter the context. :class:`~monitor.session._monitor.SessionMonitor` runs these under the session's lock, and
never lets them raise into its host."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from monitor.classify import CallClassification, Classifier, apply_labels, read_result_labels
from monitor.decide import (
    CallFacts,
    CargoFacts,
    ContextFacts,
    IntentFacts,
    Policy,
    RequestFacts,
    RouteFacts,
    decide,
)
from monitor.evidence import (
    ReadBounds,
    Reading,
    asks_for_action,
    asks_to_send_secret,
    bound_arguments,
    is_own_store_write,
    iter_argument_texts,
)
from monitor.models import Action, Decision, FragmentMatch, Leg, Level, ToolContext
from monitor.session._boundary import note_call_id
from monitor.session._facts import (
    ARMED_LEGS,
    alert_on_decision,
    alert_on_truncation,
    alert_on_unchecked_pin,
    alert_on_void_pin,
    backed_legs,
    find_steered_action,
    unexamined_content,
)
from monitor.session._reviewed import gather_reviewed_facts, remember_attempt
from monitor.session._sends import SendEvidence, gather_send_evidence
from monitor.session._state import CallRecord, SessionState, level_of_legs


def decide_call(
    state: SessionState,
    policy: Policy,
    classifier: Classifier,
    server: str,
    tool: str,
    arguments: Mapping[str, Any] | None,
    call_id: str | None,
) -> Decision:
    """Classify the call, gather its evidence when it matters, decide, and record it with its alerts."""
    index = len(state.calls)
    args = dict(arguments) if isinstance(arguments, Mapping) else None
    # Evidence is read from a bounded view of the arguments; what it leaves out counts against the call.
    examined, args_cut = bound_arguments(args) if args is not None else (None, False)
    known = state.tools.get((server, tool))
    identity = state.identities.get(server)
    trusted = known[1] if known else classifier.trust_for(server, False, identity)
    context = ToolContext(server, tool, known[0] if known else None, trusted, args, state.index, identity)
    classified = classifier.classify(context)
    legs_call = classified.classification.legs
    legs_before = frozenset(state.legs)
    unique_id = state.unique_call_id(call_id, index)
    # Evidence is only needed, and only gathered, for an external call made while armed.
    level_before = level_of_legs(legs_before)
    sends = SendEvidence()
    if Leg.EXTERNAL_COMMUNICATION in legs_call and level_before is Level.ARMED and examined:
        sends = gather_send_evidence(state, policy.allowlist, server, tool, examined, classified.destinations)
    # A steered action needs untrusted content in the context: only then are its effects worth reading.
    steerable = policy.hijack and args is not None and Leg.UNTRUSTED_CONTENT in legs_before
    effects, steered_by = find_steered_action(state, context, examined) if steerable else (frozenset(), None)
    steered, unexamined, unexamined_sources = _find_steered_sources(state, sends.fragments)
    own_store = _writes_own_store(state, tool, level_before, examined)
    review, attempt = gather_reviewed_facts(state, policy, context, classified, examined, args_cut)
    facts = CallFacts(
        call_id=unique_id,
        context=ContextFacts(
            level=level_before, legs=legs_before, unexamined=unexamined, unexamined_sources=unexamined_sources
        ),
        request=RequestFacts(
            legs=legs_call,
            rule_ids=classified.rule_ids,
            arguments_available=args is not None and not args_cut,
            annotations=known[0].annotations if known else None,
            effects=effects,
            steered_by=steered_by,
        ),
        route=_gather_route(sends, own_store),
        cargo=_gather_cargo(sends, steered),
        intent=_gather_intent(state, tool, sends, unexamined),
        review=review,
    )
    decision = note_call_id(decide(policy, facts), call_id)
    remember_attempt(state, attempt, unique_id, denied=decision.action is Action.DENY)
    record = CallRecord(
        unique_id, call_id, index, server, tool, args, classified.classification, classified.rule_ids, decision
    )
    if args is not None:  # walked already by bound_arguments, in this step's scope
        record.argument_texts = tuple(text for _, _, text in iter_argument_texts(args))
    record_call(state, record, examined, legs_before, classified)
    return decision


def _gather_route(sends: SendEvidence, own_store: bool) -> RouteFacts:
    """Where the call sends, from its send evidence."""
    return RouteFacts(
        destinations=sends.destinations,
        targets=sends.targets,
        embedded=sends.embedded,
        shared_place=sends.shared_place,
        nothing_new=sends.nothing_new,
        own_store=own_store,
    )


def _gather_cargo(sends: SendEvidence, steered: frozenset[str]) -> CargoFacts:
    """What the call carries, from its send evidence and the sources untrusted content steered."""
    return CargoFacts(
        fragments=sends.fragments,
        embedded_fragments=sends.embedded_fragments,
        composed=sends.composed,
        steered_sources=steered,
        returned_sources=sends.returned_sources,
        secret_sources=sends.secret_sources,
    )


def _gather_intent(state: SessionState, tool: str, sends: SendEvidence, unexamined: frozenset[Leg]) -> IntentFacts:
    """What the user's words ask for or allow, as far as the call needs: they are searched for an action of the
    tool's kind only when the call may carry private content, and for a secret only when it carries one."""
    return IntentFacts(
        asked_sources=sends.asked_sources,
        delegate_sources=sends.delegate_sources,
        delegable=sends.delegable,
        action_asked=not (sends.fragments or unexamined) or asks_for_action(state.index.user_text, tool),
        secret_asked=bool(sends.secret_sources) and asks_to_send_secret(state.index.user_text),
    )


def _find_steered_sources(
    state: SessionState, fragments: Sequence[FragmentMatch]
) -> tuple[frozenset[str], frozenset[Leg], tuple[str, ...]]:
    """The calls whose content untrusted content steered, among the sources of a call's private fragments and
    of what a bound left unexamined; with the legs left unexamined and the calls that returned them."""
    steered = {f.from_call for f in fragments if f.from_call in state.steered}
    unexamined, unexamined_sources = unexamined_content(state)
    if unexamined:  # a cut source read at untrusted content's suggestion is steered too
        steered.update(source for source in unexamined_sources if source in state.steered)
    return frozenset(steered), unexamined, unexamined_sources


def _writes_own_store(state: SessionState, tool: str, level_before: Level, examined: Mapping[str, Any] | None) -> bool:
    """Whether the call writes a thing of the user's own, which is not one untrusted content named ("I shared doc
    4471 with you, append ...")."""
    return is_own_store_write(tool) and not (
        level_before is Level.ARMED
        and examined
        and state.index.find_steered_value(examined, tool, copied_lines=False) is not None
    )


def record_call(
    state: SessionState,
    record: CallRecord,
    examined: Mapping[str, Any] | None,
    legs_before: frozenset[Leg],
    classified: CallClassification,
) -> None:
    """Record a decided call: what its arguments show, its legs in the context, and the alerts it raises."""
    unique_id, server, tool, legs_call = record.call_id, record.server, record.tool, record.classification.legs
    if examined:
        if Leg.UNTRUSTED_CONTENT in legs_before:
            source = state.index.find_steering(examined)
            if source is not None:
                state.steered[unique_id] = source
        state.index.add_call_arguments(examined, external=Leg.EXTERNAL_COMMUNICATION in legs_call)
    state.add_call(record)
    state.add_available(legs_call, unique_id)
    alert_on_void_pin(state, server, tool, classified, unique_id)
    alert_on_unchecked_pin(state, server, tool, classified.unchecked, unique_id)
    if Leg.EXTERNAL_COMMUNICATION in legs_call:
        state.legs.setdefault(Leg.EXTERNAL_COMMUNICATION, unique_id)
        state.raise_level(level_of_legs(frozenset(state.legs)), unique_id)
    alert_on_decision(state, record.decision, backed_legs(record.classification))


def record_result(
    state: SessionState,
    classifier: Classifier,
    read_bounds: ReadBounds,
    fail: Callable[[str], None],
    call_id: str,
    result: Any,
    is_error: bool,
) -> bool:
    """Index the result of the oldest unanswered call with this id, then let its legs into the context.
    Returns False when no call waits for the id."""
    waiting = state.unanswered.get(call_id)
    if not waiting:
        return False
    record = waiting.pop(0)
    if not waiting:
        del state.unanswered[call_id]
    record.answered, record.failed = True, is_error
    state.index.add_place(record.call_id, record.arguments or {}, record.tool, record.argument_texts)
    labels = read_result_labels(result)
    # The server's trust matters only to labels (a result without any is the common case).
    server, identity = record.server, state.identities.get(record.server)
    trusted = bool(labels.labels) and classifier.trust_of_tool(state.tools, server, record.tool, identity)
    labelled = apply_labels(record.classification, labels, trusted)
    if labelled.classification is not record.classification:
        record.classification = labelled.classification
        state.add_available(record.classification.legs, record.call_id)
    legs = record.classification.legs
    if labelled.outsiders_read(legs) and record.arguments:
        state.index.add_untrusted_source(record.arguments, record.call_id)
    if result is not None:
        reading = Reading(result, read_bounds)
        try:
            state.index.add_result(
                record.call_id, reading, private=Leg.PRIVATE_DATA in legs, untrusted=Leg.UNTRUSTED_CONTENT in legs
            )
        except Exception:
            # A result the index could not read still ran: its legs enter, and all of it counts as unexamined.
            fail("after_call (reading the result)")
            reading.truncated = True
        cut = legs & ARMED_LEGS
        if reading.truncated and cut:
            # What the bound left out counts as possibly carrying data (evidence-truncated).
            state.unexamined[record.call_id] = cut
    commit(state, record)
    commit_older(state, record.index)
    alert_on_truncation(state)
    return True


def commit(state: SessionState, record: CallRecord) -> None:
    """A call's private data and untrusted content enter the context once it has run."""
    if record in state.uncommitted:
        state.uncommitted.remove(record)
        legs = record.classification.legs - {Leg.EXTERNAL_COMMUNICATION}
        state.backed.update(backed_legs(record.classification) & legs)
        if legs:
            state.enter_legs(legs, record.call_id)


def commit_older(state: SessionState, index: int | None = None) -> None:
    """Calls requested before ``index`` (all calls when None) have run, whether or not their results
    were recorded. Calls requested together (in parallel) are not assumed to see each other's output."""
    for pending in [r for r in state.uncommitted if index is None or r.index < index]:
        commit(state, pending)
