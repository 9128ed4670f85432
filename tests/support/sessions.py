"""A session of one trusted app server, driven call by call: the fixture the session engine's tests share."""

from __future__ import annotations

from typing import Any

from monitor import SessionMonitor

READ = {"openWorldHint": False}
OPEN = {"openWorldHint": True}


def tool(name: str, annotations: dict[str, Any], **props: str) -> dict[str, Any]:
    """A tool definition whose arguments are ``props`` (name: JSON type)."""
    schema = {"type": "object", "properties": {k: {"type": v} for k, v in props.items()}}
    return {"name": name, "description": name.replace("_", " "), "inputSchema": schema, "annotations": annotations}


def start_session(tools: list[dict[str, Any]], user: str, **kwargs: Any) -> SessionMonitor:
    """A monitor (no built-in packs) with session ``s`` on the trusted server ``app`` listing ``tools``, after
    the user's message."""
    m = SessionMonitor(rules="none", **kwargs)
    m.register_tools("s", "app", tools, trusted=True)
    m.observe_user_message("s", user)
    return m


def run_call(m: SessionMonitor, call_id: str, name: str, args: dict[str, Any], result: Any = None) -> Any:
    """Ask before the call; give its result, if any; return the decision."""
    decision = m.before_call("s", "app", name, args, call_id)
    if result is not None:
        m.after_call("s", call_id, result)
    return decision


# -- a channel, a private file and mail: the session the flow and path tests run ----------------------------

FLOW_TOOLS = [
    tool("read_channel", OPEN, channel="string"),
    tool("read_file", READ, path="string"),
    tool("delete_file", READ, file_id="string"),
    tool("send_email", OPEN, to="string", body="string"),
]
"""A channel outsiders write to, a private file store and mail."""
FLOW_SECRET = "The quarterly revenue forecast is 4,812,337 dollars and the launch codename is BLUE HERON"
"""Private content with rare tokens and numbers."""


def make_channel(*messages: str) -> dict[str, Any]:
    """A channel's messages, each by a different user."""
    return {"messages": [{"author": f"user{i}", "text": text} for i, text in enumerate(messages)]}
