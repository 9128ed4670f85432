"""``monitor.clients._table``: each client's action, the legs and the monitor's addition per tool, for a few
annotation combinations, the posture and the server's trust."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.client_tables import TOOLS, TrustEveryServer

from monitor.classify import Classifier
from monitor.clients import (
    MONITOR_ASKS,
    MONITOR_NOTHING,
    Client,
    ClientAction,
    build_client_table,
    build_client_tables,
    describe_monitor,
)
from monitor.ingest import ToolList, read_tool_list, read_tool_lists
from monitor.models import Leg, Posture

MCP_SERVERS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "mcp-servers"

R, A, B, M = ClientAction.RUN, ClientAction.ASK, ClientAction.BLOCK, ClientAction.MODEL


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
    demo_tool_list: ToolList, trusting_classifier: Classifier, tool: str, expected: dict[Client, ClientAction]
) -> None:
    rows = {row.tool: row for row in build_client_table(demo_tool_list, trusting_classifier).rows}
    assert rows[tool].actions == expected


def test_monitor_column_follows_the_external_communication_leg(
    demo_tool_list: ToolList, trusting_classifier: Classifier
) -> None:
    rows = {row.tool: row for row in build_client_table(demo_tool_list, trusting_classifier).rows}
    # openWorldHint false from a trusted server: no untrusted content, no external communication.
    assert rows["read_notes"].legs == (Leg.PRIVATE_DATA,)
    assert rows["read_notes"].monitor == MONITOR_NOTHING == "nothing: no external communication"
    assert rows["drop_table"].monitor == MONITOR_NOTHING
    assert rows["tag_item"].legs == ()
    # No hints: open world by default, and the name says it sends (a send returns no stored content).
    assert rows["send_email"].legs == (Leg.UNTRUSTED_CONTENT, Leg.EXTERNAL_COMMUNICATION)
    assert rows["send_email"].monitor == MONITOR_ASKS
    assert "destination the user did not name" in MONITOR_ASKS and "private data" in MONITOR_ASKS
    assert describe_monitor(frozenset({Leg.EXTERNAL_COMMUNICATION})) == MONITOR_ASKS


def test_open_world_false_from_an_untrusted_server_lowers_nothing(demo_tool_list: ToolList) -> None:
    rows = {row.tool: row for row in build_client_table(demo_tool_list, Classifier(Posture.BALANCED)).rows}
    # The same hints from an unreviewed, untrusted server: the tools keep the legs of a tool without hints.
    assert rows["tag_item"].legs == (Leg.UNTRUSTED_CONTENT, Leg.EXTERNAL_COMMUNICATION)
    assert rows["tag_item"].monitor == MONITOR_ASKS
    # read_notes keeps X too: neither its name (it only reads) nor the untrusted server's openWorldHint false
    # takes it away (tests/classify checks that as a property).
    assert rows["read_notes"].legs == (Leg.PRIVATE_DATA, Leg.UNTRUSTED_CONTENT, Leg.EXTERNAL_COMMUNICATION)
    # Baseline clients do not look at trust at all: their actions are the same.
    trusted = {
        row.tool: row
        for row in build_client_table(demo_tool_list, Classifier(Posture.BALANCED, TrustEveryServer())).rows
    }
    assert all(rows[name].actions == trusted[name].actions for name in rows)


def test_strict_posture_gives_unreviewed_tools_all_legs(demo_tool_list: ToolList) -> None:
    row = build_client_table(demo_tool_list, Classifier(Posture.STRICT)).rows[0]
    assert row.legs == (Leg.PRIVATE_DATA, Leg.UNTRUSTED_CONTENT, Leg.EXTERNAL_COMMUNICATION)
    assert row.monitor == MONITOR_ASKS


def test_nameless_entries_are_left_out(tmp_path: Path, trusting_classifier: Classifier) -> None:
    demo_tool_list = ToolList(file="x.json", tools=({"description": "no name"}, TOOLS[0]), tool_pointers=("/0", "/1"))
    assert [row.tool for row in build_client_table(demo_tool_list, trusting_classifier).rows] == ["read_notes"]
    assert (
        build_client_table(demo_tool_list, trusting_classifier).server == "x"
    )  # the file name when the file names none


def test_a_tool_list_read_from_a_file(tmp_path: Path, trusting_classifier: Classifier) -> None:
    path = tmp_path / "listed.json"
    path.write_text(json.dumps({"server": "srv", "tools": TOOLS[:1]}))
    table = build_client_table(read_tool_list(path), trusting_classifier)
    assert (table.server, table.file, [r.tool for r in table.rows]) == ("srv", str(path), ["read_notes"])


@pytest.mark.shared_data
def test_real_fetch_server_with_the_builtin_rules() -> None:
    path = MCP_SERVERS / "modelcontextprotocol-fetch.json"
    assert path.exists(), f"missing shared data: {path}"
    listings, problems = read_tool_lists([path])
    assert problems == []
    row = build_client_table(listings[0]).rows[0]
    # Read-only: every client runs it without asking; the reviewed rule gives it all three legs.
    assert row.actions == {c: R for c in Client}
    assert row.legs == (Leg.PRIVATE_DATA, Leg.UNTRUSTED_CONTENT, Leg.EXTERNAL_COMMUNICATION)
    assert row.provenance[Leg.EXTERNAL_COMMUNICATION].source.value == "override"
    assert row.monitor == MONITOR_ASKS


def test_one_classifier_for_every_table(demo_tool_list: ToolList, trusting_classifier: Classifier) -> None:
    tables = build_client_tables([demo_tool_list, demo_tool_list], trusting_classifier)
    assert [t.server for t in tables] == ["demo-unreviewed", "demo-unreviewed"]
    assert tables[0] == tables[1] == build_client_table(demo_tool_list, trusting_classifier)
