"""Where a URL carries data beyond where the call sends it: URLs embedded in a call's content that whoever renders
it fetches (markdown images, HTML ``src``, CSS ``url()``), and URLs on a site the user named that untrusted
text built (a form on the page the user linked)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from monitor.evidence import (
    ContentIndex,
    bound_arguments,
    extract_embedded_urls,
    host_of_url,
    iter_argument_texts,
    normalize_text,
    registrable_domain,
)
from monitor.models import AlertKind, DestinationKind, FragmentMatch, LabelledDestination, Leg, Origin, Transform
from monitor.session._state import SessionState

_URL = re.compile(r"\b[a-z][a-z0-9+.-]{1,15}://[^\s'\"<>`]+", re.IGNORECASE)
_MAX_URLS = 16
"""URLs of one call looked at for where they first appeared (a bound on work, not on what is sent)."""


@dataclass(frozen=True)
class Embedded:
    """URLs embedded in a call's content, labelled by who chose their hosts, and the private content they carry."""

    destinations: tuple[LabelledDestination, ...] = ()
    fragments: tuple[FragmentMatch, ...] = ()


def label_embedded(index: ContentIndex, arguments: Mapping[str, Any], allowlist: Iterable[str]) -> Embedded:
    """Label the hosts of the URLs embedded in a call's content (see :func:`~monitor.evidence.extract_embedded_urls`)
    and find the private content those URLs carry. A URL the session saw whole (an image a message already showed)
    carries nothing its writer lacked and is left out."""
    destinations: dict[tuple[DestinationKind, str], LabelledDestination] = {}
    fragments: list[FragmentMatch] = []
    for destination, url in extract_embedded_urls(arguments)[:_MAX_URLS]:
        if index.is_seen_verbatim(url):
            continue
        key = (destination.kind, destination.value)
        if key not in destinations:
            # Pointing at a place to post in delegates the place, never the hosts of the post's images.
            destinations[key] = index.label(destination, allowlist)
        fragments.extend(_carried(index, url))
    return Embedded(tuple(destinations.values()), tuple(fragments))


def relabel_built_urls(
    state: SessionState, arguments: Mapping[str, Any], labelled: list[LabelledDestination]
) -> list[LabelledDestination]:
    """Return ``labelled`` with each domain the user sanctioned relabelled attacker-suggested when the call's URL
    on it was built by untrusted text: its scheme, host and path (query dropped) first appear in untrusted text,
    the user never typed them, and its query or path carries private content. Naming a site to read is not
    naming a form on it to submit."""
    texts: dict[str, str] = {path: text for path, _, text in iter_argument_texts(arguments)}
    out = []
    for item in labelled:
        destination = item.destination
        if item.origin is Origin.USER and destination.kind is DestinationKind.DOMAIN:
            source = _built_by_untrusted(state, texts.get(destination.path, ""), destination.value)
            if source is not None:
                item = LabelledDestination(destination, Origin.ATTACKER, source)
        out.append(item)
    return out


def _built_by_untrusted(state: SessionState, text: str, domain: str) -> str | None:
    """The call whose untrusted text first showed a URL in ``text`` on ``domain`` (up to its query), when that URL
    carries private content and the user typed neither it nor its host and path."""
    index = state.index
    for url in _URL.findall(text)[:_MAX_URLS]:
        host = host_of_url(url)
        if not host or registrable_domain(host) != domain:
            continue
        stem = re.split(r"[?#]", url, maxsplit=1)[0].rstrip("/")
        bare = stem.split("://", 1)[1] if "://" in stem else stem
        if index.typed_by_user(stem) or index.typed_by_user(bare):
            continue
        if not _carried(index, url):
            continue
        source = _first_mention(state, normalize_text(stem))
        if source is not None:
            return source
    return None


def _first_mention(state: SessionState, stem: str) -> str | None:
    """The call whose result first showed ``stem`` (as a whole URL, not the start of a longer path), when it showed
    it in text of untrusted content; None when a listing (the URL as a value of its own) or private content showed
    it first, or nothing did. In one result, untrusted text wins over a listing. Markup parsed as a field name
    still counts as text (an HTML form's action)."""
    pattern = re.compile(re.escape(stem) + r"(?![\w/]|[.-]\w)")
    mentions: list[tuple[int, bool, str]] = []
    texts = [(call_id, text, untrusted) for call_id, text, untrusted in state.index.free_text]
    # A listed value that is the URL itself is a listing; one that holds it inside more text is text.
    texts.extend(
        (call_id, value, value != stem and _is_untrusted(state, call_id))
        for value, call_id in state.index.listed.items()
    )
    for call_id, text, untrusted in texts:
        if stem in text and pattern.search(text):
            record = state.by_id.get(call_id)
            mentions.append((record.index if record else len(state.calls), not untrusted, call_id))
    if not mentions:
        return None
    _, trusted, call_id = min(mentions)
    return None if trusted else call_id


def _is_untrusted(state: SessionState, call_id: str) -> bool:
    record = state.by_id.get(call_id)
    return record is not None and Leg.UNTRUSTED_CONTENT in record.classification.legs


def _carried(index: ContentIndex, url: str) -> list[FragmentMatch]:
    """Private content in one URL (its path, query, fragment), paraphrase left out: a URL is too short a text to
    restate anything in other words."""
    return [f for f in index.find_private({"url": url}) if f.transform is not Transform.PARAPHRASE]


def check_reply(state: SessionState, text: str, allowlist: Iterable[str]) -> None:
    """Raise an ``exfiltration`` alert when the assistant's reply shows an image (or other content a renderer
    fetches) whose URL carries private content to a host the user did not name: showing the reply sends the
    data, with no tool call to decide on. What a bound left unread of a long reply is not looked at."""
    examined, _ = bound_arguments({"reply": text})
    embedded = label_embedded(state.index, examined, allowlist)
    hosts = [d.destination.value for d in embedded.destinations if d.origin not in (Origin.USER, Origin.ALLOWLIST)]
    if not embedded.fragments or not hosts:
        return
    carried = ", ".join(dict.fromkeys(f.text[:40] for f in embedded.fragments))
    state.raise_alert(
        AlertKind.EXFILTRATION,
        None,
        f"the assistant's reply shows content from {', '.join(hosts)} whose URL carries private data ({carried}):"
        " displaying the reply sends it there",
    )
