"""Benchmark: the cost of TrifectaSpanProcessor on a traced agent, against the same tracing without it.

In one run, two ``TracerProvider``s with the same exporter, one of them with ``TrifectaSpanProcessor`` added
(with a ``LoggerProvider`` whose log records go to a no-op exporter). Each creates and ends the same
``--spans`` tool spans: sessions of ``--calls`` tool calls, each session an ``invoke_agent`` span carrying
``gen_ai.conversation.id`` with its ``execute_tool`` spans below it (``gen_ai.tool.name``,
``gen_ai.tool.call.id`` and, unless ``--no-content``, the opt-in ``gen_ai.tool.call.arguments`` and
``gen_ai.tool.call.result``). The calls cycle through a small catalog of MCP tools (GitHub, whose rule pack
applies; a mail server; a web fetcher; a file reader), so sessions get armed and sends are decided under
evidence. The session spans are created and ended inside the timed loop on both sides.

The exporter is, by default, a no-op exporter behind a ``SimpleSpanProcessor``: tracing at its cheapest, so
the processor's share is at its largest. ``--otlp`` uses what a platform team runs instead: a
``BatchSpanProcessor`` whose exporter encodes each batch to OTLP protobuf (and sends nothing); it needs
``opentelemetry-exporter-otlp-proto-common`` (the ``samples`` extra).

The two sides run in turn, ``--repeats`` times (fresh sessions each time); each pair gives a ratio (with /
without; the target is at most 1.3) and the median is printed. Between pairs the engine is let catch up
(``force_flush``, not timed), so every pair starts from the same state; the time it took is printed too, as
are the spans dropped (none expected) and the internal errors. Usage::

    python bench/bench_otel.py [--spans 100000] [--calls 20] [--repeats 3] [--no-content] [--otlp]
                               [--worker process|thread]
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk._logs import LoggerProvider, ReadableLogRecord
from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult, SimpleLogRecordProcessor
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from monitor.otel import TrifectaSpanProcessor  # noqa: E402

# (tool as the host names it, arguments, result); "{n}" is the session number.
CATALOG: list[tuple[str, dict[str, Any], Any]] = [
    ("mcp__github__list_issues", {"owner": "acme", "repo": "site-{n}", "state": "OPEN"}, [{"number": 7, "body": "x"}]),
    ("mcp__mail__search_inbox", {"query": "invoice {n}"}, {"messages": [{"from": "a@b.example", "body": "ok {n}"}]}),
    ("mcp__web__fetch", {"url": "https://docs.example.org/page/{n}"}, {"text": "Release notes for version {n}."}),
    ("mcp__files__read_file", {"path": "/srv/app/config-{n}.yaml"}, "port: 8080\nname: app-{n}\n"),
    (
        "mcp__github__get_file_contents",
        {"owner": "acme", "repo": "site-{n}", "path": "README.md"},
        {"content": "# site {n}"},
    ),
    ("mcp__mail__send_email", {"to": "team-{n}@corp.example", "subject": "notes", "body": "see you"}, {"ok": True}),
]


class NullSpanExporter(SpanExporter):
    """Counts spans and drops them."""

    def __init__(self) -> None:
        self.count = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Count the batch."""
        self.count += len(spans)
        return SpanExportResult.SUCCESS


class OtlpEncodingExporter(SpanExporter):
    """Encodes each batch to OTLP protobuf, as the OTLP exporters do before they send, and sends nothing."""

    def __init__(self) -> None:
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

        self.encode = encode_spans
        self.count = 0
        self.bytes = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Encode the batch."""
        self.bytes += len(self.encode(spans).SerializeToString())
        self.count += len(spans)
        return SpanExportResult.SUCCESS


class NullLogExporter(LogRecordExporter):
    """Counts log records and drops them."""

    def __init__(self) -> None:
        self.count = 0

    def export(self, batch: Sequence[ReadableLogRecord]) -> LogRecordExportResult:
        """Count the batch."""
        self.count += len(batch)
        return LogRecordExportResult.SUCCESS

    def shutdown(self) -> None:
        """Nothing to release."""

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Nothing buffered."""
        return True


def make_calls(sessions: int, calls: int, content: bool) -> list[list[dict[str, Any]]]:
    """The attributes of every tool span, session by session (built before timing)."""
    out = []
    for n in range(sessions):
        session = []
        for i in range(calls):
            tool, arguments, result = CATALOG[(n + i) % len(CATALOG)]
            attributes: dict[str, Any] = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": tool,
                "gen_ai.tool.call.id": f"call-{n}-{i}",
            }
            if content:
                attributes["gen_ai.tool.call.arguments"] = json.dumps(arguments).replace("{n}", str(n))
                attributes["gen_ai.tool.call.result"] = json.dumps(result).replace("{n}", str(n))
            session.append(attributes)
        out.append(session)
    return out


def run(
    provider: TracerProvider,
    sessions: list[list[dict[str, Any]]],
    prefix: str = "s",
    export: SpanProcessor | None = None,
) -> float:
    """Create and end every span (and, given ``export``, wait until it exported them); the wall time, seconds."""
    tracer = provider.get_tracer("bench")
    gc.collect()
    start = time.perf_counter()
    for n, calls in enumerate(sessions):
        root = tracer.start_span(
            "invoke_agent bench",
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": f"{prefix}{n}"},
        )
        parent = trace.set_span_in_context(root)
        for attributes in calls:
            tracer.start_span(f"execute_tool {attributes['gen_ai.tool.name']}", parent, attributes=attributes).end()
        root.end()
    if export is not None:
        export.force_flush()
    return time.perf_counter() - start


def make_provider(otlp: bool, processor: TrifectaSpanProcessor | None) -> tuple[TracerProvider, SpanProcessor]:
    """A provider with the exporter (and the processor, when given)."""
    exporter: SpanExporter = OtlpEncodingExporter() if otlp else NullSpanExporter()
    export: SpanProcessor
    if otlp:  # a queue large enough that neither side drops spans
        export = BatchSpanProcessor(exporter, max_queue_size=1_000_000, max_export_batch_size=512)
    else:
        export = SimpleSpanProcessor(exporter)
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(export)
    if processor is not None:
        provider.add_span_processor(processor)
    return provider, export


def main() -> None:
    """Run the pairs and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spans", type=int, default=100_000, help="tool spans per side (default 100000)")
    parser.add_argument("--calls", type=int, default=20, help="tool calls per session (default 20)")
    parser.add_argument("--repeats", type=int, default=3, help="pairs of runs (default 3)")
    parser.add_argument("--no-content", action="store_true", help="leave out the opt-in arguments and results")
    parser.add_argument("--otlp", action="store_true", help="BatchSpanProcessor + OTLP protobuf encoding")
    parser.add_argument("--worker", choices=["process", "thread"], default="process", help="where the engine runs")
    args = parser.parse_args()
    sessions = make_calls(max(1, args.spans // args.calls), args.calls, not args.no_content)
    total = sum(len(s) for s in sessions)

    log_exporter = NullLogExporter()
    logger_provider = LoggerProvider(shutdown_on_exit=False)
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(log_exporter))
    processor = TrifectaSpanProcessor(logger_provider=logger_provider, worker=args.worker)
    plain, plain_export = make_provider(args.otlp, None)
    monitored, monitored_export = make_provider(args.otlp, processor)

    warm = make_calls(5, args.calls, not args.no_content)
    run(plain, warm, "warm-up-")
    run(monitored, warm, "warm-up-")
    processor.force_flush(600_000)

    exporter = "BatchSpanProcessor + OTLP protobuf encoding" if args.otlp else "SimpleSpanProcessor + no-op exporter"
    content = "with" if not args.no_content else "without"
    print(f"tool spans per side: {total:,} in {len(sessions):,} sessions of {args.calls} calls, {content} arguments")
    print(f"and results; exporter on both sides: {exporter}; engine: {args.worker}")
    ratios = []
    for repeat in range(args.repeats):
        # With a batch processor, the export work is part of each side's cost: timed until it is done.
        without = run(plain, sessions, f"r{repeat}-", plain_export if args.otlp else None)
        with_processor = run(monitored, sessions, f"r{repeat}-", monitored_export if args.otlp else None)
        started = time.perf_counter()
        caught_up = processor.force_flush(600_000)
        catch_up = time.perf_counter() - started
        ratio = with_processor / without
        ratios.append(ratio)
        print(
            f"  pair {repeat + 1}: without {without:6.3f} s ({without / total * 1e6:5.1f} us/span), "
            f"with {with_processor:6.3f} s ({with_processor / total * 1e6:5.1f} us/span), ratio {ratio:.3f}; "
            f"engine caught up {catch_up:5.1f} s after the last span{'' if caught_up else ' (TIMED OUT)'}"
        )
    print(f"ratio (median of {len(ratios)}): {statistics.median(ratios):.3f}  (target <= 1.3)")
    sessions_held = len(processor.list_sessions())
    print(
        f"alerts logged: {log_exporter.count:,}; sessions held by the engine: {sessions_held:,}; "
        f"spans dropped: {processor.dropped}; internal errors: {processor.internal_errors}"
    )
    processor.shutdown()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"peak RSS: this process {rss:.0f} MiB; engine process {child:.0f} MiB (measured after it stopped)")


if __name__ == "__main__":
    main()
