import pytest
from pydantic import ValidationError

from monitor.models._events import EVENT_ADAPTER, ToolCall, ToolResult, build_event_schema


def test_events_are_a_discriminated_union_on_kind() -> None:
    event = EVENT_ADAPTER.validate_python(
        {"kind": "tool_call", "session_id": "s", "server": "gh", "tool": "list_issues", "arguments": {}}
    )
    assert isinstance(event, ToolCall)
    result = EVENT_ADAPTER.validate_python({"kind": "tool_result", "session_id": "s", "call_id": "c"})
    assert isinstance(result, ToolResult) and result.result is None


def test_events_reject_unknown_fields_and_kinds() -> None:
    with pytest.raises(ValidationError):
        EVENT_ADAPTER.validate_python({"kind": "user_message", "session_id": "s", "text": "hi", "extra": 1})
    with pytest.raises(ValidationError):
        EVENT_ADAPTER.validate_python({"kind": "shell", "session_id": "s"})
    with pytest.raises(ValidationError):
        EVENT_ADAPTER.validate_python({"kind": "user_message", "session_id": "", "text": "hi"})


def test_schema_names_every_kind() -> None:
    schema = build_event_schema()
    kinds = set(schema["discriminator"]["mapping"])
    assert kinds == {"tools_listed", "user_message", "assistant_message", "tool_call", "tool_result"}
