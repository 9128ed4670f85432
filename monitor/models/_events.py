"""Session events: the one shape every input adapter yields and the engine consumes."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from monitor.models._decisions import Decision
from monitor.models._identity import ServerIdentity


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    session_id: str = Field(min_length=1)
    time: datetime | None = None
    source: str | None = None
    """Where the record was read, set by the reader (never taken from the record): ``file:line`` for line
    formats, ``archive!member#messages/N`` or ``file#messages/N`` for AgentDojo runs, ``file#<pointer>`` for a
    span of a single OTLP document, ``file#seq=N`` for the hook store; None for events made in memory."""


class ToolsListed(_Event):
    """A server's ``tools/list`` result as the host saw it. Tools stay raw: they are parsed leniently.
    ``identity`` is what the host knows of the server besides its name (its ``serverInfo``, the package that
    started it), if anything."""

    kind: Literal["tools_listed"] = "tools_listed"
    server: str
    tools: list[Any]
    trusted: bool = False
    identity: ServerIdentity | None = None


class UserMessage(_Event):
    """Text the user typed: trusted, and private (the conversation itself is private data)."""

    kind: Literal["user_message"] = "user_message"
    text: str


class AssistantMessage(_Event):
    """Text the model wrote."""

    kind: Literal["assistant_message"] = "assistant_message"
    text: str


class CallOutcome(StrEnum):
    """What a live gate (the stdio proxy) did with a call it decided."""

    FORWARDED = "forwarded"
    """Allowed: passed on to the server."""
    BLOCKED = "blocked"
    """Denied: never passed on."""
    ASKED = "asked"
    """The user was asked; the call ran only if they accepted (then its ``tool_result`` follows)."""
    UNCONFIRMED = "unconfirmed"
    """Needed a confirmation the client had no way to ask for: never passed on."""


class ToolCall(_Event):
    """A tool call as requested, before it runs. ``arguments`` is None when the trace did not record them.

    An audit log of a live gate also records the ``decision`` it took and the call's ``outcome``; analysis
    decides every call again and reports its own decision."""

    kind: Literal["tool_call"] = "tool_call"
    call_id: str | None = None
    server: str
    tool: str
    arguments: dict[str, Any] | None = None
    decision: Decision | None = None
    outcome: CallOutcome | None = None


class ToolResult(_Event):
    """The result of a call. ``result`` is None when the trace did not record it."""

    kind: Literal["tool_result"] = "tool_result"
    call_id: str
    result: Any = None
    is_error: bool = False


Event = Annotated[
    ToolsListed | UserMessage | AssistantMessage | ToolCall | ToolResult,
    Field(discriminator="kind"),
]
"""A session event: a discriminated union on ``kind``."""

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)


def build_event_schema() -> dict[str, Any]:
    """Return the JSON Schema of one native JSONL line."""
    schema = EVENT_ADAPTER.json_schema()
    # ``kind`` has a default in Python, but a line without it cannot be read: the schema says so.
    for definition in schema["$defs"].values():
        if "kind" in definition.get("properties", {}):
            definition["required"] = sorted({*definition.get("required", []), "kind"})
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "trifecta-monitor event"
    return schema
