"""Value models shared by every part of trifecta-monitor."""

from monitor.models._decisions import (
    ALERT_SEVERITY,
    Action,
    Alert,
    AlertKind,
    Decision,
    Evidence,
    EvidenceKind,
    Level,
    Reason,
)
from monitor.models._events import (
    AssistantMessage,
    Event,
    ToolCall,
    ToolResult,
    ToolsListed,
    UserMessage,
)
from monitor.models._legs import ALL_LEGS, Classification, Leg, LegSource, Posture, Provenance, sort_legs
from monitor.models._tools import Finding, Severity, ToolAnnotations, ToolDefinition, parse_tool

__all__ = [
    "ALERT_SEVERITY",
    "ALL_LEGS",
    "Action",
    "Alert",
    "AlertKind",
    "AssistantMessage",
    "Classification",
    "Decision",
    "Event",
    "Evidence",
    "EvidenceKind",
    "Finding",
    "Leg",
    "LegSource",
    "Level",
    "Posture",
    "Provenance",
    "Reason",
    "Severity",
    "ToolAnnotations",
    "ToolCall",
    "ToolDefinition",
    "ToolResult",
    "ToolsListed",
    "UserMessage",
    "parse_tool",
    "sort_legs",
]
