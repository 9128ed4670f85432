"""An OTLP JSON lines file exporter for the OpenTelemetry SDK: the file ``trifecta analyze`` reads.

The SDK ships no file exporter, and its console exporter prints spans for reading, not for reading back. This one
encodes each batch the SDK hands it with ``opentelemetry-exporter-otlp-proto-common`` (the encoder of the SDK's
own OTLP exporters) and writes it as one ``ExportTraceServiceRequest`` in OTLP/JSON (hex ids, enums as numbers,
64-bit integers as strings), one line per batch, as the Collector's file exporter does.
"""

from __future__ import annotations

import base64
import json
import os
import threading
from collections.abc import Sequence
from typing import IO, Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

_EXTRA = "pip install 'trifecta-monitor[otel]'"


class OtlpJsonFileExporter(SpanExporter):
    """Write every batch of spans the SDK exports as one OTLP JSON line of ``path`` (appended to), or of an open
    text stream. Use it as any span exporter, e.g. ``provider.add_span_processor(BatchSpanProcessor(
    OtlpJsonFileExporter("traces.jsonl")))``; then ``trifecta analyze traces.jsonl``.

    Needs the ``otel`` extra (``opentelemetry-exporter-otlp-proto-common``): without it the constructor raises
    ImportError saying so. Like every exporter of the SDK it never raises from :meth:`export`: a batch it cannot
    write is reported as ``FAILURE``."""

    def __init__(self, path: str | os.PathLike[str] | IO[str]) -> None:
        """Open ``path`` for appending (the exporter closes it at :meth:`shutdown`), or write to a stream the
        caller keeps."""
        try:
            from google.protobuf import json_format
            from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
        except ImportError as error:
            raise ImportError(f"OtlpJsonFileExporter needs the otel extra: {_EXTRA}") from error
        self._encode = encode_spans
        self._to_dict = json_format.MessageToDict
        if isinstance(path, str | os.PathLike):
            self._owned = True
            self._out: IO[str] = open(path, "a", encoding="utf-8")  # noqa: SIM115  # closed at shutdown
        else:
            self._owned = False
            self._out = path
        self._lock = threading.Lock()
        self._closed = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Write ``spans`` as one line; ``FAILURE`` when they cannot be encoded or written (or after shutdown)."""
        if not spans:
            return SpanExportResult.SUCCESS
        try:
            document = self._to_dict(self._encode(spans), use_integers_for_enums=True)
            _hex_ids(document)
            line = json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n"
            with self._lock:
                if self._closed:
                    return SpanExportResult.FAILURE
                self._out.write(line)
                self._out.flush()
        except Exception:  # an exporter never raises into the SDK: the batch is reported lost
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Every line is flushed as it is written: nothing waits."""
        return True

    def shutdown(self) -> None:
        """Stop writing; close the file this exporter opened."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._owned:
                self._out.close()


def _hex_ids(document: dict[str, Any]) -> None:
    """Rewrite the base64 ids of protobuf's JSON mapping as the hex that OTLP/JSON requires."""
    for resource_spans in document.get("resourceSpans", []):
        for scope_spans in resource_spans.get("scopeSpans", []):
            for span in scope_spans.get("spans", []):
                items = [span, *span.get("links", [])]
                for item in items:
                    for key in ("traceId", "spanId", "parentSpanId"):
                        if item.get(key):
                            item[key] = base64.b64decode(item[key]).hex()
