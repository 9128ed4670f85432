"""OTLP JSON traces: ``ExportTraceServiceRequest`` documents, alone or one per line (Collector file exporter).

Decoding is tolerant of what writers actually produce: keys in camelCase (``traceId``, the OTLP/JSON
mapping) or snake_case (``trace_id``, protobuf field names); ``scopeSpans`` or the older
``instrumentationLibrarySpans``; trace and span ids in hex (either case, as OTLP/JSON specifies) or base64
(as protobuf's generic JSON mapping writes bytes); span kind and status code as numbers or names
(``2``, ``"SPAN_KIND_SERVER"``, ``"SERVER"``); 64-bit integers as strings or numbers; attribute values of
every ``AnyValue`` kind, ``kvlistValue``, ``arrayValue`` and ``bytesValue`` included (bytes become text when
they are UTF-8, else stay base64).

**Layout.** A file whose first non-blank line is a JSON value is read as JSON lines: one document per line,
each line decoded and dropped before the next is read. A file whose first line opens a document without
closing it (``{`` alone, as pretty-printers write) is one document and is read whole: use JSON lines for
large exports.

**Streaming and its bounds.** Spans go to a :class:`~monitor.spans.SpanAssembler`, which keeps a
small summary per span of each open trace and turns a trace into events once its root span has been read,
or once no span of it came for a while (counted in spans), or when too many spans are buffered; sessions
end once idle. So children may come before their parents, even in earlier lines, and memory follows the
traces and sessions still open, never the file: at most ``max_buffered_spans`` span summaries (default
100,000) holding at most about ``max_buffered_bytes`` of content (default 32 MiB of argument, result and
message text), plus the links of the last ``remembered_spans`` spans (for late children, default 100,000),
plus one line.

Errors name ``file:line``; a bad span names its place in the document too, and the rest is kept. A time
that is not a ``fixed64`` (out of range, not a whole number) is an error, and its span is still read,
without that time; an ``intValue`` beyond 64 bits stays the text it was.
"""

from __future__ import annotations

import base64
import binascii
import gc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, TypeVar, Unpack

import orjson

from monitor.ingest._files import iter_lines, stream_file
from monitor.jsonrecords import decode_json_record
from monitor.models import RecordError, RecordStream
from monitor.spans import (
    AssemblerBounds,
    SpanAssembler,
    SpanKind,
    SpanRecord,
    StatusCode,
)

__all__ = ["decode_export", "iter_documents", "read_otlp", "read_otlp_stream", "sniff"]

_SNIFF_KEYS = (b'"resourceSpans"', b'"resource_spans"')


def sniff(head: bytes) -> bool:
    """True when the first bytes of a file look like OTLP JSON traces (a document, or JSON lines of them)."""
    start = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    return start[:1] in (b"{", b"[") and any(key in head for key in _SNIFF_KEYS)


def read_otlp(path: Path, **bounds: Unpack[AssemblerBounds]) -> RecordStream:
    """Stream the session events of an OTLP JSON traces file; ``bounds`` go to the :class:`SpanAssembler`.

    See the module documentation for the bounds. A file that cannot be opened is one :class:`RecordError`.
    """
    yield from stream_file(path, read_otlp_stream, **bounds)


def read_otlp_stream(fh: IO[bytes], name: str, **bounds: Unpack[AssemblerBounds]) -> RecordStream:
    """Stream the session events of OTLP JSON read from ``fh``; ``name`` names it in errors, ``bounds`` go to
    the :class:`SpanAssembler`."""
    assembler = SpanAssembler(**bounds)
    documents = _documents(fh, name)
    errors: list[RecordError] = []
    while True:
        # A decoded document is a tree of new containers, freed by reference counting once its spans are read:
        # the cyclic collector is paused meanwhile, as its passes would only walk the tree (and every span kept).
        with _collector_paused():
            item = next(documents, None)
            if item is None:
                break
            if isinstance(item, RecordError):
                errors.append(item)
            else:
                # A span of a document on one line is named by the line; of a whole (pretty-printed) document,
                # by its place in it: ``file#resourceSpans/0/scopeSpans/0/spans/2``.
                source, document, whole = item
                item.clear()
                for span in _decode_spans(document, source):
                    if isinstance(span, RecordError):
                        errors.append(span)
                    else:
                        assembler.add(span[0], f"{name}#{span[1]}" if whole else source)
                del document
            del item
        if errors:
            yield from errors
            errors.clear()
        yield from assembler.drain()
    yield from assembler.finish(name)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector (when it runs) for the time of a ``with`` block."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


_BOM = b"\xef\xbb\xbf"


def iter_documents(fh: IO[bytes], name: str) -> Iterator[tuple[str, Any] | RecordError]:
    """Yield ``(source, parsed JSON)`` per document, or a :class:`RecordError` for a line that is not JSON."""
    for item in _documents(fh, name):
        yield item if isinstance(item, RecordError) else (item[0], item[1])


class _Document(list[Any]):
    """``[source, parsed JSON, True when it was read whole (pretty-printed)]``: a list the reader empties once
    it read the spans, so that the document is freed then (no generator's frame keeps it)."""


def _documents(fh: IO[bytes], name: str) -> Iterator[_Document | RecordError]:
    """As :func:`iter_documents`, each document with True when it was read whole (pretty-printed)."""
    empty = True
    for lineno, line in iter_lines(fh):
        if lineno == 1 and line.startswith(_BOM):
            if isinstance(line, bytearray):
                del line[: len(_BOM)]
            else:
                line = line[len(_BOM) :]
        if isinstance(line, bytes):
            line = line.strip()
            if not line:
                continue
        try:
            yield from _document(f"{name}:{lineno}", line, False)
        except orjson.JSONDecodeError as exc:
            # A first document that does not end on its line is pretty-printed: read it whole.
            if empty and isinstance(line, bytes) and line[-1:] in (b"{", b"["):
                yield from _whole_document(line + b"\n" + fh.read(), name, lineno)
                return
            yield RecordError(source=f"{name}:{lineno}", message=f"not JSON: {exc.msg}")
        empty = False
    if empty:
        yield RecordError(source=name, message="empty file: no OTLP document in it")


def _document(source: str, text: bytes | bytearray, whole: bool) -> Iterator[_Document | RecordError]:
    """One decoded document, after the errors of its repeated keys and too deep nesting."""
    decoded = decode_json_record(text)
    for problem in decoded[1]:
        yield RecordError(source=source, message=f"{problem.where or 'document'}: {problem.message}")
    document = _Document((source, decoded[0], whole))
    del decoded  # the document is held by what is yielded only: emptied by the reader, it is freed at once
    yield document


def _whole_document(data: bytes, name: str, first_line: int) -> Iterator[_Document | RecordError]:
    try:
        yield from _document(f"{name}:{first_line}", data, True)
    except orjson.JSONDecodeError as exc:
        yield RecordError(source=f"{name}:{first_line + exc.lineno - 1}", message=f"not JSON: {exc.msg}")


class _MalformedError(ValueError):
    pass


def decode_export(document: Any, source: str) -> Iterator[SpanRecord | RecordError]:
    """Decode one ``ExportTraceServiceRequest`` (or a list of them) into spans; bad parts become errors."""
    for item in _decode_spans(document, source):
        yield item if isinstance(item, RecordError) else item[0]


def _decode_spans(document: Any, source: str) -> Iterator[tuple[SpanRecord, str] | RecordError]:
    """The spans of a document, each with its place in it (``resourceSpans/0/scopeSpans/0/spans/2``)."""
    if isinstance(document, list):
        for i, part in enumerate(document):
            yield from _decode_request(part, source, f"[{i}]/")
    else:
        yield from _decode_request(document, source, "")


def _decode_request(document: Any, source: str, where: str) -> Iterator[tuple[SpanRecord, str] | RecordError]:
    if not isinstance(document, dict):
        yield RecordError(source=source, message=f"{where or 'document'}: not a JSON object; skipped")
        return
    resource_spans = _pick(document, "resourceSpans", "resource_spans")
    if not isinstance(resource_spans, list):
        problem = "no resourceSpans" if resource_spans is None else "resourceSpans is not a list"
        yield RecordError(source=source, message=f"{where}not an OTLP trace export: {problem}; skipped")
        return
    for ri, block in enumerate(resource_spans):
        path = f"{where}resourceSpans/{ri}"
        if not isinstance(block, dict):
            yield RecordError(source=source, message=f"{path}: not an object; skipped")
            continue
        resource = block.get("resource")
        try:
            resource_attributes = _decode_attributes(resource.get("attributes")) if isinstance(resource, dict) else {}
        except _MalformedError as exc:
            yield RecordError(source=source, message=f"{path}/resource: {exc}; its spans are skipped")
            continue
        scopes = _pick(block, "scopeSpans", "scope_spans")
        scope_key = "scopeSpans"
        if scopes is None:
            scopes = _pick(block, "instrumentationLibrarySpans", "instrumentation_library_spans")
            scope_key = "instrumentationLibrarySpans"
        if scopes is None:
            continue
        if not isinstance(scopes, list):
            yield RecordError(source=source, message=f"{path}/{scope_key}: not a list; skipped")
            continue
        for si, scope in enumerate(scopes):
            spans = scope.get("spans") if isinstance(scope, dict) else None
            if spans is None and isinstance(scope, dict):
                continue
            if not isinstance(spans, list):
                yield RecordError(source=source, message=f"{path}/{scope_key}/{si}: no list of spans; skipped")
                continue
            for pi, span in enumerate(spans):
                place = f"{path}/{scope_key}/{si}/spans/{pi}"
                problems: list[str] = []
                try:
                    record = _decode_span(span, resource_attributes, problems)
                except _MalformedError as exc:
                    yield RecordError(source=source, message=f"{place}: {exc}; span skipped")
                    continue
                for problem in problems:
                    yield RecordError(source=source, message=f"{place}: {problem}")
                yield record, place


def _pick(obj: dict[str, Any], camel: str, snake: str) -> Any:
    value = obj.get(camel)
    return obj.get(snake) if value is None else value


def _decode_span(span: Any, resource_attributes: dict[str, Any], problems: list[str]) -> SpanRecord:
    """One span; what is wrong but does not stop it being read (a time out of range) goes to ``problems``."""
    if not isinstance(span, dict):
        raise _MalformedError("not an object")
    trace_id = _decode_id(_pick(span, "traceId", "trace_id"), 16, "traceId")
    span_id = _decode_id(_pick(span, "spanId", "span_id"), 8, "spanId")
    parent = _pick(span, "parentSpanId", "parent_span_id")
    parent_id = _decode_id(parent, 8, "parentSpanId") if parent else None
    name = span.get("name")
    status = span.get("status")
    code = StatusCode.UNSET
    message = ""
    if isinstance(status, dict):
        code = _decode_status_code(status.get("code"))
        status_message = status.get("message")
        message = status_message if isinstance(status_message, str) else ""
    return SpanRecord(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=parent_id,
        name=name if isinstance(name, str) else "",
        kind=_decode_kind(span.get("kind")),
        start_time_ns=_decode_time(
            _pick(span, "startTimeUnixNano", "start_time_unix_nano"), "startTimeUnixNano", problems
        ),
        end_time_ns=_decode_time(_pick(span, "endTimeUnixNano", "end_time_unix_nano"), "endTimeUnixNano", problems),
        attributes=_decode_attributes(span.get("attributes")),
        resource_attributes=resource_attributes,
        status_code=code,
        status_message=message,
    )


def _decode_id(value: Any, size: int, field: str) -> str:
    """An id as lowercase hex, from hex (either case) or base64 (standard or URL-safe, padded or not)."""
    if not isinstance(value, str) or not value:
        raise _MalformedError(f"{field} is missing" if value in (None, "") else f"{field} is not a string")
    raw: bytes | None = None
    if len(value) == 2 * size:
        try:
            raw = bytes.fromhex(value)
        except ValueError:
            raw = None
        if raw is not None and len(raw) != size:
            raw = None
    if raw is None:
        try:
            padded = value + "=" * (-len(value) % 4)
            altchars = b"-_" if ("-" in value or "_" in value) else None
            raw = base64.b64decode(padded, altchars=altchars, validate=True)
        except (binascii.Error, ValueError):
            raise _MalformedError(f"{field} {value[:40]!r} is neither hex nor base64") from None
        if len(raw) != size:
            raise _MalformedError(f"{field} {value[:40]!r} is {len(raw)} bytes, not {size}")
    if not any(raw):
        raise _MalformedError(f"{field} is all zeros")
    return raw.hex()


_MAX_FIXED64 = 2**64 - 1
_MAX_DIGITS = 40


def _decode_time(value: Any, field: str, problems: list[str]) -> int | None:
    """A ``fixed64`` time in nanoseconds, from a number or a string; a value that is not one, or out of its
    range, is a problem and the span is read without that time (its call is never dropped for it)."""
    if value is None or value == "":
        return None
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and len(value) <= _MAX_DIGITS:
        try:
            number = int(value)
        except ValueError:
            try:
                as_float = float(value)
            except ValueError:
                as_float = None
            if as_float is not None and as_float.is_integer():
                number = int(as_float)
    if number is None:
        problems.append(f"{field} {str(value)[:40]!r} is not an integer; read without it")
        return None
    if not 0 <= number <= _MAX_FIXED64:
        problems.append(f"{field} {str(value)[:40]} is out of range (0 to 2**64-1); read without it")
        return None
    return number


_E = TypeVar("_E", SpanKind, StatusCode)


def _decode_kind(value: Any) -> SpanKind:
    return _decode_enum(value, SpanKind, "SPAN_KIND_")


def _decode_status_code(value: Any) -> StatusCode:
    return _decode_enum(value, StatusCode, "STATUS_CODE_")


def _decode_enum(value: Any, enum: type[_E], prefix: str) -> _E:
    """A protobuf enum given as a number, a digit string or a name (``prefix`` optional); else its zero value."""
    if isinstance(value, str):
        if value.isascii() and value.isdigit() and len(value) <= _MAX_DIGITS:
            value = int(value)
        else:
            value = enum.__members__.get(value.upper().removeprefix(prefix), 0)
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            return enum(value)
        except ValueError:
            pass
    return enum(0)


def _decode_attributes(raw: Any) -> dict[str, Any]:
    """``[{"key": k, "value": AnyValue}]`` as a plain dict (a plain ``{k: v}`` object is accepted too)."""
    if raw is None:
        return {}
    if isinstance(raw, list):
        out: dict[str, Any] = {}
        for kv in raw:
            if isinstance(kv, dict):
                key = kv.get("key")
                if isinstance(key, str):
                    value = kv.get("value")
                    # The common case first: a string value.
                    text = value.get("stringValue") if isinstance(value, dict) else None
                    out[key] = text if text is not None else _decode_value(value)
        return out
    if isinstance(raw, dict):
        return {k: _decode_value(v) if _is_any_value(v) else v for k, v in raw.items()}
    raise _MalformedError("attributes is not a list")


_ANY_VALUE_KEYS = frozenset(
    {
        "stringValue",
        "string_value",
        "boolValue",
        "bool_value",
        "intValue",
        "int_value",
        "doubleValue",
        "double_value",
        "arrayValue",
        "array_value",
        "kvlistValue",
        "kvlist_value",
        "bytesValue",
        "bytes_value",
    }
)


def _is_any_value(value: Any) -> bool:
    return isinstance(value, dict) and len(value) == 1 and next(iter(value)) in _ANY_VALUE_KEYS


def _decode_value(value: Any) -> Any:
    """An ``AnyValue`` as a plain value; an empty or unknown one as None."""
    if not isinstance(value, dict):
        return value
    for key, item in value.items():
        if key in ("stringValue", "string_value"):
            return item
        if key in ("intValue", "int_value"):
            number = _convert_or_keep(item, int)
            return number if not isinstance(number, int) or -(2**63) <= number < 2**63 else str(item)
        if key in ("boolValue", "bool_value"):
            return item if isinstance(item, bool) else str(item).lower() == "true"
        if key in ("doubleValue", "double_value"):
            return _convert_or_keep(item, float)
        if key in ("arrayValue", "array_value"):
            values = item.get("values") if isinstance(item, dict) else None
            return [_decode_value(v) for v in values] if isinstance(values, list) else []
        if key in ("kvlistValue", "kvlist_value"):
            values = item.get("values") if isinstance(item, dict) else None
            return _decode_attributes(values) if isinstance(values, list) else {}
        if key in ("bytesValue", "bytes_value"):
            return _decode_bytes(item)
    return None


def _convert_or_keep(value: Any, kind: type[int] | type[float]) -> Any:
    """``value`` as ``kind`` (int64 values often come as strings); what does not convert, as it is."""
    if isinstance(value, kind):
        return value
    if isinstance(value, str) and len(value) > _MAX_DIGITS:
        return value
    try:
        return kind(value)
    except (TypeError, ValueError, OverflowError):
        return value


def _decode_bytes(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        raw = base64.b64decode(value + "=" * (-len(value) % 4))
        return raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return value
