"""Lint of server-sent result labels in MCP JSON-RPC logs: labels that cannot be read, labels that contradict the
tool's annotations, and labels that try to lower risk (honoured only from servers the configuration trusts).

Labels are read with :func:`monitor.classify.read_result_labels` (the same bounded reader the monitor uses); the
tool's annotations come from the ``tools/list`` result of the same session and server in the log. Each finding
names the log file, the line of the result and a JSON pointer to the label. A finding is reported once per
rule, server, tool and label key in a file.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson

from monitor.classify import TRUST_ANNOTATIONS_KEY, Label, LabelClaim, read_result_labels
from monitor.ingest import ToolList, read_mcp
from monitor.lint._catalogue import RULES_BY_ID
from monitor.lint._findings import LintFinding, ListingLint, escape_pointer_token, fingerprint
from monitor.models import ACTION_METADATA_KEY, ToolCall, ToolResult, ToolsListed

LABEL_RULE_IDS = (
    "label-unreadable",
    "label-untrusted-closed-world",
    "label-trusted-open-world",
    "label-contradicts-sensitivity",
    "label-lowers-risk",
)
"""The lint rules over result labels (checked per result, not by a tool validator)."""

_HINTS = {
    "label-unreadable": "Send the label in the shape its document gives (booleans for trust-annotations; "
    "'trusted'/'untrusted' and 'public'/'private'/[logins] for ifc).",
    "label-untrusted-closed-world": "Either the tool reads content others write (drop openWorldHint: false) "
    "or the label is wrong.",
    "label-trusted-open-world": "A tool that reads the open world returns untrusted content; label it so, or "
    "fix the annotation.",
    "label-contradicts-sensitivity": "Make the action-metadata returnMetadata.sensitivity and the result's "
    "confidentiality agree.",
    "label-lowers-risk": "Trust the server in the configuration (rule file 'trust: trusted' or the host's "
    "trusted servers) if its labels are to be honoured.",
}
_MAX_FIRST_LINE = 1 << 20
_BLOCK_INDEX = re.compile(r"content\[\d+\]")
_PROTECTED = (TRUST_ANNOTATIONS_KEY, ACTION_METADATA_KEY)


def add_label_findings(listings: Sequence[ListingLint], lists: Sequence[ToolList]) -> list[ListingLint]:
    """Return ``listings`` (one per entry of ``lists``) with the label findings of each JSON-RPC log added to
    the listing of the same file and server (else the file's first listing)."""
    result = list(listings)
    files: dict[str, list[int]] = {}
    for i, tool_list in enumerate(lists):
        if tool_list.line is not None:
            files.setdefault(tool_list.file, []).append(i)
    for file, indexes in files.items():
        prefix = _message_prefix(Path(file))
        by_server = {lists[i].server: i for i in reversed(indexes)}
        for server, finding in lint_log_labels(Path(file), prefix):
            i = by_server.get(server, indexes[0])
            result[i] = result[i].model_copy(update={"findings": (*result[i].findings, finding)})
    return result


def lint_log_labels(path: Path, prefix: str = "") -> Iterator[tuple[str, LintFinding]]:
    """Yield (server, finding) for the labels on the tool results of one MCP JSON-RPC log. Never raises: a log
    that cannot be read yields nothing here (the tool-list reader reports it)."""
    annotations: dict[tuple[str, str, str], Any] = {}
    calls: dict[tuple[str, str], tuple[str, str]] = {}
    seen: set[str] = set()
    try:
        for event in read_mcp(path):
            if isinstance(event, ToolsListed):
                for raw in event.tools:
                    if isinstance(raw, dict) and isinstance(raw.get("name"), str):
                        annotations[(event.session_id, event.server, raw["name"])] = raw.get("annotations")
            elif isinstance(event, ToolCall) and event.call_id is not None:
                calls[(event.session_id, event.call_id)] = (event.server, event.tool)
            elif isinstance(event, ToolResult) and isinstance(event.result, dict):
                server, tool = calls.get((event.session_id, event.call_id), ("", ""))
                hints = annotations.get((event.session_id, server, tool))
                line = _line_of(event.source)
                for rule_id, label in check_labels(event.result, hints):
                    key = fingerprint(rule_id, server, tool, _BLOCK_INDEX.sub("content[]", label.key))
                    if key not in seen:
                        seen.add(key)
                        yield server, _finding(rule_id, label, str(path), line, prefix, server, tool, key)
    except (OSError, ValueError):
        return


def check_labels(result: Any, annotations: Any) -> list[tuple[str, Label]]:
    """Return (rule id, label) for each label of ``result`` that a rule flags, given the tool's raw
    ``annotations`` (None when the tool was not listed)."""
    hints = annotations if isinstance(annotations, dict) else {}
    action = hints.get(ACTION_METADATA_KEY)
    returned = action.get("returnMetadata") if isinstance(action, dict) else None
    returned = returned if isinstance(returned, dict) else {}
    open_world = hints.get("openWorldHint") is True or returned.get("source") == "open-world"
    closed_world = hints.get("openWorldHint") is False or returned.get("source") == "first-party"
    sensitivity = returned.get("sensitivity")
    found: list[tuple[str, Label]] = []
    for label in read_result_labels(result).labels:
        if label.unreadable:
            found.append(("label-unreadable", label))
            continue
        if label.claim is LabelClaim.UNTRUSTED and closed_world:
            found.append(("label-untrusted-closed-world", label))
        if label.claim is LabelClaim.TRUSTED and open_world:
            found.append(("label-trusted-open-world", label))
        if (label.claim is LabelClaim.PRIVATE and sensitivity == "public") or (
            label.claim is LabelClaim.PUBLIC and isinstance(sensitivity, str) and sensitivity != "public"
        ):
            found.append(("label-contradicts-sensitivity", label))
        if label.claim in (LabelClaim.TRUSTED, LabelClaim.PUBLIC):
            found.append(("label-lowers-risk", label))
    return found


def _finding(
    rule_id: str, label: Label, file: str, line: int | None, prefix: str, server: str, tool: str, key: str
) -> LintFinding:
    rule = RULES_BY_ID[rule_id]
    where = f"{server}/{tool}" if tool else "a call the log does not show"
    return LintFinding(
        id=rule_id,
        severity=rule.severity,
        file=file,
        line=line,
        pointer=f"{prefix}/result{label_pointer(label.key)}",
        server=server or None,
        tool=tool or None,
        message=f"{where}: {label.key} ({label.scheme.value} label, claim {label.claim.value}): {rule.title}",
        hint=_HINTS[rule_id],
        fingerprint=key,
    )


def label_pointer(key: str) -> str:
    """Return the JSON pointer (below the result) of a label key such as ``content[2]._meta.ifc.integrity``."""
    tokens: list[str] = []
    rest = key
    while rest:
        protected = next((p for p in _PROTECTED if rest.startswith(p)), None)
        if protected is not None:
            token, rest = protected, rest[len(protected) + 1 :]
        else:
            token, _, rest = rest.partition(".")
        block = re.fullmatch(r"(\w+)\[(\d+)\]", token)
        tokens.extend(block.groups() if block else (token,))
    return "".join(f"/{escape_pointer_token(token)}" for token in tokens)


def _message_prefix(path: Path) -> str:
    """The JSON pointer of the JSON-RPC message in a log line: ``/message`` when lines wrap it (the format of
    ``samples/mcp``), else empty (bare JSON-RPC lines). Read from the first lines, within a bound."""
    try:
        with path.open("rb") as fh:
            for _ in range(16):  # past the log's own lines (a user message) to the first JSON-RPC one
                line = fh.readline(_MAX_FIRST_LINE)
                if not line:
                    break
                try:  # orjson: nesting past its limit is a decoding error, not a recursion
                    doc = orjson.loads(line) if line.strip() else None
                except orjson.JSONDecodeError:
                    continue
                if isinstance(doc, dict) and ("jsonrpc" in doc or "message" in doc):
                    return "" if "jsonrpc" in doc else "/message"
    except OSError:
        pass
    return ""


def _line_of(source: str | None) -> int | None:
    tail = source.rpartition(":")[2] if source else ""
    return int(tail) if tail.isdigit() else None
