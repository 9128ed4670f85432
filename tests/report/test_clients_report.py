"""``monitor.report._clients``: the per-client table and its JSON form for a few annotation combinations."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from monitor.classify._engine import Classifier
from monitor.classify._layers import OverrideMatch, ToolContext
from monitor.clients import Client, ClientAction
from monitor.ingest._toolslist import read_tool_list
from monitor.lint import ToolListing, read_listings
from monitor.models._legs import Leg, Posture
from monitor.report._clients import (
    MONITOR_ASKS,
    MONITOR_NOTHING,
    build_client_table,
    clients_to_json,
    describe_monitor,
    render_clients,
)

MCP_SERVERS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "mcp-servers"

R, A, B, M = ClientAction.RUN, ClientAction.ASK, ClientAction.BLOCK, ClientAction.MODEL


def _tool(name: str, description: str, annotations: dict[str, Any] | None) -> dict[str, Any]:
    raw: dict[str, Any] = {"name": name, "description": description, "inputSchema": {"type": "object"}}
    if annotations is not None:
        raw["annotations"] = annotations
    return raw


TOOLS = [
    _tool("read_notes", "Reads the notes.", {"readOnlyHint": True, "openWorldHint": False}),
    _tool("drop_table", "Drops a table.", {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": False}),
    _tool("send_email", "Sends an email to the recipients.", None),
    _tool("tag_item", "Tags an item.", {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False}),
]


@pytest.fixture
def listing() -> ToolListing:
    return ToolListing(
        file="demo.json",
        server="demo-unreviewed",
        tools=tuple(TOOLS),
        tool_pointers=tuple(f"/tools/{i}" for i in range(4)),
    )


class _TrustEveryServer:
    """An override source without rules that marks every server trusted (so openWorldHint false counts)."""

    def classify(self, tool: ToolContext) -> OverrideMatch | None:
        return None

    def trust_for(self, server: str) -> bool | None:
        return True


@pytest.fixture
def classifier() -> Classifier:
    """Annotations and heuristics only (no rule packs), with the demo server trusted."""
    return Classifier(Posture.BALANCED, _TrustEveryServer())


@pytest.mark.parametrize(
    ("tool", "expected"),
    [
        # read-only: every client runs it
        ("read_notes", {c: R for c in Client}),
        # destructive: everyone asks but Gemini's plan mode, which blocks
        (
            "drop_table",
            {Client.VSCODE: A, Client.CLAUDE: A, Client.CHATGPT: A, Client.CODEX: A, Client.GEMINI: B, Client.GOOSE: A},
        ),
        # no hints: a write by default; Goose leaves it to the model
        (
            "send_email",
            {Client.VSCODE: A, Client.CLAUDE: A, Client.CHATGPT: A, Client.CODEX: A, Client.GEMINI: B, Client.GOOSE: M},
        ),
        # a non-destructive, closed-world write: Codex follows its approval mode (the model)
        (
            "tag_item",
            {Client.VSCODE: A, Client.CLAUDE: A, Client.CHATGPT: A, Client.CODEX: M, Client.GEMINI: B, Client.GOOSE: A},
        ),
    ],
)
def test_client_actions(
    listing: ToolListing, classifier: Classifier, tool: str, expected: dict[Client, ClientAction]
) -> None:
    rows = {row.tool: row for row in build_client_table(listing, classifier).rows}
    assert rows[tool].actions == expected


def test_monitor_column_follows_the_external_communication_leg(listing: ToolListing, classifier: Classifier) -> None:
    rows = {row.tool: row for row in build_client_table(listing, classifier).rows}
    # openWorldHint false from a trusted server: no untrusted content, no external communication.
    assert rows["read_notes"].legs == (Leg.PRIVATE_DATA,)
    assert rows["read_notes"].monitor == MONITOR_NOTHING == "nothing: no external communication"
    assert rows["drop_table"].monitor == MONITOR_NOTHING
    assert rows["tag_item"].legs == ()
    # No hints: open world by default, and the name says it sends.
    assert rows["send_email"].legs == (Leg.PRIVATE_DATA, Leg.UNTRUSTED_CONTENT, Leg.EXTERNAL_COMMUNICATION)
    assert rows["send_email"].monitor == MONITOR_ASKS
    assert "destination the user did not name" in MONITOR_ASKS and "private data" in MONITOR_ASKS
    assert describe_monitor(frozenset({Leg.EXTERNAL_COMMUNICATION})) == MONITOR_ASKS


def test_open_world_false_from_an_untrusted_server_lowers_nothing(listing: ToolListing) -> None:
    rows = {row.tool: row for row in build_client_table(listing, Classifier(Posture.BALANCED)).rows}
    # The same hints from an unreviewed, untrusted server: the tools keep the legs of a tool without hints.
    assert rows["tag_item"].legs == (Leg.UNTRUSTED_CONTENT, Leg.EXTERNAL_COMMUNICATION)
    assert rows["tag_item"].monitor == MONITOR_ASKS
    assert rows["read_notes"].monitor == MONITOR_ASKS
    # Baseline clients do not look at trust at all: their actions are the same.
    trusted = {
        row.tool: row for row in build_client_table(listing, Classifier(Posture.BALANCED, _TrustEveryServer())).rows
    }
    assert all(rows[name].actions == trusted[name].actions for name in rows)


def test_strict_posture_gives_unreviewed_tools_all_legs(listing: ToolListing) -> None:
    row = build_client_table(listing, Classifier(Posture.STRICT)).rows[0]
    assert row.legs == (Leg.PRIVATE_DATA, Leg.UNTRUSTED_CONTENT, Leg.EXTERNAL_COMMUNICATION)
    assert row.monitor == MONITOR_ASKS


def test_table_rendering(listing: ToolListing, classifier: Classifier) -> None:
    out = io.StringIO()
    render_clients([listing], out, color=False, classifier=classifier, width=260)
    lines = out.getvalue().splitlines()
    assert lines[0] == "demo-unreviewed (demo.json)"
    assert lines[1].split()[:5] == ["tool", "readOnly", "destr.", "idemp.", "openWorld"]
    assert (
        "VS Code Copilot" in lines[1] and "Gemini CLI (plan mode)" in lines[1] and "Goose (smart approve)" in lines[1]
    )
    assert lines[1].rstrip().endswith("legs   with the monitor, once armed")
    rows = {line.split()[0]: line.split() for line in lines[3:7]}
    assert rows["read_notes"][:11] == [
        "read_notes",
        "true",
        "-",
        "-",
        "false",
        "run",
        "run",
        "run",
        "run",
        "run",
        "run",
    ]
    assert rows["drop_table"][5:11] == ["ask", "ask", "ask", "ask", "block", "ask"]
    assert rows["send_email"][1:5] == ["-", "-", "-", "-"]
    assert rows["send_email"][10] == "model"
    assert " ".join(rows["send_email"]).endswith(MONITOR_ASKS)
    assert " ".join(rows["tag_item"]).endswith(MONITOR_NOTHING)
    assert rows["read_notes"][11] == "P--" and rows["tag_item"][11] == "---"
    assert lines[7].startswith("4 tools; asks before: VS Code Copilot 3, Claude 3, ChatGPT 3, Codex CLI 2,")
    assert lines[7].endswith("the monitor can ask before 1")
    assert "\x1b[" not in out.getvalue()


def test_json_form(listing: ToolListing, classifier: Classifier) -> None:
    doc = clients_to_json([listing], classifier)
    assert doc["schema_version"] == 1
    assert [c["id"] for c in doc["clients"]] == ["vscode", "claude", "chatgpt", "codex", "gemini", "goose"]
    assert doc["clients"][0]["title"] == "VS Code Copilot"
    tools = {t["name"]: t for t in doc["listings"][0]["tools"]}
    assert tools["read_notes"]["annotations"] == {
        "readOnlyHint": True,
        "destructiveHint": None,
        "idempotentHint": None,
        "openWorldHint": False,
    }
    assert tools["drop_table"]["clients"] == {
        "vscode": "ask",
        "claude": "ask",
        "chatgpt": "ask",
        "codex": "ask",
        "gemini": "block",
        "goose": "ask",
    }
    email = tools["send_email"]
    assert "external_communication" in email["legs"] and email["monitor"] == MONITOR_ASKS
    assert email["provenance"]["external_communication"]["source"] in ("heuristic", "default")
    assert doc["listings"][0]["server"] == "demo-unreviewed" and doc["listings"][0]["line"] is None
    json.dumps(doc)


def test_nameless_entries_are_left_out(tmp_path: Path, classifier: Classifier) -> None:
    listing = ToolListing(file="x.json", tools=({"description": "no name"}, TOOLS[0]), tool_pointers=("/0", "/1"))
    assert [row.tool for row in build_client_table(listing, classifier).rows] == ["read_notes"]
    assert build_client_table(listing, classifier).server == "x"  # the file name when the file names none


def test_accepts_the_ingest_tool_list_too(tmp_path: Path, classifier: Classifier) -> None:
    path = tmp_path / "listed.json"
    path.write_text(json.dumps({"server": "srv", "tools": TOOLS[:1]}))
    table = build_client_table(read_tool_list(path), classifier)
    assert (table.server, table.file, [r.tool for r in table.rows]) == ("srv", str(path), ["read_notes"])


def test_real_fetch_server_with_the_builtin_rules() -> None:
    path = MCP_SERVERS / "modelcontextprotocol-fetch.json"
    assert path.exists(), f"missing shared data: {path}"
    listings, problems = read_listings([path])
    assert problems == []
    row = build_client_table(listings[0]).rows[0]
    # Read-only: every client runs it without asking; the reviewed rule gives it all three legs.
    assert row.actions == {c: R for c in Client}
    assert row.legs == (Leg.PRIVATE_DATA, Leg.UNTRUSTED_CONTENT, Leg.EXTERNAL_COMMUNICATION)
    assert row.provenance[Leg.EXTERNAL_COMMUNICATION].source.value == "override"
    assert row.monitor == MONITOR_ASKS
