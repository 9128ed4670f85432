"""Tool definitions, MCP tool annotations and annotation findings."""

from __future__ import annotations

import hashlib
from enum import StrEnum
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field, StrictBool

from monitor.models._ranked import RankedStrEnum

ANNOTATION_MEMBERS: tuple[str, ...] = (
    "title",
    "readOnlyHint",
    "destructiveHint",
    "idempotentHint",
    "openWorldHint",
)
HINT_MEMBERS: tuple[str, ...] = ANNOTATION_MEMBERS[1:]
ACTION_METADATA_KEY = "io.modelcontextprotocol/action-metadata"
"""The member the action-metadata extension (SEP-2061) adds to a tool's annotations; kept raw on the definition."""


class Severity(RankedStrEnum):
    """Severity of an alert or finding; ``rank`` orders info < warning < high < critical."""

    INFO = "info"
    WARNING = "warning"
    HIGH = "high"
    CRITICAL = "critical"


class Effect(StrEnum):
    """What a call does beyond moving data, when untrusted content steering it would be a hijack."""

    DESTRUCTIVE = "destructive"
    """Deletes or overwrites what the user has (files, mail, records, branches)."""
    PRIVILEGED = "privileged"
    """Changes who can do what: credentials, permissions, roles, outsiders' membership."""
    CODE_EXECUTION = "code-execution"
    """Makes code run later: CI workflows, shell start-up files, git hooks, scheduled jobs."""


class ToolAnnotations(BaseModel):
    """MCP ``ToolAnnotations``: a closed set of hints, each a strict boolean (``title`` a string)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    title: str | None = None
    readOnlyHint: StrictBool | None = None
    destructiveHint: StrictBool | None = None
    idempotentHint: StrictBool | None = None
    openWorldHint: StrictBool | None = None

    @property
    def open_world(self) -> bool:
        """``openWorldHint`` with its spec default (true)."""
        return True if self.openWorldHint is None else self.openWorldHint


class Finding(BaseModel):
    """A problem found in input that was still accepted (e.g. a non-boolean hint treated as absent)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    severity: Severity
    message: str
    pointer: str = Field(description="JSON pointer to the offending field")


class ToolDefinition(BaseModel):
    """One tool as a server lists it in ``tools/list``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str = ""
    input_schema: dict[str, Any] = Field(default_factory=dict)
    annotations: ToolAnnotations = Field(default_factory=ToolAnnotations)
    action_metadata: Any = Field(default=None, exclude=True)
    """The raw ``io.modelcontextprotocol/action-metadata`` member of the annotations, if any: hostile input, read
    only by the classifier's label reader."""
    definition_hash: str = Field(description="sha256 of the canonical JSON of the definition as served")


def hash_definition(raw: dict[str, Any]) -> str:
    """Return the definition hash (docs/design.md, "Definition hashes") of a raw tool object as served. Never raises.

    A definition that is plain JSON (string keys, integers that fit 64 bits, finite numbers, nesting orjson
    takes) hashes its canonical JSON. Any other (an integer of 2**64 or more, a key that is not a string, NaN,
    nesting too deep for orjson, a value of another type) hashes a canonical form of its own, under a prefix
    no canonical JSON starts with: it matches no pin, so a reviewed rule pinned to the tool is void for it."""
    canonical = {
        "name": raw.get("name"),
        "description": raw.get("description"),
        "inputSchema": raw.get("inputSchema"),
        "annotations": raw.get("annotations"),
    }
    try:
        text = orjson.dumps(canonical, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        text = b""
    if not text or (b"null" in text and _has_non_finite(canonical)):
        text = _NOT_JSON + _encode_any(canonical)
    return hashlib.sha256(text).hexdigest()


_NOT_JSON = b"\x00not-json\x00"


def _has_non_finite(value: Any) -> bool:
    """Whether a float NaN or infinity is anywhere in ``value`` (orjson writes them as null)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float):
            if item != item or item in (float("inf"), float("-inf")):
                return True
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return False


def _encode_scalar(value: Any) -> str:
    """A scalar, typed, in one deterministic text (never raises, never shows an address)."""
    if value is None or isinstance(value, bool):
        return f"{type(value).__name__}:{value}"
    if isinstance(value, int):
        return f"int:{int(value):x}"  # hexadecimal: no digit limit applies
    if isinstance(value, float):
        return f"float:{float.__repr__(value)}"
    if isinstance(value, str):
        return "str:" + orjson.dumps(value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")).decode()
    return f"other:{type(value).__module__}.{type(value).__qualname__}"


def _encode_any(value: Any) -> bytes:
    """Any value, as a deterministic text: mappings by their keys' texts in order, lists in order; iterative,
    so that no nesting depth makes it fail."""
    out: list[str] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Token):
            out.append(item.text)
        elif isinstance(item, dict):
            entries = sorted(((_encode_scalar(k), v) for k, v in item.items()), key=lambda e: e[0])
            stack.append(_Token("}"))
            for key, v in reversed(entries):
                stack.extend((_Token(";"), v, _Token(key + "=")))
            out.append("{")
        elif isinstance(item, list | tuple):
            stack.append(_Token("]"))
            for v in reversed(item):
                stack.extend((_Token(","), v))
            out.append("[")
        else:
            out.append(_encode_scalar(item))
    return "".join(out).encode("utf-8")


class _Token:
    """Punctuation already written, on the encoder's stack."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def parse_tool(raw: Any, pointer: str = "") -> tuple[ToolDefinition | None, list[Finding]]:
    """Parse a raw ``tools/list`` entry leniently.

    Unknown annotation members and non-boolean hints become findings and count as absent. Returns
    ``None`` for an entry without a usable name.
    """
    findings: list[Finding] = []
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str) or not raw["name"]:
        findings.append(_warning("tool-without-name", pointer or "/", "tool entry has no string 'name'; ignored"))
        return None, findings
    description = raw.get("description")
    schema = raw.get("inputSchema")
    raw_annotations = raw.get("annotations")
    annotations, ann_findings = _parse_annotations(raw_annotations, f"{pointer}/annotations")
    findings.extend(ann_findings)
    action_metadata = raw_annotations.get(ACTION_METADATA_KEY) if isinstance(raw_annotations, dict) else None
    tool = ToolDefinition(
        name=raw["name"],
        description=description if isinstance(description, str) else "",
        input_schema=schema if isinstance(schema, dict) else {},
        annotations=annotations,
        action_metadata=action_metadata,
        definition_hash=hash_definition(raw),
    )
    return tool, findings


def _parse_annotations(raw: Any, pointer: str) -> tuple[ToolAnnotations, list[Finding]]:
    if raw is None:
        return ToolAnnotations(), []
    if not isinstance(raw, dict):
        message = f"annotations must be an object, got {type(raw).__name__}; treated as absent"
        return ToolAnnotations(), [_warning("annotations-not-object", pointer, message)]
    findings: list[Finding] = []
    kept: dict[str, Any] = {}
    for key, value in raw.items():
        if key == ACTION_METADATA_KEY:
            continue
        if key not in ANNOTATION_MEMBERS:
            findings.append(
                _warning("annotation-unknown-member", f"{pointer}/{key}", f"unknown annotation member {key!r}; ignored")
            )
        elif key == "title":
            if isinstance(value, str):
                kept[key] = value
            else:
                findings.append(
                    _warning("annotation-title-not-string", f"{pointer}/{key}", "title must be a string; ignored")
                )
        elif isinstance(value, bool):
            kept[key] = value
        elif value is not None:
            message = f"{key} must be a boolean, got {orjson.dumps(value).decode()}; treated as absent"
            findings.append(_warning("annotation-hint-not-boolean", f"{pointer}/{key}", message))
    return ToolAnnotations(**kept), findings


def _warning(finding_id: str, pointer: str, message: str) -> Finding:
    return Finding(id=finding_id, severity=Severity.WARNING, pointer=pointer, message=message)
