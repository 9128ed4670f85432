"""``trifecta lint``: annotation findings for MCP server authors.

Reads tool lists with the ingest tool-list reader (:func:`monitor.ingest.read_tool_lists`: ``tools/list`` results,
JSON-RPC responses, tools arrays, single tools, MCP JSON-RPC logs, our ``mcp-servers`` data files, mcpdesc documents, or
folders of them) and reports, per tool, what is wrong or doubtful with its ``annotations`` (docs/design.md, "Tool
annotations"): members outside the closed set, non-boolean hints, annotations under a protocol version that has none,
missing hints, hints that mean nothing where they are set, names and descriptions that contradict the hints, duplicate
names, and instruction-like or hidden text aimed at the model (tool poisoning).

Each rule of the catalogue (:data:`LINT_RULES`) is checked by one small validator object (:data:`VALIDATORS`)
with the rule's id, its severity and one ``check`` method; a :class:`Linter` runs them over each tool of a
list. Every finding is a value (:class:`LintFinding`) naming its rule, the file, and a JSON pointer into the
document as served. A file that cannot be read is an ``input-unreadable`` finding, never an exception.
"""

from monitor.lint._catalogue import ANNOTATIONS_SINCE, LINT_RULES, RULES_BY_ID, LintRule, LintSeverity
from monitor.lint._findings import LintFinding, LintReport, ListingLint, escape_pointer_token
from monitor.lint._labels import LABEL_RULE_IDS, check_labels, lint_log_labels
from monitor.lint._linter import Linter, lint_listing, lint_paths, lint_tool, run_validators, unreadable_input
from monitor.lint._poisoning import (
    HIDDEN_RANGES,
    MAX_SCANNED_CHARS,
    MAX_SCHEMA_TEXTS,
    POISON_PATTERNS,
    PoisonPattern,
    ScannedText,
    find_hidden_characters,
    find_instructions,
    scanned_texts,
)
from monitor.lint._protocol import (
    VALIDATORS,
    ListingNoteValidator,
    MethodNotInProtocol,
    ProtocolVersionUnknown,
    RequestMetaMissing,
    ResultTypeMissing,
    SessionIdInSessionlessProtocol,
)
from monitor.lint._validators import (
    AnnotationMember,
    AnnotationsNotObject,
    AnnotationsUnsupportedProtocol,
    AnnotationUnknownMember,
    DestructiveNameNotDestructive,
    DuplicateToolName,
    HiddenUnicode,
    HintIgnoredWhenReadOnly,
    HintMissing,
    HintNotBoolean,
    InstructionInDescription,
    LintedTool,
    MemberValidator,
    NetworkNameClosedWorld,
    ReadNameNotReadOnly,
    TextValidator,
    TitleNotString,
    ToolValidator,
    ToolWithoutName,
    Validator,
    WordValidator,
    annotation_members,
)
from monitor.lint._words import LEAD_WORDS, NAME_CONNECTORS, lead_words

__all__ = [
    "ANNOTATIONS_SINCE",
    "AnnotationMember",
    "AnnotationUnknownMember",
    "AnnotationsNotObject",
    "AnnotationsUnsupportedProtocol",
    "DestructiveNameNotDestructive",
    "DuplicateToolName",
    "HIDDEN_RANGES",
    "HiddenUnicode",
    "HintIgnoredWhenReadOnly",
    "HintMissing",
    "HintNotBoolean",
    "InstructionInDescription",
    "LABEL_RULE_IDS",
    "LEAD_WORDS",
    "LINT_RULES",
    "LintFinding",
    "LintReport",
    "LintRule",
    "LintSeverity",
    "LintedTool",
    "Linter",
    "ListingLint",
    "ListingNoteValidator",
    "MAX_SCANNED_CHARS",
    "MAX_SCHEMA_TEXTS",
    "MemberValidator",
    "MethodNotInProtocol",
    "NAME_CONNECTORS",
    "NetworkNameClosedWorld",
    "POISON_PATTERNS",
    "PoisonPattern",
    "ProtocolVersionUnknown",
    "RULES_BY_ID",
    "ReadNameNotReadOnly",
    "RequestMetaMissing",
    "ResultTypeMissing",
    "ScannedText",
    "SessionIdInSessionlessProtocol",
    "TextValidator",
    "TitleNotString",
    "ToolValidator",
    "ToolWithoutName",
    "VALIDATORS",
    "Validator",
    "WordValidator",
    "annotation_members",
    "check_labels",
    "escape_pointer_token",
    "find_hidden_characters",
    "find_instructions",
    "lead_words",
    "lint_listing",
    "lint_log_labels",
    "lint_paths",
    "lint_tool",
    "run_validators",
    "scanned_texts",
    "unreadable_input",
]
