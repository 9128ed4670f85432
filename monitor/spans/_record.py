"""The neutral span: a span reduced to what the monitor reads, whatever carried it.

A :class:`SpanRecord` is made by the OTLP JSON decoder (``monitor.ingest``) or from an OpenTelemetry SDK
``ReadableSpan`` (:func:`convert_readable_span`, in a span processor's ``on_end``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan


class SpanKind(IntEnum):
    """Span kind, numbered as in the OTLP protobuf."""

    UNSPECIFIED = 0
    INTERNAL = 1
    SERVER = 2
    CLIENT = 3
    PRODUCER = 4
    CONSUMER = 5


class StatusCode(IntEnum):
    """Span status code, numbered as in the OTLP protobuf."""

    UNSET = 0
    OK = 1
    ERROR = 2


@dataclass(frozen=True, slots=True)
class SpanRecord:
    """One finished span, reduced to what the monitor reads.

    Ids are lowercase hex (32 digits for the trace, 16 for spans); ``parent_span_id`` is None for a root.
    Attribute values are plain JSON-like values (str, int, float, bool, lists, dicts). The resource
    attributes dict is usually shared by every span of one resource: treat it as read-only.
    """

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str = ""
    kind: SpanKind = SpanKind.UNSPECIFIED
    start_time_ns: int | None = None
    end_time_ns: int | None = None
    attributes: dict[str, Any] = field(default_factory=dict)
    resource_attributes: dict[str, Any] = field(default_factory=dict)
    status_code: StatusCode = StatusCode.UNSET
    status_message: str = ""


def convert_readable_span(span: ReadableSpan) -> SpanRecord:
    """Return the :class:`SpanRecord` of an OpenTelemetry SDK span (e.g. in a span processor's ``on_end``).

    Raises ValueError when the span has no context.
    """
    context = span.get_span_context()
    if context is None:
        raise ValueError("span has no context")
    parent = span.parent
    status = span.status
    return SpanRecord(
        trace_id=format(context.trace_id, "032x"),
        span_id=format(context.span_id, "016x"),
        parent_span_id=format(parent.span_id, "016x") if parent is not None and parent.span_id else None,
        name=span.name,
        # The SDK numbers kinds from INTERNAL = 0; the protobuf from UNSPECIFIED = 0.
        kind=SpanKind(span.kind.value + 1),
        start_time_ns=span.start_time,
        end_time_ns=span.end_time,
        attributes=_plain_attributes(span.attributes),
        resource_attributes=_plain_attributes(span.resource.attributes),
        status_code=StatusCode(status.status_code.value),
        status_message=status.description or "",
    )


def _plain_attributes(attributes: Mapping[str, Any] | None) -> dict[str, Any]:
    if not attributes:
        return {}
    return {k: list(v) if isinstance(v, tuple) else v for k, v in attributes.items()}
