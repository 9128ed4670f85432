"""Destinations: the addresses a call sends to (e-mail, domain, IBAN, phone, plain names) and how to find them."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextvars import ContextVar, Token
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import re2

from monitor.evidence._hosts import canonical_host, host_of_url
from monitor.evidence._memo import memoize_text
from monitor.evidence._shell import ShellEffects, parse_shell_command
from monitor.models import Destination, DestinationKind

if TYPE_CHECKING:
    import tldextract

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
        "host",
        "hostname",
        "callback",
    ]
)
# A key of several words that ends in one of these names a recipient as well (``collaborator_email``,
# ``reply_to``, ``callback_url``, ``new_owner_username``) ...
_DESTINATION_KEY_ENDINGS = frozenset(
    "email emails url urls uri recipient recipients to cc bcc phone iban username webhook endpoint host".split()
)
# ... unless a word before says it names the one acting (``user_google_email``, ``sender_email``, ``from_phone``).
_ACTOR_KEY_WORDS = frozenset("user sender from my self account login author acting".split())
_KEY_WORD = re.compile(r"[a-z0-9]+")


def is_destination_key(key: str) -> bool:
    """Whether an argument key names where a call sends to: one of :data:`DESTINATION_KEYS`, or a key of several
    words whose last word names a recipient."""
    lowered = key.lower()
    if lowered in DESTINATION_KEYS:
        return True
    words = _KEY_WORD.findall(re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", key).lower())
    return len(words) > 1 and words[-1] in _DESTINATION_KEY_ENDINGS and not _ACTOR_KEY_WORDS & set(words[:-1])


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
# Every pattern here runs on text an attacker writes, so each takes time linear in its input. The e-mail
# pattern runs on RE2 (no backtracking: the local part of ``aaaa...`` is not rescanned from every letter).
# The patterns kept on ``re`` need lookaround or Unicode word classes; each can start only where a token
# starts (a look-behind excludes the middle of a run) and its repeats are bounded or end at a character the
# next repeat cannot take, so no character is scanned by more than a bounded number of starts.
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False
# A local part may hold letters beyond ASCII (``jürgen@``: never read as ``rgen@``), but not of scripts written
# without spaces, whose text would be glued to the address.
_EMAIL = re2.compile(
    r"[\p{Latin}\p{Greek}\p{Cyrillic}0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24}", _RE2_OPTIONS
)
_URL = re.compile(r"\b(?:https?|ftp|wss?):(?://|\\\\)(?:\[[0-9A-Za-z:.%]+\])?[^\s'\"<>()\[\]{}]*", re.IGNORECASE)
# The authority of a URL up to its last @: user information, which names no destination (``https://a.example@b.example``).
_USERINFO = re.compile(r"(?<=://)[^/?#\\\s'\"<>]*@")
_BARE_DOMAIN = re.compile(
    r"(?<![@\w.-])(?:www\.)?(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+"
    r"(?:com|net|org|io|dev|ai|co|app|me|info|biz|xyz|site|online|us|uk|de|fr|eu|ru|cn|gov|edu)\b"
    r"(?![@\w-])",
    re.IGNORECASE,
)
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b")
_PHONE = re.compile(r"(?<![\w+])\+\d[\d ().-]{6,18}\d\b")


def normalize_text(text: str) -> str:
    """Lowercase and fold white space, so copies that were re-wrapped still match."""
    # str.split() splits on exactly the characters ``\s`` matches in a str pattern (both are Unicode white space).
    return " ".join(text.split()).lower()


def _host(url: str) -> str:
    return host_of_url(url) or ""


def hosts_of_url(url: str) -> tuple[str, ...]:
    """Every host a URL can reach: as a browser reads it, and as Python's and other RFC 3986 clients read it,
    where the two differ (``https://example.org\\@evil.test`` is example.org to a browser, evil.test to
    ``urllib``)."""
    browser = _host(url)
    try:
        strict = canonical_host(urlsplit(url).hostname or "")
    except ValueError:  # a port that is not a number, an unclosed bracket: no strict reading
        strict = ""
    return tuple(h for h in dict.fromkeys([browser, strict]) if h)


@functools.cache
def _extractor() -> tldextract.TLDExtract:
    # The Public Suffix List snapshot shipped with tldextract: no download, no cache on disk. Private
    # suffixes count, so two github.io sites are two owners. Imported when first needed: with what it imports
    # (requests, urllib3, idna) it would be the largest part of starting the hook engine.
    import tldextract

    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None, include_psl_private_domains=True)


def registrable_domain(host: str) -> str:
    """The registrable domain of a host name (``files.evil.example.co.uk`` → ``example.co.uk``); the host
    itself when it has none (an IP address, ``localhost``)."""
    host = canonical_host(host)
    parts = _extractor()(host)
    if parts.domain and parts.suffix:
        return f"{parts.domain}.{parts.suffix}"
    return host.removeprefix("www.")


def find_addresses(text: str) -> Iterator[tuple[DestinationKind, str]]:
    """Yield e-mail addresses, registrable domains (of URLs and bare host names), IBANs and phone numbers."""
    if "@" in text or ":" in text or "." in text or "+" in text:
        return iter(_read_addresses(text))
    return _scan_addresses(text)  # an IBAN at most: one pattern, cheaper than the memo


@memoize_text()
def _read_addresses(text: str) -> tuple[tuple[DestinationKind, str], ...]:
    return tuple(_scan_addresses(text))


def _scan_addresses(text: str) -> Iterator[tuple[DestinationKind, str]]:
    # User information in a URL (``https://bank.example@evil.example``) is not an address: the host after it is.
    # Each pattern needs one character (an address "@", a URL ":", a domain ".", a phone "+"): a text without
    # it is not scanned for that pattern at all.
    at, colon = "@" in text, ":" in text
    if at:
        without_userinfo = _USERINFO.sub(lambda m: " " * len(m.group(0)), text) if colon else text
        for m in _EMAIL.finditer(without_userinfo):
            yield DestinationKind.EMAIL, m.group(0).lower()
    if colon:
        for m in _URL.finditer(text):
            for host in hosts_of_url(m.group(0)):
                yield DestinationKind.DOMAIN, registrable_domain(host)
    if "." in text:
        rest = _URL.sub(" ", text) if colon else text
        for m in _BARE_DOMAIN.finditer(_EMAIL.sub(" ", rest) if at else rest):
            yield DestinationKind.DOMAIN, registrable_domain(m.group(0))
    for m in _IBAN.finditer(text):
        yield DestinationKind.IBAN, m.group(0).replace(" ", "")
    if "+" in text:
        for m in _PHONE.finditer(text):
            yield DestinationKind.PHONE, re.sub(r"[^\d+]", "", m.group(0))


def extract_destinations(
    arguments: Mapping[str, Any], extra_paths: Iterable[str] = (), *, every: bool = False
) -> list[Destination]:
    """Return where a call sends to.

    The values under destination arguments (recipient-like keys, and ``extra_paths`` that a rule declares)
    name the destinations, as addresses or, failing that, as plain names. Only when a call has no such
    argument are addresses inside its other arguments returned, marked ``keyed=False``: a link inside a
    mail body is content, not where the mail goes. With ``every``, those are returned beside the keyed ones
    whatever the call has: every place any argument names (what a scope of allowed destinations checks).
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
        if is_destination_key(key) or any(path == p or path.startswith(p + "/") for p in paths):
            for kind, value in addresses:
                keyed.setdefault((kind, value), Destination(kind, value, path))
            if not addresses and text.strip():
                value = normalize_text(text)
                keyed.setdefault((DestinationKind.NAME, value), Destination(DestinationKind.NAME, value, path))
        else:
            for kind, value in addresses:
                anywhere.setdefault((kind, value), Destination(kind, value, path, keyed=False))
    if every:
        return [*keyed.values(), *(d for k, d in anywhere.items() if k not in keyed)]
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


def is_recipient_value(arguments: Mapping[str, Any], value: str) -> bool:
    """Whether ``value`` (normalised) is a destination of ``arguments`` under a destination argument."""
    return any(d.keyed and normalize_text(d.value) == value for d in extract_destinations(arguments))


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


MAX_ARGUMENT_DEPTH = 64
"""Containers nested deeper than this in a call's arguments are not walked one by one: each is read as one text."""
MAX_ARGUMENT_NODES = 10_000
"""Values (containers, strings, numbers) of a call's arguments walked one by one; the rest is read in bulk."""
_KEY_CLASSES: tuple[Callable[[str], bool], ...] = (
    lambda key: key.lower() in SHELL_KEYS,
    is_destination_key,
    lambda key: key.lower() in TARGET_KEYS,
)


def _number_text(value: int | float) -> str:
    try:
        return str(value)
    except ValueError:  # an integer over Python's decimal digit limit: spelled in hexadecimal, never dropped
        return hex(int(value))


def _children(
    value: Mapping[Any, Any] | list[Any] | tuple[Any, ...], path: str, key: str
) -> Iterator[tuple[str, str, Any]]:
    if isinstance(value, Mapping):
        return ((f"{path}/{k}", str(k), v) for k, v in value.items())
    return ((f"{path}/{i}", key, item) for i, item in enumerate(value))


def _flatten(items: Iterator[tuple[str, str, Any]], path: str, key: str) -> Iterator[tuple[str, str, str]]:
    """Read what is left of a container in bulk: every string and number under ``items``, joined by new lines,
    yielded under ``path`` with ``key`` and again under the first shell, destination and target key found below
    (so a recipient or a command past the budget is still read as one)."""
    texts: list[str] = []
    found: dict[int, str] = {}
    seen: set[int] = set()
    stack = [items]
    while stack:
        item = next(stack[-1], None)
        if item is None:
            stack.pop()
            continue
        _, item_key, value = item
        if isinstance(value, str):
            texts.append(value)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            texts.append(_number_text(value))
        elif isinstance(value, Mapping | list | tuple) and id(value) not in seen:
            seen.add(id(value))  # a container met twice (only built in code, never parsed) is read once
            stack.append(_children(value, "", item_key))
        else:
            continue
        for i, is_of_class in enumerate(_KEY_CLASSES):
            if i not in found and is_of_class(item_key):
                found[i] = item_key
    if not texts:
        return
    text = "\n".join(texts)
    yield path or "/", key, text
    own = next((i for i, is_of_class in enumerate(_KEY_CLASSES) if is_of_class(key)), None)
    for i, found_key in sorted(found.items()):
        if i != own:
            yield path or "/", found_key, text


MAX_ARGUMENT_CHARS = 1_000_000
"""Characters of one call's argument strings examined for evidence (:func:`bound_arguments`)."""
_WHOLE_ARGUMENT_CHARS = 1_024


def bound_arguments(arguments: Mapping[str, Any], max_chars: int = MAX_ARGUMENT_CHARS) -> tuple[dict[str, Any], bool]:
    """The arguments as examined for evidence, and whether some were left out. Within ``max_chars`` characters
    of strings in all, they are as given. Past it, strings of up to :data:`_WHOLE_ARGUMENT_CHARS` stay whole (an
    address, a subject, a path) and the longer ones share what is left of the budget, each keeping at least
    that many characters of its head and tail; the structure and every other value are kept, so destinations
    stay under their keys. The caller counts what was left out against the call."""
    texts = [text for _, _, text in iter_argument_texts(arguments)]
    if sum(len(text) for text in texts) <= max_chars:
        return dict(arguments), False
    budget = max(max_chars - sum(len(text) for text in texts if len(text) <= _WHOLE_ARGUMENT_CHARS), 0)

    def cut(text: str) -> str:
        nonlocal budget
        if len(text) <= max(budget, _WHOLE_ARGUMENT_CHARS):
            budget -= 0 if len(text) <= _WHOLE_ARGUMENT_CHARS else len(text)
            return text
        keep = max(budget, _WHOLE_ARGUMENT_CHARS)
        budget = 0
        half = keep // 2
        return text[: keep - half] + "\n…\n" + text[len(text) - half :]

    root: dict[str, Any] = {}
    stack: list[tuple[Any, Any]] = [(arguments, root)]
    while stack:
        source, target = stack.pop()
        items = source.items() if isinstance(source, Mapping) else enumerate(source)
        for k, value in items:
            if isinstance(value, str):
                value = cut(value)
            elif isinstance(value, Mapping):
                mapping: dict[Any, Any] = {}
                stack.append((value, mapping))
                value = mapping
            elif isinstance(value, list | tuple):
                items_copy: list[Any] = [None] * len(value)
                stack.append((value, items_copy))
                value = items_copy
            target[k] = value
    return root, True


_ArgumentTexts = tuple[tuple[str, str, str], ...]
# The texts of each argument value walked in the current call (see :class:`ArgumentTextsOnce`), by the value's
# identity; the value itself is held beside them, so no other object takes its identity meanwhile.
_WALKED: ContextVar[dict[int, tuple[Any, _ArgumentTexts]] | None] = ContextVar("walked_arguments", default=None)


class ArgumentTextsOnce:
    """A scope in which each argument value is walked for its texts once: the engine's evidence reads a call's
    arguments many times while it decides the call (destinations, provenance, private content, effects), and
    within the scope :func:`iter_argument_texts` gives the texts of a value it walked before from what it kept.

    The scope is one engine step on one session (deciding a call, recording a result), in one thread or task
    (a context variable). The arguments must not change within it: the engine reads its own copies of them.
    """

    __slots__ = ("_token",)

    def __init__(self) -> None:
        self._token: Token[dict[int, tuple[Any, _ArgumentTexts]] | None] | None = None

    def __enter__(self) -> None:
        self._token = _WALKED.set({})

    def __exit__(self, *exc_info: object) -> None:
        if self._token is not None:
            _WALKED.reset(self._token)
            self._token = None


def iter_argument_texts(value: Any, path: str = "", key: str = "") -> Iterator[tuple[str, str, str]]:
    """Yield ``(path, key, text)`` for every string and number under ``value`` (a call's arguments): its JSON
    pointer, the nearest mapping key above it, and the value as text.

    The walk is bounded and never drops text: a container deeper than :data:`MAX_ARGUMENT_DEPTH`, and all that
    is left once :data:`MAX_ARGUMENT_NODES` values were walked, is read in bulk: its strings and numbers joined
    into one text, under the container's path and key, and again under the first shell, destination and target
    key inside it. The work is linear in the size of ``value`` and the number of texts yielded is bounded. Within
    an :class:`ArgumentTextsOnce` scope, a value is walked once.
    """
    walked = _WALKED.get()
    if walked is None or path or key:
        return _walk_argument_texts(value, path, key)
    found = walked.get(id(value))
    if found is None or found[0] is not value:
        found = (value, tuple(_walk_argument_texts(value, "", "")))
        walked[id(value)] = found
    return iter(found[1])


def _walk_argument_texts(value: Any, path: str, key: str) -> Iterator[tuple[str, str, str]]:
    stack: list[tuple[str, str, Iterator[tuple[str, str, Any]]]] = [(path, key, iter([(path, key, value)]))]
    nodes = 0
    while stack:
        if nodes >= MAX_ARGUMENT_NODES:
            while stack:  # over budget: what is left of each open container, innermost first, in bulk
                frame_path, frame_key, items = stack.pop()
                yield from _flatten(items, frame_path, frame_key)
            return
        item = next(stack[-1][2], None)
        if item is None:
            stack.pop()
            continue
        nodes += 1
        item_path, item_key, item_value = item
        if isinstance(item_value, str):
            yield item_path or "/", item_key, item_value
        elif isinstance(item_value, int | float) and not isinstance(item_value, bool):
            yield item_path or "/", item_key, _number_text(item_value)
        elif isinstance(item_value, Mapping | list | tuple):
            children = _children(item_value, item_path, item_key)
            if len(stack) > MAX_ARGUMENT_DEPTH:
                yield from _flatten(children, item_path, item_key)
            else:
                stack.append((item_path, item_key, children))


def is_allowlisted(destination: Destination, allowlist: Iterable[str]) -> bool:
    """Whether an allowlist entry (an address, or a domain that covers its subdomains) names ``destination``."""
    value = destination.value
    domain = value.rsplit("@", 1)[-1] if destination.kind is DestinationKind.EMAIL else value
    for entry in allowlist:
        entry = entry.lower().removeprefix("www.")
        if value == entry or domain == entry or domain.endswith("." + entry):
            return True
    return False


def find_allowlist_problem(entry: str) -> str | None:
    """Why an allowlist (or scope) entry would allow far more than one party, or None when it is fine: a
    wildcard, an empty entry, or a public suffix alone (``com``, ``.co.uk``, ``github.io``), which would allow
    every address under it."""
    value = entry.strip().lower().removeprefix("www.")
    if not value:
        return "an empty entry"
    if any(c in value for c in "*?[]"):
        return "a wildcard (entries are addresses and domains; a domain covers its subdomains)"
    if "@" in value or _IBAN.fullmatch(entry.strip().replace(" ", "")) or _PHONE.fullmatch(entry.strip()):
        return None
    host = value.strip(".")
    parts = _extractor()(host)
    if not parts.domain and parts.suffix:
        return f"a public suffix ({host}): it would allow every address under it"
    return None


OUTSIDER_KEYS = frozenset(
    "from sender reply_to replyto reply-to return_path author author_email organizer organiser creator submitter"
    " reporter requester posted_by from_address from_email sender_email sender_address".split()
)
"""Fields of a listed object that whoever wrote the object sets (the sender of an inbound message, the author of
an issue, the organiser of an invitation): an address there is the outsider's choice, not the user's contact."""


_WRITER_WORDS = frozenset(
    "from sender author creator owner submitter reporter requester organizer organiser poster".split()
)
_IDENTITY_WORDS = frozenset("username user name email address login handle id account".split())


def is_outsider_field(key: str) -> bool:
    """Whether a listed field's value is chosen by whoever wrote the object (``from``, ``reply_to``, ``author``),
    also in a key of two words, the writer's role and what identifies them (``owner_username``, ``creator_email``)."""
    key = key.lower().replace("-", "_").replace(" ", "_")
    if key in OUTSIDER_KEYS:
        return True
    words = key.split("_")
    return len(words) == 2 and words[0] in _WRITER_WORDS and words[1] in _IDENTITY_WORDS


def mentions_destination(text: str, destination: Destination) -> bool:
    """Whether ``text`` names ``destination`` as a whole token, never as a substring: an e-mail address whole
    (``b@corp-mail.com`` is not in ``bob@corp-mail.com``), a domain by the hosts the text names, read as a
    resolver reads them (``p.com`` is not ``corp.com``; ``http://1481646427/`` names 88.80.33.91), an IBAN or
    phone number by all its digits (``+44207946012`` is not in ``+442079460123``), a name as whole words."""
    kind, value = destination.kind, destination.value.lower()
    if not value:
        return False
    if kind is DestinationKind.NAME or kind is DestinationKind.PATH:
        folded = normalize_text(text)
        start = folded.find(normalize_text(value))
        while start >= 0:
            end = start + len(normalize_text(value))
            before = folded[start - 1] if start else " "
            after = folded[end] if end < len(folded) else " "
            if not (before.isalnum() or before in "_-./@") and not (
                after.isalnum() or after in "_@" or (after in ".-/" and folded[end + 1 : end + 2].isalnum())
            ):
                return True
            start = folded.find(normalize_text(value), start + 1)
        return False
    if kind is DestinationKind.DOMAIN:
        return value in _hosts_named(text)
    if kind is DestinationKind.IBAN:
        # Its characters in order, in any case, spaced in groups or not: upper-casing the text instead would read
        # the words after an account number as more of its groups (``DE89370400 BANK ACCO``).
        return _iban_pattern(value).search(text) is not None
    for found_kind, found in find_addresses(text):
        if found_kind is not kind:
            continue
        found = found.lower()
        if found == value:
            return True
    return False


@functools.lru_cache(maxsize=256)
def _iban_pattern(value: str) -> re.Pattern[str]:
    spaced = " ?".join(re.escape(c) for c in value.replace(" ", ""))
    return re.compile(rf"(?<![A-Za-z0-9]){spaced}(?![A-Za-z0-9])", re.IGNORECASE)


def _hosts_named(text: str) -> set[str]:
    """Every host a text names (of its URLs, e-mail addresses and bare domains), with its registrable domain."""
    hosts = {_host(m.group(0)) for m in _URL.finditer(text)}
    rest = _URL.sub(" ", text)
    hosts.update(m.group(0).rsplit("@", 1)[1] for m in _EMAIL.finditer(rest))
    hosts.update(m.group(0) for m in _BARE_DOMAIN.finditer(_EMAIL.sub(" ", rest)))
    canonical = {canonical_host(h) for h in hosts if h}
    return canonical | {registrable_domain(h) for h in canonical}


# Content a renderer fetches by itself when it shows a message: markdown images, HTML src attributes, CSS url().
# An image's alt text stops at the next ``![``: the image starting there is read on its own, so ``![![![...``
# is scanned once, not up to a thousand characters from every ``![``.
_EMBEDDED = re.compile(
    r"!\[(?:[^\]\n!]|!(?!\[)){0,1000}\]\(\s*<?(?P<md>[a-z][a-z0-9+.-]*:[^\s)>]+)"
    r"|\bsrc\s*=\s*[\"']?(?P<src>[a-z][a-z0-9+.-]*:[^\s\"'>]+)"
    r"|\burl\(\s*[\"']?(?P<css>[a-z][a-z0-9+.-]*:[^\s\"')]+)",
    re.IGNORECASE,
)


def extract_embedded_urls(arguments: Mapping[str, Any]) -> list[tuple[Destination, str]]:
    """URLs that whoever renders a call's content fetches without a click (markdown images, HTML ``src``, CSS
    ``url()``), as ``(destination, url)``: the host receives the URL, query and path included, wherever the
    message itself is posted. Destinations are marked ``keyed=False`` (they are inside content)."""
    found: dict[str, tuple[Destination, str]] = {}
    for path, key, text in iter_argument_texts(arguments):
        if key.lower() in SHELL_KEYS or ("](" not in text and "src" not in text.lower() and "url(" not in text.lower()):
            continue
        for match in _EMBEDDED.finditer(text):
            url = match.group("md") or match.group("src") or match.group("css") or ""
            host = _host(url)
            if host and url not in found:
                found[url] = (Destination(DestinationKind.DOMAIN, registrable_domain(host), path, keyed=False), url)
    return list(found.values())
