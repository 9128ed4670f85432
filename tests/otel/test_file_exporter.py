"""``OtlpJsonFileExporter``: the OpenTelemetry SDK writes through it the OTLP JSON lines ``trifecta analyze`` reads."""

from __future__ import annotations

import importlib.util
import io
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExportResult

from monitor.cli import main
from monitor.otel import OtlpJsonFileExporter

ROOT = Path(__file__).resolve().parents[2]


def load_recorder() -> Any:
    """The sample recorder (samples/otel/record.py): a scripted agent and its MCP servers, traced with the SDK."""
    spec = importlib.util.spec_from_file_location("sample_record", ROOT / "samples" / "otel" / "record.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_samples_traced_through_the_exporter_analyse_as_the_native_sessions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    record = load_recorder()
    path = tmp_path / "traces.jsonl"
    exporter = OtlpJsonFileExporter(path)

    class Through:
        """The recorder's exporter slot, filled by ours: each batch the SDK exports is written as it comes."""

        def __init__(self, out: Any, *, batched: bool, hex_ids: bool) -> None:
            pass

        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            return exporter.export(spans)

        def write_batch(self) -> None:
            pass

        def shutdown(self) -> None:
            pass

        def force_flush(self, timeout_millis: int = 30_000) -> bool:
            return exporter.force_flush(timeout_millis)

    monkeypatch.setattr(record, "OtlpJsonLinesExporter", Through)
    recorder = record.GenAiRecorder(io.StringIO())
    for session in sorted((ROOT / "samples" / "sessions").glob("*.jsonl")):
        recorder.record(record.read_session(session))
    recorder.close()
    exporter.shutdown()

    lines = path.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert len(first["traceId"]) == 32 and int(first["traceId"], 16) and isinstance(first["kind"], int)
    assert record.check([path]), capsys.readouterr().out
    # The command line reads it as OTLP.
    result = CliRunner().invoke(main, ["analyze", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output  # no --fail-on: findings do not change the exit code
    assert len(json.loads(result.stdout)["sessions"]) == len(list((ROOT / "samples" / "sessions").glob("*.jsonl")))


def test_a_batch_processor_an_open_stream_and_a_closed_exporter(tmp_path: Path) -> None:
    stream = io.StringIO()
    exporter = OtlpJsonFileExporter(stream)
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(exporter))
    with provider.get_tracer("t").start_as_current_span("execute_tool read_notes") as span:
        span.set_attribute("gen_ai.operation.name", "execute_tool")
    provider.shutdown()
    assert stream.getvalue().count("\n") == 1 and not stream.closed  # the caller's stream stays open
    assert json.loads(stream.getvalue())["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["name"] == (
        "execute_tool read_notes"
    )
    # After shutdown a batch is reported lost, never raised into the SDK; nothing is written.
    with TracerProvider().get_tracer("u").start_as_current_span("late") as late:
        pass
    assert isinstance(late, ReadableSpan)
    assert exporter.export([late]) is SpanExportResult.FAILURE
    assert stream.getvalue().count("\n") == 1


def test_an_unencodable_batch_is_reported_lost_not_raised(tmp_path: Path) -> None:
    exporter = OtlpJsonFileExporter(tmp_path / "t.jsonl")
    assert exporter.export([object()]) is SpanExportResult.FAILURE  # type: ignore[list-item]
    exporter.shutdown()
    exporter.shutdown()  # twice is harmless


def test_the_console_exporters_output_is_refused_naming_it(tmp_path: Path) -> None:
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

    out = io.StringIO()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=out)))
    with provider.get_tracer("t").start_as_current_span("execute_tool read_notes"):
        pass
    provider.shutdown()
    path = tmp_path / "console.txt"
    path.write_text(out.getvalue(), encoding="utf-8")
    result = CliRunner().invoke(main, ["analyze", str(path)])
    assert result.exit_code == 2
    assert "ConsoleSpanExporter output" in result.stderr and "OtlpJsonFileExporter" in result.stderr
