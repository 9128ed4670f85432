"""Destinations: the addresses a call sends to (e-mail, domain, IBAN, phone, plain names) and how to find them."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

import tldextract

from monitor.evidence._shell import ShellEffects, parse_shell_command
from monitor.models import Destination, DestinationKind

# Argument keys whose values name where a call sends to.
DESTINATION_KEYS = frozenset(
    [
        "recipient",
        "recipients",
        "to",
        "cc",
        "bcc",
        "participants",
        "attendees",
        "email",
        "emails",
        "address_to",
        "url",
        "urls",
        "uri",
        "endpoint",
        "webhook",
        "channel",
        "phone",
        "phone_number",
        "number",
        "iban",
        "user",
        "username",
    ]
)
# Argument keys whose values name the place a call writes to (a file, a document, a channel, a repository), for
# calls that name no recipient: a place from a listing of the user's own things is the user's.
TARGET_KEYS = frozenset(
    [
        "file_id",
        "document_id",
        "doc_id",
        "page_id",
        "note_id",
        "folder_id",
        "sheet_id",
        "spreadsheet_id",
        "database_id",
        "channel_id",
        "conversation_id",
        "thread_id",
        "list_id",
        "board_id",
        "project_id",
        "path",
        "file_path",
        "filepath",
        "filename",
        "file_name",
        "notebook_path",
        "repo",
        "repository",
        "owner",
        "project",
        "space",
        "workspace",
    ]
)
_REMOTE_PATH = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|\\\\|//|\\\\\?\\UNC)", re.IGNORECASE)
_LOCAL_PATH = re.compile(r"^(?:~?[\\/]|\.{1,2}[\\/]|[A-Za-z]:[\\/]|[\w@.-]+[\\/])")
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24}")
_URL = re.compile(r"\b(?:https?|ftp|wss?)://[^\s'\"<>()\[\]{}]+", re.IGNORECASE)
_BARE_DOMAIN = re.compile(
    r"(?<![@\w.-])(?:www\.)?(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+"
    r"(?:com|net|org|io|dev|ai|co|app|me|info|biz|xyz|site|online|us|uk|de|fr|eu|ru|cn|gov|edu)\b"
    r"(?![@\w-])",
    re.IGNORECASE,
)
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b")
_PHONE = re.compile(r"(?<![\w+])\+\d[\d ().-]{6,18}\d\b")
_SPACE = re.compile(r"\s+")


def normalize_text(text: str) -> str:
    """Lowercase and fold white space, so copies that were re-wrapped still match."""
    return _SPACE.sub(" ", text).strip().lower()


def _host(url: str) -> str:
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return ""
    return host.lower()


@functools.cache
def _extractor() -> tldextract.TLDExtract:
    # The Public Suffix List snapshot shipped with tldextract: no download, no cache on disk. Private
    # suffixes count, so two github.io sites are two owners.
    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None, include_psl_private_domains=True)


def registrable_domain(host: str) -> str:
    """The registrable domain of a host name (``files.evil.example.co.uk`` → ``example.co.uk``); the host
    itself when it has none (an IP address, ``localhost``)."""
    host = host.lower().rstrip(".")
    parts = _extractor()(host)
    if parts.domain and parts.suffix:
        return f"{parts.domain}.{parts.suffix}"
    return host.removeprefix("www.")


def find_addresses(text: str) -> Iterator[tuple[DestinationKind, str]]:
    """Yield e-mail addresses, registrable domains (of URLs and bare host names), IBANs and phone numbers."""
    for m in _EMAIL.finditer(text):
        yield DestinationKind.EMAIL, m.group(0).lower()
    without_emails = _EMAIL.sub(" ", text)
    for m in _URL.finditer(without_emails):
        host = _host(m.group(0))
        if host:
            yield DestinationKind.DOMAIN, registrable_domain(host)
    for m in _BARE_DOMAIN.finditer(_URL.sub(" ", without_emails)):
        yield DestinationKind.DOMAIN, registrable_domain(m.group(0))
    for m in _IBAN.finditer(text):
        yield DestinationKind.IBAN, m.group(0).replace(" ", "")
    for m in _PHONE.finditer(text):
        yield DestinationKind.PHONE, re.sub(r"[^\d+]", "", m.group(0))


def extract_destinations(arguments: Mapping[str, Any], extra_paths: Iterable[str] = ()) -> list[Destination]:
    """Return where a call sends to.

    The values under destination arguments (recipient-like keys, and ``extra_paths`` that a rule declares)
    name the destinations, as addresses or, failing that, as plain names. Only when a call has no such
    argument are addresses inside its other arguments returned, marked ``keyed=False``: a link inside a
    mail body is content, not where the mail goes.
    """
    paths = ["/" + "/".join(p for p in path.replace(".", "/").split("/") if p) for path in extra_paths]
    keyed: dict[tuple[DestinationKind, str], Destination] = {}
    anywhere: dict[tuple[DestinationKind, str], Destination] = {}
    for path, key, text in iter_argument_texts(arguments):
        if key.lower() in SHELL_KEYS:
            # A command reaches the hosts it names; the words around them are not addresses it sends to.
            for host in _parse_command(text).hosts:
                value = registrable_domain(host)
                keyed.setdefault((DestinationKind.DOMAIN, value), Destination(DestinationKind.DOMAIN, value, path))
            continue
        addresses = list(find_addresses(text))
        if key.lower() in DESTINATION_KEYS or any(path == p or path.startswith(p + "/") for p in paths):
            for kind, value in addresses:
                keyed.setdefault((kind, value), Destination(kind, value, path))
            if not addresses and text.strip():
                value = normalize_text(text)
                keyed.setdefault((DestinationKind.NAME, value), Destination(DestinationKind.NAME, value, path))
        else:
            for kind, value in addresses:
                anywhere.setdefault((kind, value), Destination(kind, value, path, keyed=False))
    return list((keyed or anywhere).values())


_OWN_STORE_VERBS = frozenset("create add append update write save edit insert set put make new".split())
# Things a user keeps for themselves: writing one with no recipient lands in the user's own account.
_OWN_STORE_OBJECTS = frozenset(
    "file files document documents doc docs note notes folder folders event events calendar reminder reminders"
    " task tasks todo todos draft drafts spreadsheet sheet sheets memory memories entity entities observation"
    " observations relation relations bookmark bookmarks list lists row rows record records".split()
)
# Things others read even when the user owns them: never the user's own place.
_SHARED_OBJECTS = frozenset(
    "gist gists issue issues pr pull comment comments post posts tweet tweets message messages reply review"
    " reviews release releases page pages wiki webpage invite invitation share public channel channels".split()
)
_WORD = re.compile(r"[a-z0-9]+")


def is_own_store_write(tool: str) -> bool:
    """Whether a tool's name says it writes one of the user's own things (a file, a note, a calendar event,
    a draft) rather than something others read (an issue, a comment, a post, a message)."""
    words = set(_WORD.findall(re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", tool).lower()))
    return bool(words & _OWN_STORE_VERBS) and bool(words & _OWN_STORE_OBJECTS) and not words & _SHARED_OBJECTS


def extract_targets(arguments: Mapping[str, Any]) -> list[Destination]:
    """Return the places a call writes to when it names no recipient: values under target keys (file, document,
    channel, repository ids and paths). A local path (not a URL or a network share) is a ``path`` destination."""
    targets: dict[tuple[DestinationKind, str], Destination] = {}
    for path, key, text in iter_argument_texts(arguments):
        if key.lower() not in TARGET_KEYS or not text.strip() or len(text) > 1024:
            continue
        kind = DestinationKind.PATH if is_local_path(text) else DestinationKind.NAME
        value = normalize_text(text)
        targets.setdefault((kind, value), Destination(kind, value, path))
    return list(targets.values())


SHELL_KEYS = frozenset(["command", "cmd", "script", "shell_command", "commandline", "command_line"])
"""Argument keys whose values are shell commands: parsed for the hosts they reach and the files they send."""


def extract_shell_effects(arguments: Mapping[str, Any]) -> list[tuple[str, ShellEffects]]:
    """Return ``(path, effects)`` for each shell command among a call's arguments."""
    return [
        (path, _parse_command(text))
        for path, key, text in iter_argument_texts(arguments)
        if key.lower() in SHELL_KEYS and text.strip()
    ]


_MAX_CACHED_COMMAND = 20_000


@functools.lru_cache(maxsize=64)
def _parse_cached(text: str) -> ShellEffects:
    return parse_shell_command(text)


def _parse_command(text: str) -> ShellEffects:
    # One call's command is read for its hosts, its uploads and its effects: parse it once. Long commands are
    # not kept, so the cache stays small.
    return _parse_cached(text) if len(text) <= _MAX_CACHED_COMMAND else parse_shell_command(text)


def is_local_path(text: str) -> bool:
    """Whether ``text`` is a local file or folder path (``src/app.py``, ``~/notes.md``, ``C:\\x``), not a URL or
    a network share."""
    text = text.strip()
    return bool(text) and not _REMOTE_PATH.match(text) and bool(_LOCAL_PATH.match(text)) and "\n" not in text


def iter_argument_texts(value: Any, path: str = "", key: str = "") -> Iterator[tuple[str, str, str]]:
    """Yield ``(path, key, text)`` for every string and number under ``value`` (a call's arguments): its JSON
    pointer, the nearest mapping key above it, and the value as text."""
    if isinstance(value, str):
        yield path or "/", key, value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield from iter_argument_texts(v, f"{path}/{k}", str(k))
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from iter_argument_texts(item, f"{path}/{i}", key)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield path or "/", key, str(value)


def is_allowlisted(destination: Destination, allowlist: Iterable[str]) -> bool:
    """Whether an allowlist entry (an address, or a domain that covers its subdomains) names ``destination``."""
    value = destination.value
    domain = value.rsplit("@", 1)[-1] if destination.kind is DestinationKind.EMAIL else value
    for entry in allowlist:
        entry = entry.lower().removeprefix("www.")
        if value == entry or domain == entry or domain.endswith("." + entry):
            return True
    return False
