"""Benchmark: the cost of TrifectaSpanProcessor on a traced agent, against the same tracing without it.

In one run, two ``TracerProvider``s with the same exporter (a no-op exporter behind a
``SimpleSpanProcessor``, so that export costs nothing and both sides pay the same), one of them with
``TrifectaSpanProcessor`` added (with a ``LoggerProvider`` whose log records go to a no-op exporter too). Each
creates and ends the same ``--spans`` tool spans: sessions of ``--calls`` tool calls, each session an
``invoke_agent`` span carrying ``gen_ai.conversation.id`` with its ``execute_tool`` spans below it
(``gen_ai.tool.name``, ``gen_ai.tool.call.id`` and, unless ``--no-content``, the opt-in
``gen_ai.tool.call.arguments`` and ``gen_ai.tool.call.result``). The calls cycle through a small catalog of
MCP tools (GitHub, whose rule pack applies; a mail server; a web fetcher; a file reader), so sessions get
armed and some sends are decided under evidence. The session spans are created and ended inside the timed
loop on both sides (``--calls`` = 20 adds 5% spans).

Prints both times, the ratio (with / without; the target is at most 1.3). ``--breakdown`` adds a third
side, the processor with the engine's ``before_call``/``after_call`` replaced by constant answers: what the
processor costs besides the engine (span links, stamping, decoding and merging the spans, locking).
``--profile`` prints the functions that dominate the processor's side. Usage::

    python bench/bench_otel.py [--spans 100000] [--calls 20] [--no-content] [--breakdown] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import pstats
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk._logs import LoggerProvider, ReadableLogRecord
from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult, SimpleLogRecordProcessor
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from monitor.models.decisions import Action, Decision, Level  # noqa: E402
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


def run(provider: TracerProvider, sessions: list[list[dict[str, Any]]], prefix: str = "s") -> float:
    """Create and end every span; returns the wall time in seconds."""
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
    return time.perf_counter() - start


def main() -> None:
    """Run both sides once each and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spans", type=int, default=100_000, help="tool spans per side (default 100000)")
    parser.add_argument("--calls", type=int, default=20, help="tool calls per session (default 20)")
    parser.add_argument("--no-content", action="store_true", help="leave out the opt-in arguments and results")
    parser.add_argument("--breakdown", action="store_true", help="also time the processor without the engine")
    parser.add_argument("--profile", action="store_true", help="profile the processor's side")
    args = parser.parse_args()
    sessions = make_calls(max(1, args.spans // args.calls), args.calls, not args.no_content)
    total = sum(len(s) for s in sessions)

    plain_exporter = NullSpanExporter()
    plain = TracerProvider(shutdown_on_exit=False)
    plain.add_span_processor(SimpleSpanProcessor(plain_exporter))

    log_exporter = NullLogExporter()
    logger_provider = LoggerProvider(shutdown_on_exit=False)
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(log_exporter))
    processor = TrifectaSpanProcessor(logger_provider=logger_provider)
    monitored_exporter = NullSpanExporter()
    monitored = TracerProvider(shutdown_on_exit=False)
    monitored.add_span_processor(SimpleSpanProcessor(monitored_exporter))
    monitored.add_span_processor(processor)

    warm = make_calls(5, args.calls, not args.no_content)
    run(plain, warm, "warm-up-")
    run(monitored, warm, "warm-up-")

    without = run(plain, sessions)
    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
    with_processor = run(monitored, sessions)
    if args.profile:
        profiler.disable()

    report = processor.monitor  # sessions are still held: count what was decided
    print(f"tool spans per side: {total:,} in {len(sessions):,} sessions of {args.calls} calls "
          f"({'with' if not args.no_content else 'without'} arguments and results)")  # fmt: skip
    print(f"without the processor: {without:8.3f} s  ({without / total * 1e6:6.1f} us per tool span)")
    print(f"with the processor:    {with_processor:8.3f} s  ({with_processor / total * 1e6:6.1f} us per tool span)")
    print(f"ratio: {with_processor / without:.2f}  (target <= 1.3)")
    print(
        f"alerts logged: {log_exporter.count:,}; sessions held: {len(report.sessions()):,}; "
        f"internal errors: {processor.internal_errors}"
    )
    if args.breakdown:
        stubbed = TrifectaSpanProcessor()
        answer = Decision(
            call_id="stub",
            action=Action.ALLOW,
            level=Level.CLEAN,
            legs_before=frozenset(),
            legs_call=frozenset(),
            reasons=(),
        )
        stubbed.monitor.before_call = lambda *_args, **_kwargs: answer  # type: ignore[method-assign]
        stubbed.monitor.after_call = lambda *_args, **_kwargs: None  # type: ignore[method-assign]
        bare = TracerProvider(shutdown_on_exit=False)
        bare.add_span_processor(SimpleSpanProcessor(NullSpanExporter()))
        bare.add_span_processor(stubbed)
        run(bare, warm, "warm-up-")
        no_engine = run(bare, sessions)
        print(
            f"processor, engine stubbed: {no_engine:8.3f} s  ({no_engine / total * 1e6:6.1f} us per tool span), "
            f"ratio {no_engine / without:.2f}; so the engine (and the alerts it raises) takes "
            f"{(with_processor - no_engine) / total * 1e6:.1f} us per call, "
            f"{(with_processor - no_engine) / (with_processor - without):.0%} of the processor's cost"
        )
    if args.profile:
        stats = pstats.Stats(profiler)
        stats.sort_stats("cumulative").print_stats(30)


if __name__ == "__main__":
    main()
