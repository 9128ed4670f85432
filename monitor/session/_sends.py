"""What an external call made while armed carries and to whom: its recipients labelled by who chose them, the
places it writes, the private content it carries, and which of that content goes back where it came from."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from monitor.evidence import (
    delegates_everything,
    extract_destinations,
    extract_postal_destinations,
    extract_targets,
    find_handed_over_grams,
    is_handed_over_text,
    iter_argument_texts,
    names_account_of,
    names_labelled_data,
    names_party_of,
    normalize_text,
    says_it_moves_money,
    says_it_publishes,
)
from monitor.models import Destination, DestinationKind, FragmentMatch, LabelledDestination, Leg, Origin, Transform
from monitor.session._embedded import label_embedded, relabel_built_urls
from monitor.session._facts import (
    OWN_ORIGINS,
    carries_composed_text,
    carries_nothing_new,
    label_target,
    uploaded_files,
    verbatim_paths,
)
from monitor.session._state import SessionState


@dataclass
class SendEvidence:
    """The evidence the decision table reads of one call (all empty for a call that needs none)."""

    destinations: list[LabelledDestination] = field(default_factory=list)
    embedded: list[LabelledDestination] = field(default_factory=list)
    embedded_fragments: tuple[FragmentMatch, ...] = ()
    targets: list[LabelledDestination] = field(default_factory=list)
    fragments: list[FragmentMatch] = field(default_factory=list)
    shared_place: bool = False
    asked_sources: frozenset[str] = frozenset()
    delegate_sources: frozenset[str] = frozenset()
    delegable: frozenset[str] = frozenset()
    returned_sources: frozenset[str] = frozenset()
    secret_sources: frozenset[str] = frozenset()
    composed: bool = True
    """The call carries more than identifiers and the user's words: text the agent wrote, or money."""
    nothing_new: bool = False


def gather_send_evidence(
    state: SessionState,
    allowlist: tuple[str, ...],
    server: str,
    tool: str,
    examined: Mapping[str, Any],
    rule_destinations: Sequence[str],
) -> SendEvidence:
    """Label the call's recipients and places by who chose them, and find the private content it carries."""
    sends = SendEvidence()
    destinations = extract_destinations(examined, rule_destinations)
    destinations.extend(d for d in extract_postal_destinations(examined) if d not in destinations)
    labelled = _label_recipients(state, allowlist, tool, examined, destinations, sends)
    places = [d for d in destinations if d.keyed]
    if not places:
        places = extract_targets(examined)
        sends.targets = [label_target(state, d, allowlist, tool) for d in places]
    place_calls = state.index.shared_place_calls(places)
    sends.shared_place = bool(place_calls)
    # What the user pointed at, and what the place itself returned, is content the user asked to move.
    sends.asked_sources = frozenset(place_calls | state.index.pointed | state.index.pointed_places)
    # A place of a kind the user's words name ("her address is in my inbox") is where a recipient is found, not
    # data the user asked to send there.
    sends.delegate_sources = frozenset(place_calls | state.index.pointed)
    # A recipient's address is not content; a URL is (its path and query can carry data) ...
    url_paths = {d.path for d in destinations if d.kind is DestinationKind.DOMAIN}
    recipients = {d.path for d in destinations if d.keyed} - url_paths
    # ... unless it is exactly a URL the session saw: then it carries nothing the page's writer lacked.
    verbatim = verbatim_paths(state.index, examined, url_paths)
    # A place the session saw named (a file, a channel) is an identifier, not content it carries.
    named_places = {
        d.destination.path
        for d in sends.targets
        if d.origin is not Origin.UNSEEN or state.index.is_seen_verbatim(d.destination.value)
    }
    skipped = recipients | verbatim | named_places
    fragments = state.index.find_private(examined, skipped)
    if delegates_everything(state.index.user_text) and any(f.transform is Transform.VERBATIM for f in fragments):
        # What the person the user named wrote, in the message whose request the user handed over, is the user's
        # to pass on, as the user's own words are; never a credential.
        handed = find_handed_over_grams(state.index)
        fragments = [f for f in fragments if not _is_handed_over(state, f, handed)]
    fragments.extend(uploaded_files(examined, state.legs.get(Leg.PRIVATE_DATA, "")))
    sends.fragments = fragments
    sends.destinations, parties = _relabel_by_content(state, labelled, fragments, verbatim)
    shown_by = {d.from_call for d in sends.destinations if d.from_call is not None}
    sends.nothing_new = not fragments and carries_nothing_new(state.index, examined, destinations, verbatim, shown_by)
    sends.returned_sources = _find_returned(state, server, tool, sends, parties)
    # A secret given only to the account its own record names beside it (a password to sign in to that account)
    # reaches no one who may not read it, whoever chose the account.
    keyed = [d.destination for d in sends.destinations if d.destination.keyed]
    if not keyed or not all(d in parties for d in keyed):
        sends.secret_sources = state.index.find_secret_sources(fragments)
    if any(d.origin is Origin.DELEGATED for d in sends.destinations):
        sends.delegable = _find_delegable(state, examined, fragments)
        # Data under a label the user's words name is what the user asked to send, whichever call returned it.
        others = {f.from_call for f in fragments} - sends.delegate_sources
        sends.delegate_sources |= {c for c in others if names_labelled_data(state.index, c)}
    # Money sent to an account, or text the agent wrote, can carry what identifiers cannot.
    sends.composed = (
        any(d.kind is DestinationKind.IBAN for d in destinations if d.keyed)
        or says_it_moves_money(tool)
        or carries_composed_text(state.index, examined, skipped)
    )
    return sends


def _is_handed_over(state: SessionState, fragment: FragmentMatch, handed: frozenset[int]) -> bool:
    return (
        fragment.transform is Transform.VERBATIM
        and is_handed_over_text(state.index, fragment.text, handed)
        and not state.index.find_secret_sources([fragment])
    )


def _find_delegable(state: SessionState, examined: Mapping[str, Any], fragments: list[FragmentMatch]) -> frozenset[str]:
    """What a delegated recipient may get wherever it came from: a name the session listed (a repository, an
    address) sent whole is an identifier, not content."""
    listed = {text for _, _, text in iter_argument_texts(examined) if normalize_text(text) in state.index.listed}
    return frozenset(f.text for f in fragments if f.transform is Transform.VERBATIM and f.text in listed)


def _label_recipients(
    state: SessionState,
    allowlist: tuple[str, ...],
    tool: str,
    examined: Mapping[str, Any],
    destinations: list[Destination],
    sends: SendEvidence,
) -> list[LabelledDestination]:
    """The call's destinations labelled by who chose them, with the hosts of the URLs its content has fetched when
    rendered (images), which it records in ``sends``."""
    labelled = [state.index.label(d, allowlist, tool) for d in destinations]
    # URLs in the content that rendering fetches (images) go to hosts of their own, whoever gets the post.
    embedded = label_embedded(state.index, examined, allowlist)
    sends.embedded_fragments = embedded.fragments
    sends.embedded = relabel_built_urls(state, examined, list(embedded.destinations))
    labelled = relabel_built_urls(state, examined, labelled)
    # An image's host is labelled as such (never delegated), also where the text's addresses name it.
    hosts = {(d.destination.kind, d.destination.value) for d in sends.embedded}
    labelled = [d for d in labelled if d.destination.keyed or (d.destination.kind, d.destination.value) not in hosts]
    labelled.extend(sends.embedded)
    return labelled


def _relabel_by_content(
    state: SessionState, labelled: list[LabelledDestination], fragments: list[FragmentMatch], verbatim: set[str]
) -> tuple[list[LabelledDestination], set[Destination]]:
    """The labels once what the call carries is known, and the recipients that are parties of what it carries."""
    if not fragments:
        return labelled, set()
    # A link the user asked to follow is delegated as written: one that carries private content besides is not
    # (evidence does not tell the link's own text, found in the place that showed it, from what was added).
    labelled = [
        LabelledDestination(d.destination, Origin.ATTACKER, d.from_call)
        if d.origin is Origin.DELEGATED
        and d.destination.keyed
        and d.destination.kind is DestinationKind.DOMAIN
        and d.destination.path not in verbatim
        else d
        for d in labelled
    ]
    # A recipient the private record itself names beside what is sent (the account a password belongs to) is a
    # party of that record, whoever else showed it: it may read what the record holds.
    parties = {
        d.destination
        for d in labelled
        if d.destination.keyed
        and (
            names_party_of(state.index, d.destination.value, fragments)
            or (
                d.destination.kind is DestinationKind.NAME
                and names_account_of(state.index, d.destination.value, fragments)
            )
        )
    }
    relabelled = [
        LabelledDestination(d.destination, Origin.PRIVATE_TEXT, d.from_call)
        if d.destination in parties and d.origin in (Origin.ATTACKER, Origin.UNSEEN)
        else d
        for d in labelled
    ]
    return relabelled, parties


def _find_returned(
    state: SessionState, server: str, tool: str, sends: SendEvidence, parties: set[Destination]
) -> frozenset[str]:
    """Who may read each value: the server a value came from may have it back, when the call's name does not say
    it publishes and it names no one but the user's own or a record's party (and no place to write)."""
    if says_it_publishes(tool) or sends.targets:
        return frozenset()
    if not all(
        d.destination.keyed and (d.origin in OWN_ORIGINS or d.destination in parties) for d in sends.destinations
    ):
        return frozenset()
    return frozenset(
        f.from_call
        for f in sends.fragments
        if (origin := state.by_id.get(f.from_call)) is not None and origin.server == server
    )
