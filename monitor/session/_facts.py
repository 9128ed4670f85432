"""What the session engine reads off a session and a call for the policy (the facts beyond classification),
and the alerts it raises from a decision."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, unquote_plus, urlsplit

from monitor.classify import CallClassification, UncheckedPin, classify_effects, is_irreversible, needs_asking
from monitor.evidence import (
    UNEXAMINED,
    ContentIndex,
    asks_for_action,
    bound_arguments,
    contains_token,
    extract_shell_effects,
    iter_argument_texts,
    normalize_text,
)
from monitor.models import (
    Action,
    AlertKind,
    Classification,
    Decision,
    Destination,
    DestinationKind,
    Effect,
    EvidenceKind,
    FragmentMatch,
    LabelledDestination,
    Leg,
    LegSource,
    Level,
    Origin,
    Reason,
    Severity,
    ToolContext,
    ToolDefinition,
    Transform,
)
from monitor.session._state import SessionState

ARMED_LEGS = frozenset({Leg.PRIVATE_DATA, Leg.UNTRUSTED_CONTENT})
OWN_ORIGINS = frozenset({Origin.USER, Origin.ALLOWLIST, Origin.LISTING})
"""Who chose a recipient for it to be the user's own (typed, allowlisted, or listed among the user's things):
besides such recipients, content may go back to the server it came from."""
_MAX_NOTHING_NEW_CHARS = 32
_MIN_VALUE_CHARS = 3  # shorter (a count, "no") is a setting anyone would pick, not data a result gave
_WHOLE_URL = re.compile(r"https?://[^\s/?#]+[^\s]*", re.IGNORECASE)
_MAX_UNEXAMINED_SOURCES = 8


def unexamined_content(state: SessionState) -> tuple[frozenset[Leg], tuple[str, ...]]:
    """The legs whose content in the session a bound left partly unexamined, and the calls that returned it
    (``""``: content the index dropped to stay within its memory bound)."""
    legs: set[Leg] = set()
    sources: list[str] = []
    if state.index.truncated:
        legs |= ARMED_LEGS
        sources.append("")
    for call_id, cut in state.unexamined.items():
        legs |= cut
        sources.append(call_id)
    return frozenset(legs), tuple(sources[:_MAX_UNEXAMINED_SOURCES])


def find_steered_action(
    state: SessionState, context: ToolContext, examined: Mapping[str, Any] | None
) -> tuple[frozenset[Effect], tuple[str, str] | None]:
    """The effects of a call made with untrusted content in the context, and what of it untrusted content chose
    (``(value, call id)``), if anything: its target (or, for code execution, its content), or, for a privileged or
    irreversible action of a kind the user's words never asked for, the action itself."""
    effects = classify_effects(context)
    steered_by = None
    if effects and context.arguments:
        # Content copied from untrusted text matters where it will run; elsewhere only the target does.
        copied = Effect.CODE_EXECUTION in effects
        steered_by = state.index.find_steered_value(examined or {}, context.name, copied_lines=copied)
    # Handing over what some content says ("complete the tasks in Ana's e-mail") covers what can be undone.
    own_words = is_irreversible(effects, context.name)
    if (
        steered_by is None
        and needs_asking(effects, context.name)
        and not asks_for_action(state.index.user_text, context.name, own_words=own_words)
    ):
        # That content may have asked for the action, whatever target it names.
        steered_by = (f"{context.name}, an action the user did not ask for", state.legs[Leg.UNTRUSTED_CONTENT])
    return effects, steered_by


def backed_legs(classification: Classification) -> frozenset[Leg]:
    """Legs that more than the cautious default gave (a rule, a hint, an annotation, a heuristic)."""
    return frozenset(leg for leg, prov in classification.provenance.items() if prov.source is not LegSource.DEFAULT)


def carries_nothing_new(
    index: ContentIndex,
    arguments: Mapping[str, Any],
    destinations: list[Destination],
    verbatim: set[str],
    sources: set[str],
) -> bool:
    """Whether a request only fetches URLs exactly as the session saw them: every destination is a URL under a
    destination argument, copied verbatim (its path is in ``verbatim``), and every other argument is too short
    to carry data (a long number carries data as well as any text) and no value that a result other than
    ``sources`` (those that showed the URLs) showed: a code from the shop's list typed into a page's form is news
    to whoever wrote the page."""
    keyed = [d for d in destinations if d.keyed]
    # An address inside a URL copied whole (an invitation link naming the invitee) is part of that URL.
    if not any(d.kind is DestinationKind.DOMAIN for d in keyed) or any(d.path not in verbatim for d in keyed):
        return False
    paths = {d.path for d in keyed}
    return all(
        path in paths or (len(text) <= _MAX_NOTHING_NEW_CHARS and not _shown_elsewhere(index, text, sources))
        for path, _, text in iter_argument_texts(arguments)
    )


def _shown_elsewhere(index: ContentIndex, text: str, sources: set[str]) -> bool:
    value = normalize_text(text)
    if len(value) < _MIN_VALUE_CHARS or index.typed_by_user(value):
        return False
    listed_in = index.listed.get(value)
    if listed_in is not None and listed_in not in sources:
        return True
    return any(c not in sources and contains_token(free, value) for c, free, _ in index.free_texts_with(value))


def carries_composed_text(index: ContentIndex, arguments: Mapping[str, Any], skip_paths: set[str]) -> bool:
    """Whether a call carries text the agent may have composed: an argument value (outside ``skip_paths``, the
    recipients) of several words, or longer than a short identifier, that the user did not type and the session
    never saw whole. What
    the agent writes in its own words while private data is in context can restate it where no evidence tells."""
    return any(
        _is_composed(index, part)
        for path, _, text in iter_argument_texts(arguments)
        if path not in skip_paths and _is_composed(index, text)
        for part in split_url(text)
    )


def _is_composed(index: ContentIndex, text: str) -> bool:
    return (
        (len(text) > _MAX_NOTHING_NEW_CHARS or len(text.split()) > 1)
        and not index.typed_by_user(text)
        and not index.is_seen_verbatim(text)
    )


def split_url(text: str) -> list[str]:
    """A URL's parts as the values they are, judged as arguments of their own (a path segment, a query value, the
    fragment): a URL is a list of identifiers, and the text it may carry is in them. Other text is one part."""
    if not _WHOLE_URL.fullmatch(text):
        return [text]
    url = urlsplit(text)
    parts = [unquote_plus(segment) for segment in url.path.split("/") if segment]
    parts.extend(value for _, value in parse_qsl(url.query, keep_blank_values=True))
    if url.fragment:
        parts.append(unquote_plus(url.fragment))
    return parts or [text]


def verbatim_paths(index: ContentIndex, arguments: Mapping[str, Any], paths: set[str]) -> set[str]:
    """The argument paths among ``paths`` whose value the session saw whole (a URL copied as a message gave it)."""
    return {path for path, _, text in iter_argument_texts(arguments) if path in paths and index.is_seen_verbatim(text)}


def uploaded_files(arguments: Mapping[str, Any], private_call: str) -> list[FragmentMatch]:
    """Local files a shell command sends to a host (``curl -d @.env``): their content leaves, a private-data
    leg of the session's own files."""
    return [
        FragmentMatch(private_call, _describe_upload(upload), Transform.FILE)
        for _, effects in extract_shell_effects(arguments)
        for upload in effects.uploads
    ]


def _describe_upload(upload: str) -> str:
    # Besides file paths, the parser names what it cannot see as data: standard input, a variable, or what
    # printenv, history or a credentials helper print, and what a command over a bound may send.
    if upload == UNEXAMINED:
        return "content of a command too long or too deeply nested to examine"
    if upload == "-":
        return "standard input of unknown origin"
    if upload.startswith("$"):
        return f"the value of {upload}"
    if upload.startswith("<") and upload.endswith(">"):
        return f"the {upload[1:-1]} a command printed"
    return upload


def alert_on_decision(state: SessionState, decision: Decision, call_backed: frozenset[Leg]) -> None:
    """Raise the alerts a decision calls for, at the severity its evidence supports (see ALERT_POLICY in
    the module docstring): exfiltration [critical] and trifecta [high] only for calls the policy asks about
    or blocks, trifecta [high] only when no leg rests on the cautious defaults alone; a hijack [high] for a
    steered action."""
    asked = decision.action is not Action.ALLOW
    if Reason.STEERED_ACTION in decision.reasons:
        steering = [e for e in decision.evidence if e.kind is EvidenceKind.STEERING]
        state.raise_alert(
            AlertKind.HIJACK,
            decision.call_id,
            f"untrusted content chose the target or content of a steered action; action {decision.action.value}",
            path=state.path_to(decision.call_id, steering),
            steps=state.steps_to(decision.call_id, steering),
            evidence=tuple(steering),
        )
    if decision.level.rank < Level.TRIFECTA.rank:
        return
    state.raise_level(decision.level, decision.call_id)
    summary = ", ".join(r.value for r in decision.reasons)
    backed = Leg.EXTERNAL_COMMUNICATION in call_backed and state.backed >= ARMED_LEGS
    if decision.level is Level.EXFILTRATION and asked:
        kind, severity = AlertKind.EXFILTRATION, Severity.CRITICAL
        message = f"private data may leave the session ({summary})"
    elif asked or not state.trifecta_alerted:
        kind, severity = AlertKind.TRIFECTA, Severity.HIGH if asked and backed else Severity.WARNING
        message = f"external communication requested while armed ({summary})"
    else:  # another allowed send in a session already alerted: the call's decision says it
        return
    state.raise_alert(
        kind,
        decision.call_id,
        f"{message}; action {decision.action.value}",
        severity=severity,
        path=state.path_to(decision.call_id, decision.evidence),
        steps=state.steps_to(decision.call_id, decision.evidence),
        evidence=decision.evidence,
    )
    state.trifecta_alerted = True


def label_target(
    state: SessionState, target: Destination, allowlist: tuple[str, ...], tool: str
) -> LabelledDestination:
    """Label a place a call writes to: a path by whether the user typed it, anything else as a destination."""
    if target.kind is DestinationKind.PATH:
        return LabelledDestination(
            target, Origin.USER if state.index.typed_by_user(target.value) else Origin.UNSEEN, None
        )
    return state.index.label(target, allowlist, tool)


def alert_on_changed_definition(state: SessionState, server: str, definition: ToolDefinition) -> None:
    """Raise ``definition-changed`` when a tool is listed again in the session with another definition (a
    rug pull: the description or hints the session was judged by are no longer the ones served)."""
    previous = state.tools.get((server, definition.name))
    if previous is not None and previous[0].definition_hash != definition.definition_hash:
        state.raise_alert(
            AlertKind.DEFINITION_CHANGED,
            None,
            f"{server}/{definition.name}: the definition changed since it was listed earlier in this session "
            f"(was {previous[0].definition_hash[:12]}, now {definition.definition_hash[:12]})",
        )


def alert_on_void_pin(
    state: SessionState, server: str, tool: str, classified: CallClassification, call_id: str | None
) -> None:
    """Raise ``definition-changed`` once per tool whose pinned rule the served definition voided, saying what to do:
    the server may have changed, or may only share the reviewed server's name."""
    voided = classified.voided
    if voided is None or (server, tool) in state.voided_pins:
        return
    state.voided_pins.add((server, tool))
    identity = state.identities.get(server)
    known = f"the server is known as {identity.describe()}; " if identity is not None else ""
    advice = (
        f"{known}if it is not the server the rule reviewed but one that only has its name {server!r}, give it a name "
        "of its own or review it in a rule pack of your own ('trifecta rules suggest'); if it is, check what changed "
        "before pinning the new definition ('trifecta rules pin')"
    )
    state.raise_alert(
        AlertKind.DEFINITION_CHANGED,
        call_id,
        f"{server}/{tool}: the definition changed since rule {voided.rule_id} was reviewed "
        f"(pinned {voided.pinned}, seen {voided.seen}); the rule is void for this session; {advice}",
    )


def alert_on_unchecked_pin(
    state: SessionState, server: str, tool: str, unchecked: UncheckedPin | None, call_id: str
) -> None:
    """Raise ``pin-unchecked`` once per tool in a session, when a pinned rule covers a tool whose definition the
    session never listed: the rule's legs were only added to what the other layers said."""
    if unchecked is None or (server, tool) in state.unchecked_pins:
        return
    state.unchecked_pins.add((server, tool))
    state.raise_alert(
        AlertKind.PIN_UNCHECKED,
        call_id,
        f"{server}/{tool}: rule {unchecked.rule_id} is pinned to a reviewed definition, but the session listed "
        "none for this tool, so the pin could not be checked; the rule only adds legs, its removals and the "
        "server's trust are not applied",
    )


def alert_on_truncation(state: SessionState) -> None:
    """Raise ``evidence-truncated`` once a session, when a bound first left some of its content unexamined."""
    if state.truncation_alerted:
        return
    if state.unexamined:
        call_id = next(iter(state.unexamined))
        state.truncation_alerted = True
        state.raise_alert(
            AlertKind.EVIDENCE_TRUNCATED,
            call_id,
            f"the result of {call_id} was over a reading bound and not fully examined; later sends that its "
            "content could concern are confirmed",
        )
    elif state.index.truncated:
        state.truncation_alerted = True
        state.raise_alert(
            AlertKind.EVIDENCE_TRUNCATED,
            None,
            "the session's evidence index reached its memory bound; the oldest content was dropped, so "
            "private content seen early may no longer be recognised; later sends that it could concern are "
            "confirmed",
        )


def find_kept_private(state: SessionState, arguments: Mapping[str, Any]) -> tuple[FragmentMatch, ...]:
    """The session's private content that ``arguments`` hold (verbatim, encoded, as secrets; not paraphrase), as
    far as the bound on examined arguments reads them: what a file written with them keeps."""
    examined, _ = bound_arguments(arguments)
    return tuple(f for f in state.index.find_private(examined) if f.transform is not Transform.PARAPHRASE)


def alert_on_flow(state: SessionState, call_id: str | None, message: str) -> None:
    """Raise the ``exfiltration`` alert (severity high) of a call that sends what another session left with
    private data."""
    state.raise_alert(AlertKind.EXFILTRATION, call_id, message, Severity.HIGH)
