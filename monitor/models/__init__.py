"""Value models shared by every part of trifecta-monitor: legs, tools, events, evidence, decisions, reports.

Everything here is a value: pydantic models with ``extra="forbid"``, frozen, or frozen dataclasses where a
value is made on the hot path. This is the lowest floor: it imports nothing else of the package.
"""

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
    EVENT_ADAPTER,
    AssistantMessage,
    CallOutcome,
    Event,
    ToolCall,
    ToolResult,
    ToolsListed,
    UserMessage,
    build_event_schema,
)
from monitor.models._evidence import (
    Destination,
    DestinationKind,
    FragmentMatch,
    LabelledDestination,
    Origin,
    Transform,
)
from monitor.models._legs import (
    ALL_LEGS,
    LEG_ORDER,
    Classification,
    Leg,
    LegSource,
    Posture,
    Provenance,
    sort_legs,
)
from monitor.models._names import CLAUDE_CODE_SERVER, split_mcp_name
from monitor.models._notices import AlertRaised, CallDecided, LevelChanged
from monitor.models._overrides import OverrideMatch, PinMismatch, SessionFacts, ToolContext
from monitor.models._records import Record, RecordError, RecordStream, SessionEnd
from monitor.models._reports import CallReport, SessionReport, build_graph, export_node_link
from monitor.models._summary import AnalysisSummary
from monitor.models._tools import (
    ANNOTATION_MEMBERS,
    HINT_MEMBERS,
    Effect,
    Finding,
    Severity,
    ToolAnnotations,
    ToolDefinition,
    hash_definition,
    parse_tool,
)

__all__ = [
    "ALERT_SEVERITY",
    "ALL_LEGS",
    "ANNOTATION_MEMBERS",
    "Action",
    "Alert",
    "AlertKind",
    "AlertRaised",
    "AnalysisSummary",
    "AssistantMessage",
    "CLAUDE_CODE_SERVER",
    "CallDecided",
    "CallOutcome",
    "CallReport",
    "Classification",
    "Decision",
    "Destination",
    "DestinationKind",
    "EVENT_ADAPTER",
    "Effect",
    "Event",
    "Evidence",
    "EvidenceKind",
    "Finding",
    "FragmentMatch",
    "HINT_MEMBERS",
    "LEG_ORDER",
    "LabelledDestination",
    "Leg",
    "LegSource",
    "Level",
    "LevelChanged",
    "Origin",
    "OverrideMatch",
    "PinMismatch",
    "Posture",
    "Provenance",
    "Reason",
    "Record",
    "RecordError",
    "RecordStream",
    "SessionEnd",
    "SessionFacts",
    "SessionReport",
    "Severity",
    "ToolAnnotations",
    "ToolCall",
    "ToolContext",
    "ToolDefinition",
    "ToolResult",
    "ToolsListed",
    "Transform",
    "UserMessage",
    "build_event_schema",
    "build_graph",
    "export_node_link",
    "hash_definition",
    "parse_tool",
    "sort_legs",
    "split_mcp_name",
]
