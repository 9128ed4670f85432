"""The checks of ``trifecta lint``: one small validator object per rule, each with the rule's ``id``, its
``severity`` and one ``check`` method that yields findings (values, never exceptions).

Three kinds, by what ``check`` is given:

- :class:`ToolValidator`: one tool entry (a :class:`LintedTool`);
- :class:`MemberValidator`: one member of the tool's ``annotations`` object (an :class:`AnnotationMember`);
- :class:`TextValidator`: one text of the tool: name, titles, description, input-schema texts (a
  :class:`~monitor.lint._poisoning.ScannedText`).

The linter (:mod:`monitor.lint._linter`) runs them in the order of :data:`VALIDATORS`; consecutive member
(text) validators run member by member (text by text), so the findings of one tool come in document order.
Validators are made afresh for each tool list, so one may remember what it saw earlier in the list
(:class:`DuplicateToolName`). An entry without a usable name gets only the checks whose ``checks_nameless``
is true.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import orjson

from monitor.classify import (
    LINT_DESTRUCTIVE_WORDS,
    LINT_NETWORK_WORDS,
    LINT_READ_WORDS,
    LINT_WRITE_WORDS,
    tokenize_name,
)
from monitor.ingest import ToolList
from monitor.lint._catalogue import ANNOTATIONS_SINCE, RULES_BY_ID, LintRule, LintSeverity
from monitor.lint._findings import LintFinding, escape_pointer_token, fingerprint
from monitor.lint._poisoning import ScannedText, find_hidden_characters, find_instructions
from monitor.lint._words import NAME_CONNECTORS, lead_words
from monitor.models import (
    ACTION_METADATA_KEY,
    ANNOTATION_MEMBERS,
    HINT_MEMBERS,
    infer_protocol_version,
    is_protocol_date,
)

# -- what the checks look at --------------------------------------------------------------------------------


@dataclass(frozen=True)
class LintedTool:
    """One tool entry under lint: its tool list, the entry as served and its JSON pointer, and what the checks
    read of it (``name`` is None for an entry without a non-empty string name)."""

    listing: ToolList
    raw: Any
    pointer: str
    name: str | None
    members: Mapping[str, Any]
    """The members of the ``annotations`` object; empty when it is absent or not an object."""
    hints: Mapping[str, bool]
    """The hints among ``members`` that are booleans."""
    name_words: frozenset[str]
    lead: frozenset[str]
    """The lead words of the description (:func:`~monitor.lint._words.lead_words`)."""

    @classmethod
    def of(cls, listing: ToolList, raw: Any, pointer: str) -> LintedTool:
        """Return the entry ``raw`` found at ``pointer`` of ``listing``, ready for the checks."""
        entry: Mapping[str, Any] = raw if isinstance(raw, dict) else {}
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            return cls(listing, raw, pointer, None, {}, {}, frozenset(), frozenset())
        annotations = entry.get("annotations")
        members: Mapping[str, Any] = annotations if isinstance(annotations, dict) else {}
        hints = {k: v for k, v in members.items() if k in HINT_MEMBERS and isinstance(v, bool)}
        description = entry.get("description")
        lead = frozenset(lead_words(description)) if isinstance(description, str) else frozenset()
        return cls(listing, raw, pointer, name, members, hints, frozenset(tokenize_name(name)), lead)

    @property
    def annotated(self) -> bool:
        """True when the tool sends an ``annotations`` object."""
        return isinstance(self.raw, dict) and isinstance(self.raw.get("annotations"), dict)

    def says(self, words: frozenset[str]) -> tuple[str, str, list[str]] | None:
        """Return where the name (else the description's lead) uses ``words``: ``("name" or "description",
        pointer, the words used, sorted)``; None when neither does."""
        in_name = sorted(self.name_words & words)
        if in_name:
            return "name", f"{self.pointer}/name", in_name
        in_lead = sorted(self.lead & words)
        if in_lead:
            return "description", f"{self.pointer}/description", in_lead
        return None


@dataclass(frozen=True)
class AnnotationMember:
    """One member of a tool's ``annotations`` object, with its JSON pointer."""

    key: str
    value: Any
    pointer: str


def annotation_members(tool: LintedTool) -> Iterator[AnnotationMember]:
    """Yield the members of the tool's ``annotations`` object, in document order."""
    for key, value in tool.members.items():
        yield AnnotationMember(key, value, f"{tool.pointer}/annotations/{escape_pointer_token(key)}")


# -- the validator kinds ------------------------------------------------------------------------------------


class Validator(ABC):
    """A check of one lint rule: its ``id`` (a key of :data:`~monitor.lint._catalogue.RULES_BY_ID`)."""

    id: ClassVar[str]
    checks_nameless: ClassVar[bool] = False
    """True for a check of entries that have no usable name; every other check runs on named tools only."""

    @property
    def rule(self) -> LintRule:
        """The catalogue entry of this validator's rule."""
        return RULES_BY_ID[self.id]

    @property
    def severity(self) -> LintSeverity:
        """The severity of this validator's findings (the rule's)."""
        return self.rule.severity

    def finding(self, tool: LintedTool, at: str, message: str, hint: str, *, extra: str = "") -> LintFinding:
        """Return a finding of this rule on ``tool`` at pointer ``at``; ``extra`` tells apart findings of one
        rule on one field in the fingerprint."""
        listing = tool.listing
        # The fingerprint names rule, server, tool and field (not the tool's position): it survives reordering.
        where = at[len(tool.pointer) :] if tool.name is not None and at.startswith(tool.pointer) else at
        return LintFinding(
            id=self.id,
            severity=self.severity,
            file=listing.file,
            line=listing.line,
            pointer=at,
            server=listing.server,
            tool=tool.name,
            message=message,
            hint=hint,
            fingerprint=fingerprint(self.id, listing.server_name, tool.name or "", where, extra),
        )


class ToolValidator(Validator):
    """A check of one tool entry."""

    @abstractmethod
    def check(self, tool: LintedTool) -> Iterator[LintFinding]:
        """Yield the findings of this rule on ``tool``."""


class MemberValidator(Validator):
    """A check of one member of a tool's ``annotations`` object."""

    @abstractmethod
    def check(self, tool: LintedTool, member: AnnotationMember) -> Iterator[LintFinding]:
        """Yield the findings of this rule on ``member`` of ``tool``."""


class TextValidator(Validator):
    """A check of one text of a tool (name, titles, description, input-schema texts)."""

    @abstractmethod
    def check(self, tool: LintedTool, text: ScannedText) -> Iterator[LintFinding]:
        """Yield the findings of this rule on ``text`` of ``tool``."""


# -- entries and annotation objects -------------------------------------------------------------------------


class ToolWithoutName(ToolValidator):
    """An entry without a non-empty string ``name`` (the entry is skipped)."""

    id = "tool-without-name"
    checks_nameless = True

    def check(self, tool: LintedTool) -> Iterator[LintFinding]:
        """Yield a finding when the entry has no usable name."""
        if tool.name is None:
            yield self.finding(
                tool, tool.pointer, "tool entry has no string 'name'; skipped", "Give the tool a non-empty string name."
            )


class AnnotationsNotObject(ToolValidator):
    """``annotations`` present but not an object: the tool counts as unhinted."""

    id = "annotations-not-object"

    def check(self, tool: LintedTool) -> Iterator[LintFinding]:
        """Yield a finding when ``annotations`` is neither absent nor an object."""
        annotations = tool.raw.get("annotations")
        if annotations is not None and not isinstance(annotations, dict):
            yield self.finding(
                tool,
                f"{tool.pointer}/annotations",
                f"annotations is {_json_type(annotations)}, not an object; the tool counts as unhinted",
                'Send annotations as an object, e.g. {"readOnlyHint": true, "openWorldHint": false}.',
            )


_RESOURCE_FIELDS = {
    key: " (a resource/content annotation field, not a tool annotation)"
    for key in ("audience", "priority", "lastModified")
}


class AnnotationUnknownMember(MemberValidator):
    """A member outside the closed set of ToolAnnotations."""

    id = "annotation-unknown-member"

    def check(self, tool: LintedTool, member: AnnotationMember) -> Iterator[LintFinding]:
        """Yield a finding when ``member`` is not a ToolAnnotations member."""
        key = member.key
        if key not in ANNOTATION_MEMBERS and key != ACTION_METADATA_KEY:
            yield self.finding(
                tool,
                member.pointer,
                f"annotation member {key!r} is not part of ToolAnnotations{_RESOURCE_FIELDS.get(key, '')}",
                f"Remove {key!r}: ToolAnnotations holds only {', '.join(ANNOTATION_MEMBERS)}.",
            )


class TitleNotString(MemberValidator):
    """``annotations.title`` that is not a string."""

    id = "title-not-string"

    def check(self, tool: LintedTool, member: AnnotationMember) -> Iterator[LintFinding]:
        """Yield a finding when ``member`` is the title and not a string."""
        if member.key == "title" and not isinstance(member.value, str):
            yield self.finding(
                tool,
                member.pointer,
                f"annotations.title is {_json_type(member.value)}, not a string; ignored",
                "Make the title a string, or remove it.",
            )


class HintNotBoolean(MemberValidator):
    """A hint whose value is not a JSON boolean: clients and the monitor treat it as absent."""

    id = "hint-not-boolean"

    def check(self, tool: LintedTool, member: AnnotationMember) -> Iterator[LintFinding]:
        """Yield a finding when ``member`` is a hint and not a boolean."""
        key, value = member.key, member.value
        if key not in HINT_MEMBERS or isinstance(value, bool):
            return
        shown = orjson.dumps(value).decode()
        word = value.strip().lower() if isinstance(value, str) else ""
        fix = f"{key}: {word}" if word in ("true", "false") else f"{key}: true or false"
        yield self.finding(
            tool,
            member.pointer,
            f"{key} is {shown[:60]} ({_json_type(value)}), not a boolean; clients and the monitor treat it as absent",
            f"Send a JSON boolean ({fix}), not a string, number or null.",
        )


def _is_before_annotations(version: str | None) -> bool:
    """True for a declared version without tool annotations (a date before every known version included)."""
    if not is_protocol_date(version):
        return False
    entry = infer_protocol_version(version)
    return entry is None or not entry.tool_annotations


class AnnotationsUnsupportedProtocol(ToolValidator):
    """An annotations object under a protocol version that has no tool annotations."""

    id = "annotations-unsupported-protocol"

    def check(self, tool: LintedTool) -> Iterator[LintFinding]:
        """Yield a finding when the tool is annotated and its list declares a version before annotations."""
        listing = tool.listing
        if not tool.annotated or not _is_before_annotations(listing.protocol_version):
            return
        yield self.finding(
            tool,
            f"{tool.pointer}/annotations",
            f"tool annotations under protocol version {listing.protocol_version} (declared at "
            f"{listing.protocol_version_source}); annotations exist from {ANNOTATIONS_SINCE}",
            f"Speak protocol version {ANNOTATIONS_SINCE} or later (upgrade the MCP SDK), or drop the annotations.",
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


class HintMissing(ToolValidator):
    """A hint that is not sent (destructiveHint and idempotentHint are not asked of read-only tools)."""

    id = "hint-missing"

    def check(self, tool: LintedTool) -> Iterator[LintFinding]:
        """Yield a finding for each hint the tool does not send, in the order of the spec."""
        read_only = tool.hints.get("readOnlyHint") is True
        upgrade = (
            f" Annotations need protocol version {ANNOTATIONS_SINCE} or later."
            if _is_before_annotations(tool.listing.protocol_version)
            else ""
        )
        for hint in HINT_MEMBERS:
            if hint in tool.members:
                continue  # present: a value that is not a boolean is an error of its own
            if read_only and hint in ("destructiveHint", "idempotentHint"):
                continue  # meaningless on a read-only tool, so not missing
            yield self.finding(
                tool,
                f"{tool.pointer}/annotations/{hint}",
                f"{hint} is missing; clients assume {_DEFAULTS[hint]}",
                _MISSING_HINTS[hint] + upgrade,
            )


class HintIgnoredWhenReadOnly(ToolValidator):
    """destructiveHint or idempotentHint set on a read-only tool."""

    id = "hint-ignored-when-read-only"

    def check(self, tool: LintedTool) -> Iterator[LintFinding]:
        """Yield a finding for each of destructiveHint and idempotentHint that a read-only tool sends."""
        hints = tool.hints
        if hints.get("readOnlyHint") is not True:
            return
        for hint in ("destructiveHint", "idempotentHint"):
            if hint not in hints:
                continue
            if hint == "destructiveHint" and hints[hint]:
                message = "destructiveHint: true contradicts readOnlyHint: true (and is ignored on a read-only tool)"
            else:
                message = f"{hint}: {str(hints[hint]).lower()} is ignored because readOnlyHint is true"
            yield self.finding(
                tool,
                f"{tool.pointer}/annotations/{hint}",
                message,
                f"Remove {hint}, or set readOnlyHint: false if the tool does modify its environment.",
            )


# -- names and descriptions against the hints ---------------------------------------------------------------


class WordValidator(ToolValidator):
    """A check of the words of a tool's name (else of its description's lead) against its hints: a subclass
    names the words, says how the hints contradict them, and how to fix it."""

    words: ClassVar[frozenset[str]]
    fix: ClassVar[str]

    @abstractmethod
    def contradiction(self, tool: LintedTool) -> str | None:
        """Return how the hints contradict the words (the end of the message); None when they do not."""

    def check(self, tool: LintedTool) -> Iterator[LintFinding]:
        """Yield a finding when the name or description lead uses one of the words and the hints contradict it."""
        said = tool.says(self.words)
        contradiction = self.contradiction(tool) if said else None
        if said and contradiction:
            where, at, words = said
            yield self.finding(
                tool, at, f"{where} says {_quote(words)}{contradiction}", self.fix, extra=",".join(words)
            )


class DestructiveNameNotDestructive(WordValidator):
    """A destructive word in the name or description lead, with hints that say the tool is safe."""

    id = "destructive-name-not-destructive"
    words = LINT_DESTRUCTIVE_WORDS
    fix = (
        "If the call deletes, cancels or overwrites anything, set readOnlyHint: false and destructiveHint: true; "
        "otherwise rename the tool or reword the description."
    )

    def contradiction(self, tool: LintedTool) -> str | None:
        """Return the hint that says the tool is safe: readOnlyHint true, else destructiveHint false."""
        if tool.hints.get("readOnlyHint") is True:
            return " but the hints say readOnlyHint: true"
        if tool.hints.get("destructiveHint") is False:
            return " but the hints say destructiveHint: false"
        return None


class ReadNameNotReadOnly(WordValidator):
    """A read word in the name or description lead, nothing about writing, and readOnlyHint false."""

    id = "read-name-not-read-only"
    words = LINT_READ_WORDS
    fix = (
        "Set readOnlyHint: true if the tool only reads (clients then run it without asking), or say in its name "
        "what it changes."
    )

    def contradiction(self, tool: LintedTool) -> str | None:
        """Return that readOnlyHint is false, unless the name or lead also says the tool writes."""
        writes = (tool.name_words & (LINT_WRITE_WORDS | NAME_CONNECTORS)) or (tool.lead & LINT_WRITE_WORDS)
        if tool.hints.get("readOnlyHint") is False and not writes:
            return " and nothing about writing, but readOnlyHint is false"
        return None


class NetworkNameClosedWorld(WordValidator):
    """A network word in the name or description lead, and openWorldHint false."""

    id = "network-name-closed-world"
    words = LINT_NETWORK_WORDS
    fix = (
        "Set openWorldHint: true if the tool reaches the internet or other people's content; keep it false only "
        "for a closed domain."
    )

    def contradiction(self, tool: LintedTool) -> str | None:
        """Return that openWorldHint is false."""
        return " but openWorldHint is false" if tool.hints.get("openWorldHint") is False else None


# -- tool poisoning -----------------------------------------------------------------------------------------


class HiddenUnicode(TextValidator):
    """Zero-width, tag and bidirectional-control characters in any text of the tool."""

    id = "hidden-unicode"

    def check(self, tool: LintedTool, text: ScannedText) -> Iterator[LintFinding]:
        """Yield a finding when ``text`` holds hidden characters (the first four are named)."""
        hidden = find_hidden_characters(text.text)
        if hidden:
            yield self.finding(
                tool,
                text.pointer,
                f"hidden characters: {', '.join(hidden[:4])}" + (", ..." if len(hidden) > 4 else ""),
                "Remove invisible and bidirectional-control characters: a reviewer cannot see what they carry.",
            )


class InstructionInDescription(TextValidator):
    """Instruction-like text aimed at the model in a description (the tool's or a parameter's)."""

    id = "instruction-in-description"

    def check(self, tool: LintedTool, text: ScannedText) -> Iterator[LintFinding]:
        """Yield a finding for each poisoning pattern that matches a description."""
        if not text.prose:
            return
        for pattern, excerpt in find_instructions(text.text):
            yield self.finding(
                tool,
                text.pointer,
                f"{pattern.label}: {excerpt!r}",
                "Describe what the tool does and what its parameters mean; do not instruct the model.",
                extra=pattern.id,
            )


# -- the list -----------------------------------------------------------------------------------------------


class DuplicateToolName(ToolValidator):
    """A tool name listed again in the same tool list (remembers the names seen so far)."""

    id = "duplicate-tool-name"

    def __init__(self) -> None:
        self._first_seen: dict[str, str] = {}

    def check(self, tool: LintedTool) -> Iterator[LintFinding]:
        """Yield a finding when a tool of the same name came earlier in the list."""
        assert tool.name is not None
        first = self._first_seen.setdefault(tool.name, tool.pointer)
        if first != tool.pointer:
            yield self.finding(
                tool,
                f"{tool.pointer}/name",
                f"tool name {tool.name!r} is listed again (first at {first})",
                "Give each tool a unique name, or drop the duplicate definition.",
                extra=tool.pointer,
            )


# -- helpers ------------------------------------------------------------------------------------------------


def _quote(words: Sequence[str]) -> str:
    return ", ".join(repr(w) for w in words)


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
