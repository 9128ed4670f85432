"""Name, description, input-schema and annotation heuristics (balanced posture).

Each heuristic is a line of data: an id, the leg it speaks about, where it looks, the words it looks for, words
that must come with them (``also``) and words that veto it (``unless``). A new detector is a new entry in
:data:`HEURISTICS`; the vocabularies it draws on are the named word sets below, its words of what a tool
does picked from the one vocabulary of tool words (:mod:`monitor.classify._vocabulary`).

Most heuristics say a leg is *present*. Three say X is *absent* (``absent=True``): the name says the tool only
reads, lists or computes (``read-only-name``); it only changes files where the server runs
(``local-path-write``); or it only switches or removes something and is handed no content
(``control-only-name``). The layers ask them only when no annotation and no heuristic gave X, so any sign that a
tool sends (a destination, a URL, a send verb, code to run) keeps X. They never read a hint that could only
lower risk (``readOnlyHint: true``); hints that say a tool writes veto them. So what an untrusted server's hints
say never removes a leg the same tool would have without them (docs/design.md, "The security invariant").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from monitor.classify._vocabulary import (
    CHANGE_VERBS,
    CREATE_VERBS,
    DEPLOY_VERBS,
    DESTROYING,
    EXECUTE_NOUNS,
    EXECUTE_VERBS,
    EXECUTING,
    FETCH_VERBS,
    MESSAGE_NOUNS,
    MOVE_VERBS,
    OPEN_WEB_WORDS,
    READ_NAME_WORDS,
    SEND_NAME_WORDS,
    SEND_VERBS,
    SWITCH_VERBS,
    VERB_OR_NOUN,
    WRITE_NAME_VERBS,
    pick_words,
)
from monitor.models import Leg, ToolDefinition

P, U, X = Leg.PRIVATE_DATA, Leg.UNTRUSTED_CONTENT, Leg.EXTERNAL_COMMUNICATION


class Where(StrEnum):
    """Where a heuristic looks."""

    NAME = "name"
    """The words of the tool's name (snake, kebab, dotted, camel case split), and the whole name."""
    DESCRIPTION = "description"
    """The words of the tool's description."""
    SCHEMA = "schema"
    """The input schema's property names, whole (``file_path``)."""
    SCHEMA_WORDS = "schema-words"
    """The words of the input schema's property names (``file_path`` gives ``file`` and ``path``)."""
    ANNOTATIONS = "annotations"
    """The boolean hints the tool sets, as ``hint=value`` in lowercase (``readonlyhint=false``)."""


@dataclass(frozen=True)
class Heuristic:
    """One signal: ``leg`` is present (or, with ``absent``, absent) when a word of ``field`` is one of ``words``,
    every ``(field, words)`` pair of ``also`` has a word too, and no pair of ``unless`` has one."""

    id: str
    leg: Leg
    field: Where
    words: frozenset[str]
    absent: bool = False
    also: tuple[tuple[Where, frozenset[str]], ...] = ()
    unless: tuple[tuple[Where, frozenset[str]], ...] = ()


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# -- vocabularies -------------------------------------------------------------------------------------------
# The words by which a name says what the tool does come from the vocabulary (monitor.classify._vocabulary):
# READ_NAME_WORDS, WRITE_NAME_VERBS, VERB_OR_NOUN, SEND_NAME_WORDS and the sets below built from its parts. The
# words of schema properties, stores and descriptions are the heuristics' own.

NOT_READ_ONLY = _words("readonlyhint=false destructivehint=true")
"""Annotations by which a tool says it is not read-only: they veto the heuristics that say X is absent."""

PRIVATE_STORE_WORDS = _words(
    # mail, messages, people
    "email emails mail mails inbox message messages dm dms chat chats conversation conversations thread threads"
    " sms contact contacts user users profile me member members team teams customer customers lead leads deal"
    " deals crm ticket tickets"
    # files and documents
    " file files drive document documents doc folder folders directory directories dir path paths attachment"
    " attachments page pages note notes"
    # calendars
    " calendar event events appointment appointments meeting meetings"
    # data stores
    " database databases db sql table tables row rows record records collection collections schema schemas"
    " index indices indexes mapping mappings shard shards bucket buckets storage object objects entity entities"
    " graph memory memories knowledge"
    # secrets and settings
    " secret secrets token tokens password passwords credential credentials key keys vault env environment"
    " config configuration settings cookie cookies"
    # money and health
    " balance transaction transactions iban account accounts payment payments card cards invoice invoices order"
    " orders health medical"
    # code and projects
    " repo repos repository repositories code commit commits branch branches gist gists project projects"
    " organization organizations org orgs workspace workspaces"
    # systems the account runs
    " namespace namespaces cluster clusters node nodes pod pods deployment deployments process processes"
    " session sessions console network history trace traces metric metrics usage alert alerts notification"
    " notifications"
)
"""Stores a user's account reaches: reading one is reading private data unless a review says it is public."""

PRIVATE_SCOPE_PARAMS = _words(
    "id path paths file files filepath dir directory folder repo repository owner namespace project org"
    " organization workspace index table schema database db bucket cluster account sql branch branches"
)
"""Words of text input-schema properties that point into an account's store (``repo_path``, ``projectId``)."""

PRIVATE_DESCRIPTION = _words(
    "inbox private personal confidential password passwords secret secrets credential credentials balance"
    " transactions iban calendar contacts authenticated history"
)

EXECUTE_WORDS = EXECUTE_VERBS | (EXECUTE_NOUNS - pick_words(EXECUTE_NOUNS, "script"))
"""Name words of a tool that runs code or commands: it reaches whatever the account reaches."""

EXECUTE_PARAMS = _words("command code script sql")
"""Input-schema properties holding code, a command or a query to run (SQL can call out, too)."""

OPEN_WEB_NAME = OPEN_WEB_WORDS - pick_words(OPEN_WEB_WORDS, "url")
"""Name words of a tool that searches or reads the open web: the query leaves, whatever the verb."""
OPEN_WEB_DESCRIPTION = pick_words(OPEN_WEB_WORDS, "internet web websites webpages online")

SEND_NOUN_NAME = (
    pick_words(VERB_OR_NOUN, "post comment request schedule") | MESSAGE_NOUNS | pick_words(FETCH_VERBS, "fetch")
)
"""Name words that send data out unless the name also says the tool only reads or removes (``get_message``,
``delete_email``)."""

DESTINATION_PARAMS = _words("recipient recipients cc bcc url uri urls uris endpoint webhook host")
"""Input-schema property words naming where data goes."""

CONTACT_PARAMS = _words("to email emails participants phone channel iban")
"""Input-schema properties naming a destination, unless the name says the tool only reads (then they are
lookup keys: ``search_contacts(email)``, ``get_report(from, to)``)."""

LOCAL_PATH_PARAMS = _words("path paths filepath")
"""Input-schema property words of a path on the machine the server runs on."""

REMOTE_SCOPE_PARAMS = _words(
    "owner repo repository project project_id projectid org organization workspace team bucket url uri host"
    " remote namespace cluster account channel server endpoint"
)
"""Input-schema properties that place a path in a remote store others read (``owner``/``repo``/``path``)."""

CONTROL_VERBS = (
    pick_words(DESTROYING, "delete remove cancel reset kill terminate")
    | (SWITCH_VERBS - pick_words(SWITCH_VERBS, "close follow restart resume unfollow"))
    | pick_words(VERB_OR_NOUN, "star")
)
"""Name words of a tool that only switches or removes something: unless it is handed content, it sends nothing."""

CONTENT_PARAMS = _words(
    "body content contents text message messages description title comment comments note notes data value"
    " values input inputs payload prompt query subject summary reason rationale file files attachment"
    " attachments markdown html"
)
"""Input-schema property words of content a call could carry out."""

CARRIES_WORDS = (
    (CREATE_VERBS - pick_words(CREATE_VERBS, "generate import register"))
    | (CHANGE_VERBS - pick_words(CHANGE_VERBS, "change modify replace rotate save"))
    | MOVE_VERBS
    | (DEPLOY_VERBS - pick_words(DEPLOY_VERBS, "install scale"))
    | (SEND_VERBS - pick_words(SEND_VERBS, "pay transfer tweet"))
    | pick_words(VERB_OR_NOUN, "merge post comment reply push")
)
"""Name words of a tool that carries something somewhere: they veto the control-only heuristic."""

RUNS_WORDS = (EXECUTING - pick_words(EXECUTING, "repl")) | pick_words(VERB_OR_NOUN, "run start")

_READS = ((Where.NAME, READ_NAME_WORDS),)
_ACTS = ((Where.NAME, WRITE_NAME_VERBS),)
_RUNS_OR_ACTS = ((Where.NAME, WRITE_NAME_VERBS | pick_words(VERB_OR_NOUN, "run")),)
"""``run`` names a thing read (``get_run``) for P, but a read-only name with it (``run_query``) may run anything."""
_WRITES_STORED = ((Where.NAME, (WRITE_NAME_VERBS | VERB_OR_NOUN) - pick_words(CHANGE_VERBS, "edit")),)
"""An edit reads what it changes and returns it; other writes return no stored content."""


HEURISTICS: tuple[Heuristic, ...] = (
    # P: reads of a store the account reaches, and anything that runs code
    Heuristic("private-execute-name", P, Where.NAME, EXECUTE_WORDS),
    Heuristic("private-execute-schema", P, Where.SCHEMA, EXECUTE_PARAMS),
    Heuristic("private-store-name", P, Where.NAME, PRIVATE_STORE_WORDS, unless=_WRITES_STORED),
    Heuristic("private-store-name", P, Where.NAME, PRIVATE_STORE_WORDS, also=_READS, unless=_ACTS),
    Heuristic("private-scope-schema", P, Where.SCHEMA_WORDS, PRIVATE_SCOPE_PARAMS, unless=_WRITES_STORED),
    Heuristic("private-scope-schema", P, Where.SCHEMA_WORDS, PRIVATE_SCOPE_PARAMS, also=_READS, unless=_ACTS),
    Heuristic("private-description", P, Where.DESCRIPTION, PRIVATE_DESCRIPTION, unless=_WRITES_STORED),
    # U: content other people wrote
    Heuristic(
        "untrusted-name",
        U,
        Where.NAME,
        _words(
            "web search fetch browse browser url http page pages scrape crawl issue issues comment comments review"
            " reviews message messages email emails inbox mail post posts news feed tweet tweets ticket tickets"
            " channel channels webpage navigate snapshot"
        ),
    ),
    Heuristic(
        "untrusted-description",
        U,
        Where.DESCRIPTION,
        _words("internet web website websites webpage url urls browse scrape reviews"),
    ),
    # X: sends data out, runs code, or reaches the open web
    Heuristic("external-name", X, Where.NAME, SEND_NOUN_NAME, unless=((Where.NAME, READ_NAME_WORDS | CONTROL_VERBS),)),
    Heuristic("external-name", X, Where.NAME, SEND_NAME_WORDS),
    Heuristic("external-execute-name", X, Where.NAME, EXECUTE_WORDS),
    Heuristic("external-execute-schema", X, Where.SCHEMA, EXECUTE_PARAMS),
    Heuristic("external-schema", X, Where.SCHEMA_WORDS, DESTINATION_PARAMS),
    Heuristic("external-schema", X, Where.SCHEMA, CONTACT_PARAMS, unless=_READS),
    Heuristic("open-web-name", X, Where.NAME, OPEN_WEB_NAME),
    Heuristic("open-web-description", X, Where.DESCRIPTION, OPEN_WEB_DESCRIPTION),
    # X absent: the tool only reads, lists or computes, or only changes files where the server runs
    Heuristic(
        "read-only-name",
        X,
        Where.NAME,
        READ_NAME_WORDS,
        absent=True,
        unless=(*_RUNS_OR_ACTS, (Where.ANNOTATIONS, NOT_READ_ONLY)),
    ),
    Heuristic(
        "local-path-write",
        X,
        Where.SCHEMA_WORDS,
        LOCAL_PATH_PARAMS,
        absent=True,
        unless=((Where.SCHEMA, REMOTE_SCOPE_PARAMS), (Where.NAME, RUNS_WORDS)),
    ),
    Heuristic(
        "control-only-name",
        X,
        Where.NAME,
        CONTROL_VERBS,
        absent=True,
        unless=((Where.NAME, CARRIES_WORDS | RUNS_WORDS), (Where.SCHEMA_WORDS, CONTENT_PARAMS)),
    ),
)
"""The built-in heuristics, in the order they are tried."""

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SPLIT = re.compile(r"[^a-z0-9]+")


def tokenize_name(name: str) -> list[str]:
    """Split a tool or property name into lowercase words (snake, kebab, dotted and camel case)."""
    return [t for t in _SPLIT.split(_CAMEL.sub("_", name).lower()) if t]


def _field_tokens(name: str, definition: ToolDefinition | None) -> dict[Where, set[str]]:
    name_tokens = set(tokenize_name(name))
    name_tokens.add(name.lower())
    tokens: dict[Where, set[str]] = {field: set() for field in Where}
    tokens[Where.NAME] = name_tokens
    if definition is not None:
        tokens[Where.DESCRIPTION] = set(_SPLIT.split(definition.description.lower()))
        props = definition.input_schema.get("properties")
        if isinstance(props, dict):
            tokens[Where.SCHEMA] = {str(k).lower() for k in props}
            tokens[Where.SCHEMA_WORDS] = {w for k, v in props.items() if _is_text(v) for w in tokenize_name(str(k))}
        hints = definition.annotations.model_dump(exclude_none=True)
        tokens[Where.ANNOTATIONS] = {f"{k.lower()}={str(v).lower()}" for k, v in hints.items() if isinstance(v, bool)}
    return tokens


def _is_text(prop: object) -> bool:
    """Whether a schema property may hold a name, path or address: its type is not only numbers or booleans."""
    kind = prop.get("type") if isinstance(prop, dict) else None
    # A type that is not a string (an object, a nested list) says nothing: the property may hold text.
    kinds = {k if isinstance(k, str) else None for k in (kind if isinstance(kind, list) else [kind])}
    return not kinds <= {"integer", "number", "boolean", "null"}


def match_heuristics(
    heuristics: Iterable[Heuristic], name: str, definition: ToolDefinition | None, *, absent: bool = False
) -> dict[Leg, str]:
    """Return, per leg, the first heuristic that fired as ``"<id>:<word>"``: of those that say a leg is present,
    or with ``absent=True``, of those that say it is absent."""
    tokens = _field_tokens(name, definition)
    found: dict[Leg, str] = {}
    for h in heuristics:
        if h.absent != absent or h.leg in found:
            continue
        hits = tokens[h.field] & h.words
        if (
            hits
            and all(tokens[field] & needed for field, needed in h.also)
            and not any(tokens[field] & vetoes for field, vetoes in h.unless)
        ):
            found[h.leg] = f"{h.id}:{min(hits)}"
    return found
