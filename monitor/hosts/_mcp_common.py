"""What the MCP client guard and the server middleware share: asking the monitor without ever failing open,
reporting results without ever raising into the host, and a decision told in one line a person understands."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from monitor.decide import decide_on_monitor_error
from monitor.errors import MonitorWarning
from monitor.models import Decision, ServerIdentity
from monitor.session import SessionMonitor

logger = logging.getLogger("monitor.hosts.mcp")


def ask_monitor(
    monitor: SessionMonitor,
    session_key: str,
    server: str,
    tool: str,
    arguments: Mapping[str, Any] | None,
    call_id: str | None,
) -> Decision:
    """Return the monitor's decision on a call. If it cannot be obtained (the monitor raised), the answer is
    ``confirm`` with the reason ``monitor-error``: a guard never fails open."""
    try:
        return monitor.before_call(session_key, server, tool, arguments, call_id)
    except Exception:
        logger.exception("trifecta-monitor: no decision for %s/%s; asking to confirm", server, tool)
        return decide_on_monitor_error(call_id)


def register_listing(
    monitor: SessionMonitor,
    session_key: str,
    server: str,
    tools: Any,
    trusted: bool,
    identity: ServerIdentity | None = None,
) -> None:
    """Give the monitor a server's tool listing (with the server's ``identity``, when known). A failure is logged
    and warned, never raised: the tools are then unknown to the monitor, and their calls are decided by its
    default layers."""
    try:
        monitor.register_tools(session_key, server, tools, trusted, identity)
    except Exception as exc:
        logger.exception("trifecta-monitor: the tools of %s could not be registered", server)
        warnings.warn(
            f"the tools of {server} could not be registered ({type(exc).__name__}); their calls are decided "
            "as calls of unknown tools",
            MonitorWarning,
            stacklevel=3,
        )


def report_result(monitor: SessionMonitor, session_key: str, call_id: str, result: Any, is_error: bool) -> None:
    """Give the monitor a call's result. A failure is logged, never raised: the call has run, and its result
    belongs to the host."""
    try:
        monitor.after_call(session_key, call_id, result, is_error)
    except Exception:
        logger.exception("trifecta-monitor: the result of call %s could not be recorded", call_id)


def dump_model(value: BaseModel) -> Any:
    """Return an SDK object as the JSON the SDK sends on the wire."""
    return value.model_dump(by_alias=True, mode="json", exclude_none=True)


def error_result(exc: BaseException) -> dict[str, Any]:
    """Return a ``CallToolResult`` (as JSON) standing for a call that raised instead of returning."""
    return {"content": [{"type": "text", "text": f"{type(exc).__name__}: {exc}"}], "isError": True}


def describe_call(monitor: SessionMonitor, session_key: str, decision: Decision, server: str, tool: str) -> str:
    """Return the decision on a call in one line a person understands: what the call would do, and why (the
    wording the Claude Code hook and the proxy use too)."""
    tools_by_call: dict[str, str] = {}
    try:
        if monitor.has_session(session_key):
            tools_by_call = {call.call_id: call.tool for call in monitor.session(session_key).calls}
    except Exception:
        logger.exception("trifecta-monitor: the session could not be read to describe a decision")
    return decision.describe(f"{server}/{tool}", tools_by_call)
