"""What a session monitor pushes to its sink as it happens: decisions, alerts, changes of level and its own
failures."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from monitor.models._decisions import Alert, Decision, Level
from monitor.models._legs import Leg


class CallDecided(BaseModel):
    """A requested call was decided (pushed on every ``before_call``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    session_id: str
    server: str
    tool: str
    decision: Decision


class AlertRaised(BaseModel):
    """An alert was raised in a session. ``server``, ``tool`` and ``decision`` describe the call the alert is
    about, when it is about one."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    session_id: str
    alert: Alert
    server: str | None = None
    tool: str | None = None
    decision: Decision | None = None


class LevelChanged(BaseModel):
    """A session's level or the legs in its context changed (both only ever grow)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    session_id: str
    level: Level
    legs: tuple[Leg, ...]


class MonitorFailed(BaseModel):
    """The monitor failed inside an operation on a session (``operation``: ``before_call``, ``after_call``, …):
    ``error`` is the exception in one line. A call being decided was answered ``confirm`` (reason
    ``monitor-error``); ``call_id`` names it when the failure was about one call."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    session_id: str
    operation: str
    error: str
    call_id: str | None = None
