"""Test doubles for hosts that embed the monitor: a sink that records what it is pushed, and event factories.

A host's test wires the monitor in one line and asserts on what it decided and raised::

    from monitor.testing import RecordingSink, make_tool, make_tool_call, make_tool_result, replay_events

    sink = RecordingSink()
    monitor = SessionMonitor(sink=sink)
    replay_events(monitor, [make_tools_listed("mail", [make_tool("send_email", open_world=True)]), ...])
    assert sink.alert_kinds == [AlertKind.EXPOSED, ...]

The factories build the same event values every input reader yields (:mod:`monitor.models`), so a test can
describe a session as a list and replay it exactly as ``trifecta analyze`` would.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from monitor.models import (
    AlertKind,
    AlertRaised,
    AssistantMessage,
    CallDecided,
    Decision,
    Event,
    LevelChanged,
    MonitorFailed,
    ToolCall,
    ToolResult,
    ToolsListed,
    UserMessage,
)
from monitor.session import SessionMonitor

__all__ = [
    "DEFAULT_SESSION",
    "RecordingSink",
    "make_assistant_message",
    "make_tool",
    "make_tool_call",
    "make_tool_result",
    "make_tools_listed",
    "make_user_message",
    "replay_events",
]

DEFAULT_SESSION = "session-1"
"""The session id the factories use unless given another."""


@dataclass
class RecordingSink:
    """An :class:`~monitor.types.AlertSink` (and :class:`~monitor.types.FailureSink`) that keeps everything it is
    pushed, in order, for assertions."""

    decisions: list[CallDecided] = field(default_factory=list)
    alerts: list[AlertRaised] = field(default_factory=list)
    levels: list[LevelChanged] = field(default_factory=list)
    failures: list[MonitorFailed] = field(default_factory=list)

    def on_decision(self, notice: CallDecided) -> None:
        """Keep the decision."""
        self.decisions.append(notice)

    def on_alert(self, notice: AlertRaised) -> None:
        """Keep the alert."""
        self.alerts.append(notice)

    def on_level(self, notice: LevelChanged) -> None:
        """Keep the change of level."""
        self.levels.append(notice)

    def on_failure(self, notice: MonitorFailed) -> None:
        """Keep the monitor's failure."""
        self.failures.append(notice)

    @property
    def alert_kinds(self) -> list[AlertKind]:
        """Return the kinds of the alerts kept, in the order they were raised."""
        return [notice.alert.kind for notice in self.alerts]

    def clear(self) -> None:
        """Forget everything kept so far."""
        self.decisions.clear()
        self.alerts.clear()
        self.levels.clear()
        self.failures.clear()


def make_tool(
    name: str,
    description: str = "",
    *,
    input_schema: Mapping[str, Any] | None = None,
    title: str | None = None,
    read_only: bool | None = None,
    destructive: bool | None = None,
    idempotent: bool | None = None,
    open_world: bool | None = None,
) -> dict[str, Any]:
    """Return one ``tools/list`` entry as a server serves it; a hint left as None is absent from
    ``annotations`` (and ``annotations`` is absent when every hint and the title are)."""
    hints = {
        "title": title,
        "readOnlyHint": read_only,
        "destructiveHint": destructive,
        "idempotentHint": idempotent,
        "openWorldHint": open_world,
    }
    tool: dict[str, Any] = {
        "name": name,
        "description": description,
        "inputSchema": dict(input_schema) if input_schema is not None else {"type": "object"},
    }
    annotations = {key: value for key, value in hints.items() if value is not None}
    if annotations:
        tool["annotations"] = annotations
    return tool


def make_tools_listed(
    server: str, tools: Iterable[Mapping[str, Any]], *, trusted: bool = False, session_id: str = DEFAULT_SESSION
) -> ToolsListed:
    """Return a ``tools_listed`` event: ``server``'s ``tools/list`` result as the host saw it."""
    return ToolsListed(session_id=session_id, server=server, tools=[dict(t) for t in tools], trusted=trusted)


def make_user_message(text: str, *, session_id: str = DEFAULT_SESSION) -> UserMessage:
    """Return a ``user_message`` event: text the user typed."""
    return UserMessage(session_id=session_id, text=text)


def make_assistant_message(text: str, *, session_id: str = DEFAULT_SESSION) -> AssistantMessage:
    """Return an ``assistant_message`` event: text the model wrote."""
    return AssistantMessage(session_id=session_id, text=text)


def make_tool_call(
    server: str,
    tool: str,
    arguments: Mapping[str, Any] | None = None,
    *,
    call_id: str | None = None,
    session_id: str = DEFAULT_SESSION,
) -> ToolCall:
    """Return a ``tool_call`` event: a call as requested, before it runs (``arguments`` None: not recorded)."""
    return ToolCall(
        session_id=session_id,
        call_id=call_id,
        server=server,
        tool=tool,
        arguments=dict(arguments) if arguments is not None else None,
    )


def make_tool_result(
    call_id: str, result: Any = None, *, is_error: bool = False, session_id: str = DEFAULT_SESSION
) -> ToolResult:
    """Return a ``tool_result`` event: what the call ``call_id`` returned (``result`` None: not recorded)."""
    return ToolResult(session_id=session_id, call_id=call_id, result=result, is_error=is_error)


def replay_events(monitor: SessionMonitor, events: Iterable[Event]) -> list[Decision]:
    """Feed ``events`` to ``monitor`` in order; return the decision of every ``tool_call``, in order."""
    decisions = []
    for event in events:
        decision = monitor.observe(event)
        if decision is not None:
            decisions.append(decision)
    return decisions
