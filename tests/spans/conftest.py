"""Span factories for the tests of ``monitor.spans``."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest

from monitor.spans import SpanKind, SpanRecord, StatusCode

TRACE = "0af7651916cd43dd8448eb211c80319c"
"""The trace id spans get unless told otherwise."""

SpanFactory = Callable[..., SpanRecord]

_ids = itertools.count(1)


def _make_span(
    span_id: str | None = None,
    parent: str | None = None,
    *,
    trace_id: str = TRACE,
    name: str = "span",
    start: int | None = 1_000,
    end: int | None = 2_000,
    status: StatusCode = StatusCode.UNSET,
    resource: dict[str, Any] | None = None,
    **attributes: Any,
) -> SpanRecord:
    return SpanRecord(
        trace_id=trace_id,
        span_id=span_id or f"{next(_ids):016x}",
        parent_span_id=parent,
        name=name,
        kind=SpanKind.INTERNAL,
        start_time_ns=start,
        end_time_ns=end,
        attributes={k.replace("__", "."): v for k, v in attributes.items()},
        resource_attributes=resource or {},
        status_code=status,
    )


def _make_tool_span(span_id: str, parent: str | None, name: str = "lookup", **extra: Any) -> SpanRecord:
    return _make_span(span_id, parent, gen_ai__operation__name="execute_tool", gen_ai__tool__name=name, **extra)


@pytest.fixture
def span() -> SpanFactory:
    """``span(span_id=None, parent=None, *, trace_id=TRACE, name=..., start=..., end=..., status=..., resource=...,
    **attributes)``: a span; keyword attributes use ``__`` for ``.`` (``gen_ai__tool__name``)."""
    return _make_span


@pytest.fixture
def tool_span() -> SpanFactory:
    """``tool_span(span_id, parent, name="lookup", **extra)``: a GenAI ``execute_tool`` span of tool ``name``."""
    return _make_tool_span
