"""Drafting a rule file from a tool list (``trifecta rules suggest``) and updating pins (``rules pin``)."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable
from typing import Any

import yaml

from monitor.classify._engine import Classifier
from monitor.models import ALL_LEGS, Posture, ToolContext, ToolDefinition, parse_tool, sort_legs

DRAFT_AUTHOR = "trifecta rules suggest"
UNLISTED_TOOL = "tool_the_server_does_not_list"
"""The tool of a draft's negative test when every listed tool gets every leg (a name no listed tool has)."""


def parse_definitions(raw_tools: Iterable[Any]) -> list[ToolDefinition]:
    """The tools of a list that have a name (lenient: annotation problems are ignored here)."""
    tools = []
    for i, raw in enumerate(raw_tools):
        tool, _ = parse_tool(raw, f"/tools/{i}")
        if tool is not None:
            tools.append(tool)
    return tools


def draft_rule_file(
    server: str,
    raw_tools: Iterable[Any],
    *,
    today: dt.date | None = None,
    overrides: str | None = None,
    server_info: str | None = None,
) -> dict[str, Any]:
    """A draft rule file (``status: experimental``) giving each tool the legs annotations and heuristics give
    it, pinned to the definition it was drafted from, with one positive and one negative test (when every listed
    tool gets every leg, the negative test is of a tool the server does not list). ``overrides``: the id of the
    rule file that already covers the server (a built-in pack), which the draft replaces. ``server_info``: the
    ``serverInfo.name`` the server announced, written as ``server_info: {name: …}`` so that the draft covers that
    server only (another server given the same name is not the one reviewed)."""
    classifier = Classifier(Posture.BALANCED)
    entries: list[dict[str, Any]] = []
    tests: list[dict[str, Any]] = []
    tools = parse_definitions(raw_tools)
    names = {tool.name for tool in tools}
    for tool in tools:
        c = classifier.classify(ToolContext(server, tool.name, tool)).classification
        why = (
            "; ".join(
                f"{leg.value} from {c.provenance[leg].source.value} ({c.provenance[leg].rule})"
                for leg in sort_legs(c.legs)
            )
            or "no leg from annotations or heuristics"
        )
        entries.append(
            {
                "match": tool.name,
                "pin": tool.definition_hash,
                "legs": [leg.value for leg in sort_legs(c.legs)],
                "reason": f"DRAFT, review before use: {why}",
            }
        )
        if not any("legs" in t for t in tests) and c.legs:
            tests.append({"tool": tool.name, "legs": [leg.value for leg in sort_legs(c.legs)]})
        missing = ALL_LEGS - c.legs
        if not any("absent" in t for t in tests) and missing:
            tests.append({"tool": tool.name, "absent": [leg.value for leg in sort_legs(missing)]})
    if not any("absent" in t for t in tests):
        tests.extend(_draft_unlisted_test(classifier, server, names))
    return {
        "id": str(uuid.uuid4()),
        "title": f"{server} (draft)",
        "status": "experimental",
        "author": DRAFT_AUTHOR,
        "date": (today or dt.date.today()).isoformat(),
        "references": [],
        "server": server,
        **({"server_info": {"name": server_info}} if server_info else {}),
        **({"overrides": overrides} if overrides is not None else {}),
        "tools": entries,
        "tests": tests,
    }


def _draft_unlisted_test(classifier: Classifier, server: str, listed: set[str]) -> list[dict[str, Any]]:
    """When every listed tool gets every leg, the negative test is a tool the server does not list: the draft
    covers its listed tools only (exact names), so that tool gets only what the layers below give a bare name.
    No test when even that tool gets every leg."""
    name = UNLISTED_TOOL
    while name in listed:
        name += "_"
    missing = ALL_LEGS - classifier.classify(ToolContext(server, name, None)).classification.legs
    if not missing:
        return []
    return [
        {
            "tool": name,
            "description": "a tool the server does not list: the draft covers its listed tools only, each of which "
            "gets every leg (write a negative test of a listed tool when reviewing)",
            "absent": [leg.value for leg in sort_legs(missing)],
        }
    ]


def dump_rule_file(doc: dict[str, Any]) -> str:
    """YAML text of a rule file, keys in the order written."""
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100)


def update_pins(text: str, hashes: dict[str, str]) -> tuple[str, list[str]]:
    """Set the ``pin`` of every tool entry whose ``match`` is exactly a tool name in ``hashes`` (a list of pins,
    one per reviewed version, gets the hash added).

    Edits the YAML text in place (comments and layout are kept). Returns the new text and the names pinned.
    """
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    if not isinstance(root, yaml.MappingNode):
        return text, []
    tools = next((v for k, v in root.value if k.value == "tools"), None)
    if not isinstance(tools, yaml.SequenceNode):
        return text, []
    edits: list[tuple[int, int, str]] = []
    pinned: list[str] = []
    for entry in tools.value:
        if not isinstance(entry, yaml.MappingNode):
            continue
        fields = {k.value: (k, v) for k, v in entry.value}
        match = fields.get("match")
        if match is None or match[1].value not in hashes:
            continue
        new = hashes[match[1].value]
        if "pin" in fields:
            value = fields["pin"][1]
            if isinstance(value, yaml.SequenceNode):
                # Several reviewed versions: keep them and add this one.
                digests = [item.value for item in value.value]
                if new in digests:
                    continue
                edits.append((value.start_mark.index, value.end_mark.index, "[" + ", ".join([*digests, new]) + "]"))
            else:
                edits.append((value.start_mark.index, value.end_mark.index, new))
        else:
            key = match[0]
            indent = " " * key.start_mark.column
            end = match[1].end_mark.index
            edits.append((end, end, f"\n{indent}pin: {new}"))
        pinned.append(match[1].value)
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    return text, pinned
