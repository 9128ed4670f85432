"""``trifecta lint``: annotation findings for MCP server authors.

Reads tool lists (a ``tools/list`` result, a JSON-RPC response holding one, a bare tools array, a single
tool, an MCP JSON-RPC log, our ``mcp-servers`` data files, mcpdesc documents, or folders of them) and
reports, per tool, what is wrong or doubtful with its ``annotations`` (DESIGN §1): members outside the
closed set, non-boolean hints, annotations under a protocol version that has none, missing hints, hints
that mean nothing where they are set, names and descriptions that contradict the hints, duplicate names,
and instruction-like or hidden text aimed at the model (tool poisoning).

Every finding is a value (:class:`LintFinding`) naming its rule (:data:`LINT_RULES`), the file, and a
JSON pointer into the document as served. A file that cannot be read is an ``input-unreadable`` finding,
never an exception.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field

from monitor.classify._heuristics import tokenize_name
from monitor.models._tools import ANNOTATION_MEMBERS, HINT_MEMBERS

ANNOTATIONS_SINCE = "2025-03-26"
"""The first MCP protocol version with tool annotations."""

INPUT_SUFFIXES = (".json", ".jsonl", ".ndjson", ".log")
"""File suffixes read when a folder is given."""

MAX_FILE_BYTES = 64 * 1024 * 1024
"""Larger files are reported as unreadable instead of being loaded."""

MAX_SCANNED_CHARS = 16_384
"""Each text is scanned for poisoning up to this many characters."""

MAX_SCHEMA_TEXTS = 256
"""At most this many ``description``/``title`` strings of one tool's input schema are scanned."""

_MAX_SCHEMA_DEPTH = 12
_VERSION = re.compile(r"^\d{4}-\d{2}-\d{2}$")


class LintSeverity(StrEnum):
    """Severity of a lint finding. Errors make ``trifecta lint`` exit 1."""

    ERROR = "error"
    WARNING = "warning"


class LintRule(BaseModel):
    """One lint rule: a stable id, its severity, a one-line title and a help text (the registry entry)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")
    severity: LintSeverity
    title: str
    help: str


LINT_RULES: tuple[LintRule, ...] = (
    LintRule(
        id="input-unreadable",
        severity=LintSeverity.ERROR,
        title="The file cannot be read as a tool list",
        help="The file is missing, unreadable, not JSON, or holds no tools/list result, tools array, tool, "
        "JSON-RPC log or mcp-servers document. Nothing in it was linted.",
    ),
    LintRule(
        id="tool-without-name",
        severity=LintSeverity.ERROR,
        title="A tool entry has no string name",
        help="Every MCP Tool needs a non-empty string `name`; clients cannot call a tool without one. The "
        "entry was skipped.",
    ),
    LintRule(
        id="annotations-not-object",
        severity=LintSeverity.ERROR,
        title="`annotations` is not an object",
        help="A tool's `annotations` is a ToolAnnotations object. Any other value is ignored by clients, so "
        "the tool is treated as if it had no hints at all.",
    ),
    LintRule(
        id="annotation-unknown-member",
        severity=LintSeverity.ERROR,
        title="An annotation member outside the closed set",
        help="ToolAnnotations holds only title, readOnlyHint, destructiveHint, idempotentHint and "
        "openWorldHint. Other members (including resource annotation fields such as audience, priority "
        "and lastModified) are ignored by clients and by the monitor.",
    ),
    LintRule(
        id="hint-not-boolean",
        severity=LintSeverity.ERROR,
        title="A hint that is not a boolean",
        help='Hints are JSON booleans. A string such as "false" is truthy in many clients and ignored by '
        "others; the monitor treats it as absent.",
    ),
    LintRule(
        id="title-not-string",
        severity=LintSeverity.ERROR,
        title="`annotations.title` is not a string",
        help="The display title is a string; any other value is ignored.",
    ),
    LintRule(
        id="annotations-unsupported-protocol",
        severity=LintSeverity.ERROR,
        title="Tool annotations under a protocol version that has none",
        help=f"Tool annotations exist from MCP protocol version {ANNOTATIONS_SINCE}. A server that speaks an "
        "earlier version sends members its clients do not know about.",
    ),
    LintRule(
        id="hint-missing",
        severity=LintSeverity.WARNING,
        title="A hint is missing",
        help="Without a hint clients fall back to the spec defaults (readOnlyHint false, destructiveHint "
        "true, idempotentHint false, openWorldHint true), or leave the tool to the model. Say what the tool "
        "does. destructiveHint and idempotentHint are not asked of read-only tools.",
    ),
    LintRule(
        id="hint-ignored-when-read-only",
        severity=LintSeverity.WARNING,
        title="destructiveHint or idempotentHint set on a read-only tool",
        help="destructiveHint and idempotentHint are meaningful only when readOnlyHint is false; on a "
        "read-only tool they are ignored (and a true destructiveHint contradicts readOnlyHint).",
    ),
    LintRule(
        id="destructive-name-not-destructive",
        severity=LintSeverity.WARNING,
        title="Name or description says destructive; the hints say otherwise",
        help="The tool's name or the lead of its description uses a destructive verb (delete, remove, drop, "
        "cancel, revoke, overwrite, refund, ...) while readOnlyHint is true or destructiveHint is false. "
        "Clients skip confirmation on such hints.",
    ),
    LintRule(
        id="read-name-not-read-only",
        severity=LintSeverity.WARNING,
        title="Name or description says read-only; readOnlyHint is false",
        help="The tool's name or the lead of its description reads (get, list, search, read, ...) and says "
        "nothing about writing, yet readOnlyHint is false, so clients ask before every call. Set "
        "readOnlyHint true if the tool only reads, or rename it.",
    ),
    LintRule(
        id="network-name-closed-world",
        severity=LintSeverity.WARNING,
        title="Name or description says network; openWorldHint is false",
        help="The tool's name or the lead of its description talks to the outside world (send, post, "
        "publish, fetch, http, url, ...) while openWorldHint is false. openWorldHint false tells clients "
        "that the tool neither reads untrusted content nor sends anything out.",
    ),
    LintRule(
        id="duplicate-tool-name",
        severity=LintSeverity.WARNING,
        title="Two tools with the same name in one list",
        help="Tool names identify tools within a server. With duplicates, which definition a client calls "
        "(and which hints it believes) is undefined.",
    ),
    LintRule(
        id="instruction-in-description",
        severity=LintSeverity.WARNING,
        title="Instruction-like text aimed at the model (tool poisoning)",
        help="The description or a parameter description holds text that steers the model rather than "
        "describing the tool: 'ignore previous instructions', 'do not tell the user', 'before using this "
        "tool read ~/.ssh/...', <IMPORTANT> blocks. Such text is how poisoned tools exfiltrate data.",
    ),
    LintRule(
        id="hidden-unicode",
        severity=LintSeverity.WARNING,
        title="Hidden or zero-width characters",
        help="Zero-width characters, Unicode tag characters and bidirectional overrides are invisible to "
        "users reviewing a tool but read by the model; they hide instructions or disguise names.",
    ),
)
"""Every lint rule, in report order (the registry of ids; ids never change meaning)."""

RULES_BY_ID: Mapping[str, LintRule] = {rule.id: rule for rule in LINT_RULES}

# -- word lists (data) --------------------------------------------------------------------------------------


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


DESTRUCTIVE_WORDS: frozenset[str] = _words(
    "delete deletes deleting remove removes removing drop drops dropping cancel cancels cancelling canceling"
    " revoke revokes revoking overwrite overwrites overwriting refund refunds refunding destroy destroys"
    " purge purges erase erases wipe wipes truncate truncates reset resets kill kills terminate terminates"
    " uninstall uninstalls unpublish prune prunes evict evicts rm del"
)
"""Words that say a call destroys or undoes something."""

READ_WORDS: frozenset[str] = _words(
    "get gets list lists search searches read reads find finds lookup describe describes show shows view"
    " views retrieve retrieves inspect inspects"
)
"""Words that say a call only reads."""

WRITE_WORDS: frozenset[str] = DESTRUCTIVE_WORDS | _words(
    "create creates update updates write writes set sets edit edits add adds insert inserts put puts patch"
    " modify modifies move moves rename renames upload uploads send sends post posts save saves apply"
    " applies execute executes run runs merge merges replace replaces append appends assign assigns mark"
    " marks start starts stop stops trigger triggers submit submits commit commits push pushes dismiss"
)
"""Words that, next to a read word, say the call also writes: the read check stays quiet."""

NETWORK_WORDS: frozenset[str] = _words(
    "send sends sending post posts posting publish publishes fetch fetches fetching http https url urls"
    " webhook webhooks email emails mail mails upload uploads download downloads browse navigate tweet"
    " internet web website webpage sms"
)
"""Words that say a call reaches beyond the server's own closed world."""

NAME_CONNECTORS: frozenset[str] = _words("or and")
"""Name words that join two verbs (``get_or_create``): the read check stays quiet on such names."""

LEAD_WORDS = 6
"""How many leading words of a description's first sentence the word checks read."""


# -- poisoning patterns (data, compiled once) ---------------------------------------------------------------


@dataclass(frozen=True)
class PoisonPattern:
    """One instruction-like pattern: an id, what it catches, and the compiled expression."""

    id: str
    label: str
    regex: re.Pattern[str]


def _compile(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE | re.DOTALL)


_SECRET_PLACES = (
    r"(?:~/|\$HOME|%USERPROFILE%|/etc/(?:passwd|shadow)|\.ssh\b|id_rsa|id_ed25519|\.env\b|\.aws\b|\.netrc"
    r"|\.npmrc|\.pypirc|mcp\.json|credentials?|private\s+keys?|api[\s_-]?keys?|secrets?|passwords?|tokens?)"
)

POISON_PATTERNS: tuple[PoisonPattern, ...] = (
    PoisonPattern(
        "override-instructions",
        "tells the model to ignore its instructions",
        _compile(
            r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+|your\s+|of\s+|these\s+){0,3}"
            r"(?:previous|prior|above|earlier|preceding|other|system|existing|original)?\s*"
            r"(?:instructions?|prompts?|rules|directives|guidelines)\b"
        ),
    ),
    PoisonPattern(
        "conceal-from-user",
        "tells the model to keep something from the user",
        _compile(
            r"\b(?:do\s+not|don['\u2019]?t|never|must\s+not|should\s+not)\s+"
            r"(?:(?:tell|inform|notify|alert|warn|show|reveal|disclose)\s+(?:\w+\s+){0,2}?(?:the\s+)?users?\b"
            r"|mention\b|let\s+(?:the\s+)?users?\s+know\b)"
            r"|\bwithout\s+(?:telling|informing|notifying|alerting|asking)\s+(?:the\s+)?users?\b"
            r"|\b(?:hide|keep)\s+(?:this|it|these)\s+(?:\w+\s+){0,2}?from\s+(?:the\s+)?users?\b"
        ),
    ),
    PoisonPattern(
        "read-secrets-first",
        "tells the model to read or pass secrets before using the tool",
        _compile(
            r"\bbefore\s+(?:using|calling|invoking|running|executing)\s+(?:this|the|any|that)\b.{0,160}?"
            r"\b(?:read|cat|open|load|send|include|pass|provide|attach|upload|copy)\b.{0,80}?" + _SECRET_PLACES
        ),
    ),
    PoisonPattern(
        "hidden-block",
        "wraps text in an <IMPORTANT>-style block for the model",
        _compile(
            r"<\s*/?\s*(?:important|system|instructions?|secret|hidden|admin|critical|sudo|assistant"
            r"|note[\s_-]+to[\s_-]+(?:the[\s_-]+)?(?:ai|assistant|model|llm))\s*>"
        ),
    ),
)
"""The instruction-like patterns searched in descriptions (each text bounded by :data:`MAX_SCANNED_CHARS`)."""

HIDDEN_RANGES: tuple[tuple[int, int], ...] = (
    (0x200B, 0x200F),  # zero-width space/non-joiner/joiner, LRM, RLM
    (0x202A, 0x202E),  # bidi embeddings and overrides
    (0x2060, 0x2064),  # word joiner, invisible operators
    (0x2066, 0x2069),  # bidi isolates
    (0xFEFF, 0xFEFF),  # zero-width no-break space (BOM)
    (0xE0000, 0xE007F),  # tag characters
)
"""Code point ranges that are invisible to a reviewer but read by the model."""

_HIDDEN = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in HIDDEN_RANGES) + "]")


# -- values -------------------------------------------------------------------------------------------------


class LintFinding(BaseModel):
    """One finding: rule id and severity, where (file, log line, JSON pointer into the document as served),
    which server and tool, what is wrong, how to fix it, and a fingerprint that identifies it across runs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    severity: LintSeverity
    file: str
    line: int | None = Field(default=None, description="1-based line of a JSON-lines log; None for documents")
    pointer: str = Field(description="JSON pointer (RFC 6901) into the document (or log line) as served")
    server: str | None = None
    tool: str | None = None
    message: str
    hint: str
    fingerprint: str = Field(description="stable identity: rule, server, tool and field, not the position")


class ToolListing(BaseModel):
    """The raw tools of one ``tools/list`` result (or array, tool, data file), with where they were found.

    ``tool_pointers[i]`` is the JSON pointer of ``tools[i]`` in the document (or log line) as served.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    file: str
    line: int | None = None
    server: str | None = None
    protocol_version: str | None = None
    protocol_version_source: str | None = Field(default=None, description="where the version was declared")
    tools: tuple[Any, ...]
    tool_pointers: tuple[str, ...]

    @property
    def server_name(self) -> str:
        """The server name, or the file's name without its suffix when the file does not say."""
        return self.server or Path(self.file).stem


class ListingLint(BaseModel):
    """The findings of one tool listing."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    file: str
    line: int | None = None
    server: str | None = None
    protocol_version: str | None = None
    tools: int
    findings: tuple[LintFinding, ...]


class LintReport(BaseModel):
    """Everything ``trifecta lint`` found: one entry per tool listing, and the inputs it could not read."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    listings: tuple[ListingLint, ...] = ()
    input_errors: tuple[LintFinding, ...] = ()

    @property
    def findings(self) -> tuple[LintFinding, ...]:
        """Every finding, input errors first, then listing by listing."""
        return self.input_errors + tuple(f for listing in self.listings for f in listing.findings)

    def count(self, severity: LintSeverity) -> int:
        """Return how many findings have ``severity``."""
        return sum(1 for f in self.findings if f.severity is severity)

    @property
    def has_errors(self) -> bool:
        """True when any finding (an unreadable input included) is an error: ``trifecta lint`` exits 1."""
        return any(f.severity is LintSeverity.ERROR for f in self.findings)

    @property
    def exit_code(self) -> int:
        """The exit code by DESIGN §7: 2 when an input could not be read, 1 on errors, else 0."""
        if self.input_errors:
            return 2
        return 1 if self.has_errors else 0


# -- reading ------------------------------------------------------------------------------------------------


def lint_paths(paths: Iterable[str | Path]) -> LintReport:
    """Lint every tool list in ``paths`` (files or folders, read recursively). Never raises on bad input."""
    listings, problems = read_listings(paths)
    return LintReport(listings=tuple(lint_listing(listing) for listing in listings), input_errors=tuple(problems))


def read_listings(paths: Iterable[str | Path]) -> tuple[list[ToolListing], list[LintFinding]]:
    """Read the tool listings of ``paths``; unreadable inputs come back as ``input-unreadable`` findings."""
    listings: list[ToolListing] = []
    problems: list[LintFinding] = []
    for path in iter_input_files(paths, problems):
        found, bad = read_listings_from_file(path)
        listings.extend(found)
        problems.extend(bad)
    return listings, problems


def iter_input_files(paths: Iterable[str | Path], problems: list[LintFinding]) -> Iterator[Path]:
    """Yield each file to read: files as given, folders walked recursively (sorted, hidden entries skipped).

    A missing path, or a folder without any file ending in one of :data:`INPUT_SUFFIXES`, is appended to
    ``problems``.
    """
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files = sorted(
                p
                for p in path.rglob("*")
                if p.is_file()
                and p.suffix.lower() in INPUT_SUFFIXES
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
            if not files:
                problems.append(_input_error(str(path), None, f"no {', '.join(INPUT_SUFFIXES)} files in this folder"))
            yield from files
        elif path.exists():
            yield path
        else:
            problems.append(_input_error(str(path), None, "no such file or folder"))


def read_listings_from_file(path: Path) -> tuple[list[ToolListing], list[LintFinding]]:
    """Read one file: a JSON document (tool list, JSON-RPC message, data file) or a JSON-lines log."""
    file = str(path)
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return [], [_input_error(file, None, f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB; not read")]
        data = path.read_bytes()
    except OSError as exc:
        return [], [_input_error(file, None, f"cannot read: {exc.strerror or exc}")]
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        not_json = f"not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        records, bad_lines = _split_json_lines(file, data)
        if any(_is_log_record(doc) for _, doc in records):
            listings, problems = _read_log(records, file)
            return listings, bad_lines + problems
        if len(records) > 1 and not bad_lines:
            not_json = "JSON lines without any JSON-RPC message: not a tool list or an MCP JSON-RPC log"
        return [], [_input_error(file, None, not_json)]
    if _is_log_record(doc):
        return _read_log([(None, doc)], file)
    listing = parse_listing(doc, file)
    if listing is None:
        return [], [_input_error(file, None, _no_tools_message(doc))]
    return [listing], []


def _no_tools_message(doc: Any) -> str:
    if isinstance(doc, dict):
        other = [k for k in ("resources", "resourceTemplates", "prompts") if k in doc]
        if other:
            return f"declares {', '.join(other)} but no tools; only tool annotations are linted"
    return (
        "no tools here: expected a tools/list result, a tools array, a tool object, an MCP JSON-RPC log or an "
        "mcp-servers document"
    )


def parse_listing(doc: Any, file: str, line: int | None = None, base: str = "") -> ToolListing | None:
    """Find the tools of one decoded document (``base`` is the pointer of ``doc`` within its log line).

    Understands a bare tools array, a ``tools/list`` result, a JSON-RPC response holding one, our
    ``mcp-servers`` files (``server``, ``protocolVersion``, ``tools``), mcpdesc documents (``info.name``,
    ``protocolVersions``, ``tools``) and a single tool. Returns ``None`` when the document holds no tools.
    """
    if isinstance(doc, list):
        return _listing(file, line, base, doc, None, (None, None))
    if not isinstance(doc, dict):
        return None
    if isinstance(doc.get("result"), dict) and isinstance(doc["result"].get("tools"), list):
        return parse_listing(doc["result"], file, line, f"{base}/result")
    server = _server_name(doc)
    version = _protocol_version(doc, base)
    if isinstance(doc.get("tools"), list):
        return _listing(file, line, f"{base}/tools", doc["tools"], server, version)
    if isinstance(doc.get("name"), str) and any(k in doc for k in ("inputSchema", "annotations", "description")):
        return ToolListing(
            file=file,
            line=line,
            server=server,
            protocol_version=version[0],
            protocol_version_source=version[1],
            tools=(doc,),
            tool_pointers=(base,),
        )
    return None


def _listing(
    file: str,
    line: int | None,
    base: str,
    tools: list[Any],
    server: str | None,
    version: tuple[str | None, str | None],
) -> ToolListing:
    return ToolListing(
        file=file,
        line=line,
        server=server,
        protocol_version=version[0],
        protocol_version_source=version[1],
        tools=tuple(tools),
        tool_pointers=tuple(f"{base}/{i}" for i in range(len(tools))),
    )


def _server_name(doc: Mapping[str, Any]) -> str | None:
    if isinstance(doc.get("server"), str):
        return str(doc["server"])
    for key in ("serverInfo", "info"):  # a tools/list capture with serverInfo; an mcpdesc document's info
        info = doc.get(key)
        if isinstance(info, dict) and isinstance(info.get("name"), str):
            return str(info["name"])
    return None


def _protocol_version(doc: Mapping[str, Any], base: str) -> tuple[str | None, str | None]:
    version = doc.get("protocolVersion")
    if isinstance(version, str):
        return version, f"{base}/protocolVersion"
    versions = doc.get("protocolVersions")  # mcpdesc: every version the server speaks; the earliest decides
    if isinstance(versions, list):
        known = sorted((v, i) for i, v in enumerate(versions) if isinstance(v, str) and _VERSION.match(v))
        if known:
            earliest, index = known[0]
            return earliest, f"{base}/protocolVersions/{index}"
    return None, None


# -- JSON-RPC logs ------------------------------------------------------------------------------------------

_MESSAGE_KEYS = ("message", "msg", "payload")
_SERVER_KEYS = ("server", "server_name", "serverName")


def _is_jsonrpc(doc: Any) -> bool:
    return isinstance(doc, dict) and doc.get("jsonrpc") == "2.0"


def _is_batch(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(_is_jsonrpc(item) for item in value)


def _is_log_record(doc: Any) -> bool:
    """True for a JSON-RPC message, a batch of them, or a wrapper whose ``message`` is one."""
    if _is_jsonrpc(doc) or _is_batch(doc):
        return True
    return isinstance(doc, dict) and any(_is_jsonrpc(doc.get(k)) or _is_batch(doc.get(k)) for k in _MESSAGE_KEYS)


def _split_json_lines(file: str, data: bytes) -> tuple[list[tuple[int | None, Any]], list[LintFinding]]:
    records: list[tuple[int | None, Any]] = []
    problems: list[LintFinding] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            records.append((number, orjson.loads(raw)))
        except orjson.JSONDecodeError as exc:
            problems.append(_input_error(file, number, f"not JSON: {exc.msg}"))
    return records, problems


def _messages(doc: Any) -> Iterator[tuple[str, dict[str, Any], str | None]]:
    """Yield ``(pointer, message, server)`` for each JSON-RPC message of one log record."""
    server: str | None = None
    container: Any = doc
    base = ""
    if isinstance(doc, dict) and not _is_jsonrpc(doc):
        server = next((str(doc[k]) for k in _SERVER_KEYS if isinstance(doc.get(k), str)), None)
        key = next((k for k in _MESSAGE_KEYS if k in doc), None)
        if key is None:
            return
        container, base = doc[key], f"/{key}"
    if isinstance(container, list):
        for i, item in enumerate(container):
            if _is_jsonrpc(item):
                yield f"{base}/{i}", item, server
    elif _is_jsonrpc(container):
        yield base, container, server


def _read_log(records: Sequence[tuple[int | None, Any]], file: str) -> tuple[list[ToolListing], list[LintFinding]]:
    """Take every ``tools/list`` result of a log, with the protocol version of the server's ``initialize``.

    ``records`` are ``(line, value)`` pairs; the line is None for a file that is one JSON document. A result
    is told by its shape (``tools`` array; ``protocolVersion`` with ``serverInfo`` or
    ``capabilities``). Servers are told apart by the wrapper's ``server`` field; without one, the log's only
    ``initialize`` result names the server and its version.
    """
    versions: dict[str | None, tuple[str, str]] = {}
    names: dict[str | None, str] = {}
    listings: list[ToolListing] = []
    for line, doc in records:
        for pointer, message, server in _messages(doc):
            result = message.get("result")
            if not isinstance(result, dict):
                continue
            if isinstance(result.get("protocolVersion"), str) and ("serverInfo" in result or "capabilities" in result):
                where = f"{pointer}/result/protocolVersion"
                versions[server] = (result["protocolVersion"], where if line is None else f"line {line}: {where}")
                info = result.get("serverInfo")
                if isinstance(info, dict) and isinstance(info.get("name"), str):
                    names[server] = info["name"]
            elif isinstance(result.get("tools"), list):
                version = versions.get(server) or (next(iter(versions.values())) if len(versions) == 1 else None)
                name = server or names.get(server) or (next(iter(names.values())) if len(names) == 1 else None)
                listings.append(
                    _listing(file, line, f"{pointer}/result/tools", result["tools"], name, version or (None, None))
                )
    if not listings:
        return [], [_input_error(file, None, "an MCP JSON-RPC log without any tools/list result")]
    return listings, []


# -- linting ------------------------------------------------------------------------------------------------


def lint_listing(listing: ToolListing) -> ListingLint:
    """Lint one tool listing: each tool, then duplicate names within the list."""
    findings: list[LintFinding] = []
    first_seen: dict[str, str] = {}
    for raw, pointer in zip(listing.tools, listing.tool_pointers, strict=True):
        findings.extend(lint_tool(raw, pointer, listing))
        name = raw.get("name") if isinstance(raw, dict) else None
        if not isinstance(name, str) or not name:
            continue
        if name in first_seen:
            findings.append(
                _Tool(listing, name, pointer).finding(
                    "duplicate-tool-name",
                    f"{pointer}/name",
                    f"tool name {name!r} is listed again (first at {first_seen[name]})",
                    "Give each tool a unique name, or drop the duplicate definition.",
                    extra=pointer,
                )
            )
        else:
            first_seen[name] = pointer
    return ListingLint(
        file=listing.file,
        line=listing.line,
        server=listing.server,
        protocol_version=listing.protocol_version,
        tools=len(listing.tools),
        findings=tuple(findings),
    )


def lint_tool(raw: Any, pointer: str, listing: ToolListing) -> list[LintFinding]:
    """Return the findings of one raw tool entry found at ``pointer`` of ``listing``."""
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str) or not raw["name"]:
        tool = _Tool(listing, None, pointer)
        return [
            tool.finding(
                "tool-without-name",
                pointer,
                "tool entry has no string 'name'; skipped",
                "Give the tool a non-empty string name.",
            )
        ]
    tool = _Tool(listing, raw["name"], pointer)
    findings: list[LintFinding] = []
    annotations = raw.get("annotations")
    if annotations is not None and not isinstance(annotations, dict):
        findings.append(
            tool.finding(
                "annotations-not-object",
                f"{pointer}/annotations",
                f"annotations is {_json_type(annotations)}, not an object; the tool counts as unhinted",
                'Send annotations as an object, e.g. {"readOnlyHint": true, "openWorldHint": false}.',
            )
        )
        annotations = None
    members: Mapping[str, Any] = annotations or {}
    hints = _check_members(tool, members, findings)
    if annotations is not None:
        _check_protocol(tool, findings)
    _check_missing(tool, members, hints, findings)
    _check_read_only_extras(tool, hints, findings)
    _check_words(tool, raw, hints, findings)
    _check_poisoning(tool, raw, findings)
    return findings


_RESOURCE_FIELDS = {
    key: " (a resource/content annotation field, not a tool annotation)"
    for key in ("audience", "priority", "lastModified")
}


def _check_members(tool: _Tool, members: Mapping[str, Any], findings: list[LintFinding]) -> dict[str, bool]:
    """Report unknown members, non-boolean hints and a non-string title; return the boolean hints."""
    hints: dict[str, bool] = {}
    for key, value in members.items():
        at = f"{tool.pointer}/annotations/{escape_pointer_token(key)}"
        if key not in ANNOTATION_MEMBERS:
            findings.append(
                tool.finding(
                    "annotation-unknown-member",
                    at,
                    f"annotation member {key!r} is not part of ToolAnnotations{_RESOURCE_FIELDS.get(key, '')}",
                    f"Remove {key!r}: ToolAnnotations holds only {', '.join(ANNOTATION_MEMBERS)}.",
                )
            )
        elif key == "title":
            if not isinstance(value, str):
                findings.append(
                    tool.finding(
                        "title-not-string",
                        at,
                        f"annotations.title is {_json_type(value)}, not a string; ignored",
                        "Make the title a string, or remove it.",
                    )
                )
        elif isinstance(value, bool):
            hints[key] = value
        else:
            shown = orjson.dumps(value).decode()
            word = value.strip().lower() if isinstance(value, str) else ""
            fix = f"{key}: {word}" if word in ("true", "false") else f"{key}: true or false"
            findings.append(
                tool.finding(
                    "hint-not-boolean",
                    at,
                    f"{key} is {shown[:60]} ({_json_type(value)}), not a boolean; clients and the monitor treat "
                    "it as absent",
                    f"Send a JSON boolean ({fix}), not a string, number or null.",
                )
            )
    return hints


def _is_before_annotations(version: str | None) -> bool:
    return version is not None and _VERSION.match(version) is not None and version < ANNOTATIONS_SINCE


def _check_protocol(tool: _Tool, findings: list[LintFinding]) -> None:
    listing = tool.listing
    if not _is_before_annotations(listing.protocol_version):
        return
    findings.append(
        tool.finding(
            "annotations-unsupported-protocol",
            f"{tool.pointer}/annotations",
            f"tool annotations under protocol version {listing.protocol_version} (declared at "
            f"{listing.protocol_version_source}); annotations exist from {ANNOTATIONS_SINCE}",
            f"Speak protocol version {ANNOTATIONS_SINCE} or later (upgrade the MCP SDK), or drop the annotations.",
        )
    )


_MISSING_HINTS = {
    "readOnlyHint": "Set readOnlyHint: true if the tool never modifies anything, false otherwise.",
    "destructiveHint": "Set destructiveHint: false if its updates are only additive, true if it may destroy "
    "or overwrite data.",
    "idempotentHint": "Set idempotentHint: true if calling it twice with the same arguments has no further "
    "effect, false otherwise.",
    "openWorldHint": "Set openWorldHint: false if the tool only touches a closed domain (local files, its own "
    "database), true if it reaches the internet or content other people write.",
}
_DEFAULTS = {"readOnlyHint": "false", "destructiveHint": "true", "idempotentHint": "false", "openWorldHint": "true"}


def _check_missing(
    tool: _Tool, members: Mapping[str, Any], hints: Mapping[str, bool], findings: list[LintFinding]
) -> None:
    read_only = hints.get("readOnlyHint") is True
    upgrade = (
        f" Annotations need protocol version {ANNOTATIONS_SINCE} or later."
        if _is_before_annotations(tool.listing.protocol_version)
        else ""
    )
    for hint in HINT_MEMBERS:
        if hint in members:
            continue  # present: a value that is not a boolean is an error of its own
        if read_only and hint in ("destructiveHint", "idempotentHint"):
            continue  # meaningless on a read-only tool, so not missing
        findings.append(
            tool.finding(
                "hint-missing",
                f"{tool.pointer}/annotations/{hint}",
                f"{hint} is missing; clients assume {_DEFAULTS[hint]}",
                _MISSING_HINTS[hint] + upgrade,
            )
        )


def _check_read_only_extras(tool: _Tool, hints: Mapping[str, bool], findings: list[LintFinding]) -> None:
    if hints.get("readOnlyHint") is not True:
        return
    for hint in ("destructiveHint", "idempotentHint"):
        if hint not in hints:
            continue
        if hint == "destructiveHint" and hints[hint]:
            message = "destructiveHint: true contradicts readOnlyHint: true (and is ignored on a read-only tool)"
        else:
            message = f"{hint}: {str(hints[hint]).lower()} is ignored because readOnlyHint is true"
        findings.append(
            tool.finding(
                "hint-ignored-when-read-only",
                f"{tool.pointer}/annotations/{hint}",
                message,
                f"Remove {hint}, or set readOnlyHint: false if the tool does modify its environment.",
            )
        )


def lead_words(description: str) -> list[str]:
    """Return the first words of a description's first sentence, lowercased (what the word checks read)."""
    text = description[:MAX_SCANNED_CHARS].strip()
    first = re.split(r"(?<=[.!?])\s|\n\s*\n", text, maxsplit=1)[0]
    return [w for w in re.split(r"[^a-z0-9]+", first.lower()) if w][:LEAD_WORDS]


def _check_words(tool: _Tool, raw: Mapping[str, Any], hints: Mapping[str, bool], findings: list[LintFinding]) -> None:
    assert tool.name is not None
    name_words = set(tokenize_name(tool.name))
    description = raw.get("description")
    lead = set(lead_words(description)) if isinstance(description, str) else set()

    def triggered(words: frozenset[str]) -> tuple[str, str, list[str]] | None:
        in_name = sorted(name_words & words)
        if in_name:
            return "name", f"{tool.pointer}/name", in_name
        in_lead = sorted(lead & words)
        if in_lead:
            return "description", f"{tool.pointer}/description", in_lead
        return None

    destructive = triggered(DESTRUCTIVE_WORDS)
    if destructive and (hints.get("readOnlyHint") is True or hints.get("destructiveHint") is False):
        where, at, words = destructive
        said = "readOnlyHint: true" if hints.get("readOnlyHint") is True else "destructiveHint: false"
        findings.append(
            tool.finding(
                "destructive-name-not-destructive",
                at,
                f"{where} says {_quote(words)} but the hints say {said}",
                "If the call deletes, cancels or overwrites anything, set readOnlyHint: false and "
                "destructiveHint: true; otherwise rename the tool or reword the description.",
                extra=",".join(words),
            )
        )
    reading = triggered(READ_WORDS)
    writes = (name_words & (WRITE_WORDS | NAME_CONNECTORS)) or (lead & WRITE_WORDS)
    if reading and hints.get("readOnlyHint") is False and not writes:
        where, at, words = reading
        findings.append(
            tool.finding(
                "read-name-not-read-only",
                at,
                f"{where} says {_quote(words)} and nothing about writing, but readOnlyHint is false",
                "Set readOnlyHint: true if the tool only reads (clients then run it without asking), or say "
                "in its name what it changes.",
                extra=",".join(words),
            )
        )
    network = triggered(NETWORK_WORDS)
    if network and hints.get("openWorldHint") is False:
        where, at, words = network
        findings.append(
            tool.finding(
                "network-name-closed-world",
                at,
                f"{where} says {_quote(words)} but openWorldHint is false",
                "Set openWorldHint: true if the tool reaches the internet or other people's content; keep it "
                "false only for a closed domain.",
                extra=",".join(words),
            )
        )


def _quote(words: Sequence[str]) -> str:
    return ", ".join(repr(w) for w in words)


def _scanned_texts(raw: Mapping[str, Any], pointer: str) -> Iterator[tuple[str, str, bool]]:
    """Yield ``(pointer, text, is_prose)`` for the tool's name, titles, description and schema texts."""
    for key in ("name", "title", "description"):
        if isinstance(raw.get(key), str):
            yield f"{pointer}/{key}", raw[key], key == "description"
    annotations = raw.get("annotations")
    if isinstance(annotations, dict) and isinstance(annotations.get("title"), str):
        yield f"{pointer}/annotations/title", annotations["title"], False
    schema = raw.get("inputSchema")
    if isinstance(schema, dict):
        yield from _schema_texts(schema, f"{pointer}/inputSchema", 0, [MAX_SCHEMA_TEXTS])


def _schema_texts(node: Any, pointer: str, depth: int, budget: list[int]) -> Iterator[tuple[str, str, bool]]:
    """Yield the ``description`` and ``title`` strings of a schema, depth-first, within ``budget``."""
    if depth > _MAX_SCHEMA_DEPTH:
        return
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        if budget[0] <= 0:
            return
        at = f"{pointer}/{escape_pointer_token(str(key))}"
        if isinstance(node, dict) and key in ("description", "title") and isinstance(value, str):
            budget[0] -= 1
            yield at, value, key == "description"
        elif isinstance(value, dict | list):
            yield from _schema_texts(value, at, depth + 1, budget)


def find_instructions(text: str) -> list[tuple[PoisonPattern, str]]:
    """Return each poisoning pattern that matches ``text`` (bounded) with the matched excerpt."""
    bounded = _HIDDEN.sub("", text[:MAX_SCANNED_CHARS])
    hits: list[tuple[PoisonPattern, str]] = []
    for pattern in POISON_PATTERNS:
        match = pattern.regex.search(bounded)
        if match:
            excerpt = " ".join(match.group(0).split())
            hits.append((pattern, excerpt if len(excerpt) <= 80 else excerpt[:77] + "..."))
    return hits


def find_hidden_characters(text: str) -> list[str]:
    """Return the hidden code points in ``text`` (bounded) as ``U+200B ZERO WIDTH SPACE`` labels, in order."""
    seen: dict[str, None] = {}
    for ch in _HIDDEN.findall(text[:MAX_SCANNED_CHARS]):
        seen.setdefault(f"U+{ord(ch):04X} {unicodedata.name(ch, 'UNNAMED')}", None)
    return list(seen)


def _check_poisoning(tool: _Tool, raw: Mapping[str, Any], findings: list[LintFinding]) -> None:
    for at, text, prose in _scanned_texts(raw, tool.pointer):
        hidden = find_hidden_characters(text)
        if hidden:
            findings.append(
                tool.finding(
                    "hidden-unicode",
                    at,
                    f"hidden characters: {', '.join(hidden[:4])}" + (", ..." if len(hidden) > 4 else ""),
                    "Remove invisible and bidirectional-control characters: a reviewer cannot see what they carry.",
                )
            )
        if not prose:
            continue
        for pattern, excerpt in find_instructions(text):
            findings.append(
                tool.finding(
                    "instruction-in-description",
                    at,
                    f"{pattern.label}: {excerpt!r}",
                    "Describe what the tool does and what its parameters mean; do not instruct the model.",
                    extra=pattern.id,
                )
            )


# -- helpers ------------------------------------------------------------------------------------------------


def escape_pointer_token(token: str) -> str:
    """Escape one JSON pointer reference token (RFC 6901: ``~`` → ``~0``, ``/`` → ``~1``)."""
    return token.replace("~", "~0").replace("/", "~1")


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


@dataclass(frozen=True)
class _Tool:
    """The tool being linted: its listing, name (None when it has none) and pointer."""

    listing: ToolListing
    name: str | None
    pointer: str

    def finding(self, rule_id: str, at: str, message: str, hint: str, *, extra: str = "") -> LintFinding:
        """Make a finding of this tool at pointer ``at``."""
        rule = RULES_BY_ID[rule_id]
        # The fingerprint names rule, server, tool and field (not the tool's position): it survives reordering.
        field = at[len(self.pointer) :] if self.name is not None and at.startswith(self.pointer) else at
        key = "\x1f".join((rule_id, self.listing.server_name, self.name or "", field, extra))
        return LintFinding(
            id=rule_id,
            severity=rule.severity,
            file=self.listing.file,
            line=self.listing.line,
            pointer=at,
            server=self.listing.server,
            tool=self.name,
            message=message,
            hint=hint,
            fingerprint=hashlib.sha256(key.encode()).hexdigest()[:32],
        )


def _input_error(file: str, line: int | None, message: str) -> LintFinding:
    key = "\x1f".join(("input-unreadable", file, str(line or "")))
    return LintFinding(
        id="input-unreadable",
        severity=LintSeverity.ERROR,
        file=file,
        line=line,
        pointer="",
        message=message,
        hint="Give a tools/list result, a tools array, a tool, an MCP JSON-RPC log or a folder of them.",
        fingerprint=hashlib.sha256(key.encode()).hexdigest()[:32],
    )
