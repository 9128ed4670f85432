"""``monitor.report._clients``: the per-client table and its JSON form, rendered from the client tables."""

from __future__ import annotations

import io
import json

from monitor.classify import Classifier
from monitor.clients import MONITOR_ASKS, MONITOR_NOTHING, build_client_tables
from monitor.ingest import ToolList
from monitor.report import clients_to_json, render_clients


def test_table_rendering(demo_tool_list: ToolList, trusting_classifier: Classifier) -> None:
    out = io.StringIO()
    render_clients(build_client_tables([demo_tool_list], trusting_classifier), out, color=False, width=260)
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


def test_json_form(demo_tool_list: ToolList, trusting_classifier: Classifier) -> None:
    doc = clients_to_json(build_client_tables([demo_tool_list], trusting_classifier))
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
