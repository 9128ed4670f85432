"""A demo tool list of four tools and a classifier that trusts every server, for the client-table tests."""

from __future__ import annotations

from typing import Any

from monitor.classify import Classifier
from monitor.ingest import ToolList
from monitor.models import OverrideMatch, Posture, ToolContext


def make_demo_tool(name: str, description: str, annotations: dict[str, Any] | None) -> dict[str, Any]:
    raw: dict[str, Any] = {"name": name, "description": description, "inputSchema": {"type": "object"}}
    if annotations is not None:
        raw["annotations"] = annotations
    return raw


TOOLS = [
    make_demo_tool("read_notes", "Reads the notes.", {"readOnlyHint": True, "openWorldHint": False}),
    make_demo_tool(
        "drop_table", "Drops a table.", {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": False}
    ),
    make_demo_tool("send_email", "Sends an email to the recipients.", None),
    make_demo_tool(
        "tag_item", "Tags an item.", {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False}
    ),
]


def make_demo_tool_list() -> ToolList:
    """The four tools of ``TOOLS`` as one tool list of an unreviewed server."""
    return ToolList(
        file="demo.json",
        server="demo-unreviewed",
        tools=tuple(TOOLS),
        tool_pointers=tuple(f"/tools/{i}" for i in range(4)),
    )


class TrustEveryServer:
    """An override source without rules that marks every server trusted (so openWorldHint false counts)."""

    def classify(self, tool: ToolContext) -> OverrideMatch | None:
        return None

    def trust_for(self, server: str) -> bool | None:
        return True


def make_trusting_classifier() -> Classifier:
    """Annotations and heuristics only (no rule packs), with the demo server trusted."""
    return Classifier(Posture.BALANCED, TrustEveryServer())
