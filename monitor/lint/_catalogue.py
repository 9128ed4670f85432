"""The lint rule catalogue: every rule's stable id, severity, title and help text (the registry of ids).

Ids never change meaning; a rule's checks live in :mod:`monitor.lint._validators`, one validator a rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from monitor.models import PROTOCOL_VERSIONS, find_first_version

_KNOWN_VERSIONS = ", ".join(v.version for v in PROTOCOL_VERSIONS[:-1]) + f" and {PROTOCOL_VERSIONS[-1].version}"
ANNOTATIONS_SINCE = find_first_version("tool_annotations")
"""The first MCP protocol version with tool annotations (from :data:`monitor.models.PROTOCOL_VERSIONS`)."""
SESSIONLESS_SINCE = find_first_version("request_meta")
"""The first MCP protocol version without ``initialize`` and protocol sessions."""


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
        id="protocol-version-unknown",
        severity=LintSeverity.WARNING,
        title="A protocol version the monitor does not know",
        help=f"The known MCP protocol versions are {_KNOWN_VERSIONS} (docs/mcp-protocol.md). Another value is a "
        "typo, a draft, or a newer "
        "version: the version checks were made as for the latest known version before it, if any.",
    ),
    LintRule(
        id="method-not-in-protocol",
        severity=LintSeverity.ERROR,
        title="A method the traffic's protocol version does not have",
        help=f"MCP {SESSIONLESS_SINCE} removed the initialize/notifications/initialized handshake (SEP-2575), "
        "ping, logging/setLevel, notifications/roots/list_changed, and server requests on the wire (sampling, "
        "elicitation and roots travel inside an InputRequiredResult). Traffic that declares this version "
        "in its requests' _meta must not use them; a server that still needs them speaks an older version.",
    ),
    LintRule(
        id="session-id-in-sessionless-protocol",
        severity=LintSeverity.ERROR,
        title="A protocol session id under a protocol version without sessions",
        help=f"MCP {SESSIONLESS_SINCE} has no protocol sessions: no Mcp-Session-Id (SEP-2567). Key the "
        "conversation by the host's conversation id (a wrapper conversation_id field) instead.",
    ),
    LintRule(
        id="request-meta-missing",
        severity=LintSeverity.ERROR,
        title="A request without its protocol version or client capabilities in _meta",
        help=f"From MCP {SESSIONLESS_SINCE} every request carries params._meta with "
        '"io.modelcontextprotocol/protocolVersion" (a string) and '
        '"io.modelcontextprotocol/clientCapabilities" (an object); servers reject requests without them.',
    ),
    LintRule(
        id="result-type-missing",
        severity=LintSeverity.ERROR,
        title="A result without resultType",
        help=f'From MCP {SESSIONLESS_SINCE} a server includes resultType ("complete" or "input_required") '
        "in every result; a client cannot tell a final result from a request for more input without it.",
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
    LintRule(
        id="label-unreadable",
        severity=LintSeverity.ERROR,
        title="A result label that cannot be read",
        help="A trust-annotations, ifc or action-metadata label of the wrong type or value. The monitor reads it "
        "as the claim that raises risk (untrusted content, private data) and drops the result's lowering claims.",
    ),
    LintRule(
        id="label-untrusted-closed-world",
        severity=LintSeverity.WARNING,
        title="A result labelled untrusted from a tool that says it is closed-world",
        help="The tool is annotated openWorldHint: false (or returnMetadata.source first-party), yet its result "
        "says it carries untrusted content. The monitor takes the label; one of the two is wrong.",
    ),
    LintRule(
        id="label-trusted-open-world",
        severity=LintSeverity.WARNING,
        title="A result labelled trusted from a tool that reads the open world",
        help="The tool is annotated openWorldHint: true (or returnMetadata.source open-world), yet its result "
        "says integrity: trusted. Only a trusted server's label lowers risk, and never a reviewed rule's legs.",
    ),
    LintRule(
        id="label-contradicts-sensitivity",
        severity=LintSeverity.WARNING,
        title="A result's confidentiality contradicts the tool's returnMetadata.sensitivity",
        help="The tool's action-metadata says its results are public and a result says private or sensitive, "
        "or the other way round. The monitor takes the claim that raises risk.",
    ),
    LintRule(
        id="label-lowers-risk",
        severity=LintSeverity.WARNING,
        title="A result label that lowers risk",
        help="integrity: trusted or confidentiality: public removes untrusted content or private data from the "
        "result only when the configuration trusts the server; from any other server it is ignored.",
    ),
)
"""Every lint rule, in report order (the registry of ids; ids never change meaning)."""

RULES_BY_ID: Mapping[str, LintRule] = {rule.id: rule for rule in LINT_RULES}
