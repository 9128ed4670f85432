"""What a reader yielded, sorted by kind: the tests of the readers pick the records they look at with these."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from monitor.models import Record, RecordError, SessionEnd, ToolCall, ToolResult, ToolsListed, UserMessage


def errors_of(records: Iterable[Any]) -> list[RecordError]:
    """The records that are errors."""
    return [r for r in records if isinstance(r, RecordError)]


def events_of(records: Iterable[Any]) -> list[Record]:
    """The events: neither errors nor session ends."""
    return [r for r in records if not isinstance(r, RecordError | SessionEnd)]


def ended(records: Iterable[Any]) -> list[str]:
    """The ids of the sessions that ended, in order."""
    return [r.session_id for r in records if isinstance(r, SessionEnd)]


def calls_of(records: Iterable[Any]) -> list[ToolCall]:
    """The tool calls."""
    return [r for r in records if isinstance(r, ToolCall)]


def results_of(records: Iterable[Any]) -> list[ToolResult]:
    """The tool results."""
    return [r for r in records if isinstance(r, ToolResult)]


def listings_of(records: Iterable[Any]) -> list[ToolsListed]:
    """The tool listings."""
    return [r for r in records if isinstance(r, ToolsListed)]


def prompts_of(records: Iterable[Any]) -> list[str]:
    """The text of each user message."""
    return [r.text for r in records if isinstance(r, UserMessage)]
