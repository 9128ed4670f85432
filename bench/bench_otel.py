"""Benchmark: the cost of TrifectaSpanProcessor on a traced agent, against the same tracing without it.

In one run, two ``TracerProvider``s with the same exporter, one of them with ``TrifectaSpanProcessor`` added
(with a ``LoggerProvider`` whose log records go to a no-op exporter). Each creates and ends the same
``--spans`` tool spans, session by session: an ``invoke_agent`` span carrying ``gen_ai.conversation.id``,
with the session's spans below it. The session spans are created and ended inside the timed loop on both
sides.

Two workloads (``--workload``):

- ``agentdojo`` (the default): the real AgentDojo runs of ``../shared/data`` (their real tool calls,
  arguments and results, and the user's task), replayed as the GenAI semantic conventions trace them: a
  ``chat`` span with the user's message in ``gen_ai.input.messages``, then one ``execute_tool`` span per call
  (``gen_ai.tool.name`` ``mcp__agentdojo-<suite>__<tool>``, ``gen_ai.tool.call.id``, and the opt-in
  ``gen_ai.tool.call.arguments`` and ``gen_ai.tool.call.result``). The runs are replayed in turn, under
  fresh session ids, until ``--spans`` tool spans are made.
- ``synthetic``: sessions of ``--calls`` tool calls cycling through a small catalog of MCP tools (GitHub,
  whose rule pack applies; a mail server; a web fetcher; a file reader) with short arguments and results,
  and no chat span: every session gets armed, 0.43 alerts are raised per call, and the spans are as small
  as tool spans get, so the processor's share is at its largest. ``--no-content`` leaves out the arguments
  and results.

The exporter is, by default, a no-op exporter behind a ``SimpleSpanProcessor``: tracing at its cheapest, so
the processor's share is at its largest. ``--otlp`` uses what a platform team runs instead: a
``BatchSpanProcessor`` whose exporter encodes each batch to OTLP protobuf (and sends nothing); it needs
``opentelemetry-exporter-otlp-proto-common`` (the ``samples`` extra).

The two sides run in turn, ``--repeats`` times (fresh sessions each time), taking turns at going first; each
pair gives a ratio (with / without; the target is at most 1.3) and the median is printed. After the
monitored side the engine is let catch up (``force_flush``, not timed) before anything else runs, so every
run starts from the same state; the time it took is printed too, as
are the alerts, the spans dropped (none expected), the internal errors, and the CPU time this process spent
on each side, all threads, including the alerts emitted after the timed loop.

A burst like this one outruns the engine: with real content, the records of 100,000 tool spans take about
250 MB while they wait for it, more than the processor's default ``max_queue_bytes`` (128 MiB), so that
spans would be dropped (counted, and their sessions alerted). The bench gives the processor 512 MiB
(``--max-queue-mib``) so that the ratio is that of the normal path; ``--max-queue-mib 128`` shows the
default under this overload.

``--hooks-only`` measures the processor's hooks alone: the records are written as usual but discarded instead
of being handed to the engine, so no alerts come back and no engine runs beside the application. Usage::

    python bench/bench_otel.py [--workload agentdojo|synthetic] [--spans 100000] [--calls 20] [--repeats 5]
                               [--no-content] [--otlp] [--worker process|thread] [--archive PATH]
                               [--max-queue-mib 512] [--hooks-only]
"""

from __future__ import annotations

import argparse
import gc
import itertools
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
DEFAULT_ARCHIVE = ROOT / ".." / "shared" / "data" / "agentdojo" / "dev-runs.tar.gz"
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


Session = tuple[str | None, list[dict[str, Any]]]
"""A session to trace: the user's message (None: no chat span) and the attributes of each tool span."""


def make_synthetic(sessions: int, calls: int, content: bool) -> list[Session]:
    """The synthetic sessions (built before timing)."""
    out: list[Session] = []
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
        out.append((None, session))
    return out


def read_agentdojo_sessions(archive: Path) -> list[Session]:
    """The AgentDojo runs that made tool calls, as sessions to trace (in the archive's order)."""
    from monitor.ingest.agentdojo import read_agentdojo
    from monitor.models.events import ToolCall, ToolResult, UserMessage

    runs: dict[str, tuple[list[str], dict[str, dict[str, Any]]]] = {}
    for event in read_agentdojo(archive):
        if isinstance(event, UserMessage | ToolCall | ToolResult):
            users, calls = runs.setdefault(event.session_id, ([], {}))
        if isinstance(event, UserMessage):
            users.append(event.text)
        elif isinstance(event, ToolCall):
            calls[event.call_id] = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": f"mcp__{event.server}__{event.tool}",
                "gen_ai.tool.call.id": event.call_id,
                "gen_ai.tool.call.arguments": json.dumps(event.arguments),
            }
        elif isinstance(event, ToolResult) and event.call_id in calls:
            calls[event.call_id]["gen_ai.tool.call.result"] = event.result or ""
    return [(users[0] if users else None, list(calls.values())) for users, calls in runs.values() if calls]


def make_agentdojo(runs: list[Session], spans: int) -> list[Session]:
    """Replay the runs in turn until ``spans`` tool spans are made (each replay under fresh ids)."""
    out: list[Session] = []
    made = 0
    for n in itertools.count():
        user, calls = runs[n % len(runs)]
        calls = calls[: spans - made]
        out.append((user, [{**a, "gen_ai.tool.call.id": f"{a['gen_ai.tool.call.id']}-{n}"} for a in calls]))
        made += len(calls)
        if made >= spans:
            return out
    raise AssertionError("unreachable")


def run(
    provider: TracerProvider,
    sessions: list[Session],
    prefix: str = "s",
    export: SpanProcessor | None = None,
) -> float:
    """Create and end every span (and, given ``export``, wait until it exported them); the wall time, seconds."""
    tracer = provider.get_tracer("bench")
    gc.collect()
    start = time.perf_counter()
    for n, (user, calls) in enumerate(sessions):
        root = tracer.start_span(
            "invoke_agent bench",
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": f"{prefix}{n}"},
        )
        parent = trace.set_span_in_context(root)
        if user is not None:
            messages = json.dumps([{"role": "user", "parts": [{"type": "text", "content": user}]}])
            tracer.start_span(
                "chat bench", parent, attributes={"gen_ai.operation.name": "chat", "gen_ai.input.messages": messages}
            ).end()
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
    parser.add_argument("--workload", choices=["agentdojo", "synthetic"], default="agentdojo", help="what to trace")
    parser.add_argument("--archive", type=Path, default=DEFAULT_ARCHIVE, help="the AgentDojo runs (.tar.gz)")
    parser.add_argument("--spans", type=int, default=100_000, help="tool spans per side (default 100000)")
    parser.add_argument("--calls", type=int, default=20, help="synthetic: tool calls per session (default 20)")
    parser.add_argument("--repeats", type=int, default=5, help="pairs of runs (default 5)")
    parser.add_argument("--no-content", action="store_true", help="synthetic: no arguments and results")
    parser.add_argument("--otlp", action="store_true", help="BatchSpanProcessor + OTLP protobuf encoding")
    parser.add_argument("--worker", choices=["process", "thread"], default="process", help="where the engine runs")
    parser.add_argument(
        "--max-queue-mib", type=int, default=512, help="the processor's max_queue_bytes, in MiB (default 512)"
    )
    parser.add_argument(
        "--hooks-only", action="store_true", help="discard the records instead of feeding the engine (ablation)"
    )
    args = parser.parse_args()
    if args.workload == "agentdojo":
        if not args.archive.is_file():
            sys.exit(f"bench_otel: the AgentDojo runs are not at {args.archive} (see ../shared/data/README.md)")
        runs = read_agentdojo_sessions(args.archive)
        sessions = make_agentdojo(runs, args.spans)
        warm = make_agentdojo(runs[:50], 500)
        described = f"replayed from {len(runs):,} AgentDojo runs, with their arguments, results and user messages"
    else:
        sessions = make_synthetic(max(1, args.spans // args.calls), args.calls, not args.no_content)
        warm = make_synthetic(5, args.calls, not args.no_content)
        described = (
            f"synthetic, {args.calls} calls each, {'without' if args.no_content else 'with'} arguments and results"
        )
    total = sum(len(calls) for _, calls in sessions)

    log_exporter = NullLogExporter()
    logger_provider = LoggerProvider(shutdown_on_exit=False)
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(log_exporter))
    processor = TrifectaSpanProcessor(
        logger_provider=logger_provider, worker=args.worker, max_queue_bytes=args.max_queue_mib << 20
    )
    plain, plain_export = make_provider(args.otlp, None)
    monitored, monitored_export = make_provider(args.otlp, processor)

    run(plain, warm, "warm-up-")
    run(monitored, warm, "warm-up-")
    processor.force_flush(600_000)
    alerts_before = log_exporter.count
    deliver = processor._deliver
    if args.hooks_only:  # an ablation: the records are written, then dropped on the delivery thread
        processor._deliver = lambda batch: None

    exporter = "BatchSpanProcessor + OTLP protobuf encoding" if args.otlp else "SimpleSpanProcessor + no-op exporter"
    print(f"tool spans per side: {total:,} in {len(sessions):,} sessions, {described}")
    engine = "none (--hooks-only: records discarded)" if args.hooks_only else args.worker
    print(f"exporter on both sides: {exporter}; engine: {engine}; max_queue_bytes: {args.max_queue_mib} MiB")
    ratios = []
    cpu_ratios = []
    for repeat in range(args.repeats):
        # The sides take turns at going first, so that neither always runs on the other's leftovers; the engine
        # catches up after the monitored side (not timed) before the other side runs.
        order = ("without", "with") if repeat % 2 == 0 else ("with", "without")
        for side in order:
            cpu = time.process_time()
            if side == "without":
                without = run(plain, sessions, f"r{repeat}-", plain_export if args.otlp else None)
                cpu_without = time.process_time() - cpu
            else:
                with_processor = run(monitored, sessions, f"r{repeat}-", monitored_export if args.otlp else None)
                started = time.perf_counter()
                caught_up = args.hooks_only or processor.force_flush(600_000)
                catch_up = time.perf_counter() - started
                cpu_with = time.process_time() - cpu  # all of this process's threads, until every alert was emitted
        ratio = with_processor / without
        ratios.append(ratio)
        cpu_ratios.append(cpu_with / cpu_without)
        print(
            f"  pair {repeat + 1} ({order[0]} first): without {without:6.3f} s ({without / total * 1e6:5.1f} us/span), "
            f"with {with_processor:6.3f} s ({with_processor / total * 1e6:5.1f} us/span), ratio {ratio:.3f}; "
            f"engine caught up {catch_up:5.1f} s after the last span{'' if caught_up else ' (TIMED OUT)'}; "
            f"CPU of this process {cpu_without:5.2f} s -> {cpu_with:5.2f} s"
        )
    print(f"ratio (median of {len(ratios)}): {statistics.median(ratios):.3f}  (target <= 1.3)")
    print(
        f"CPU time of this process (all threads, every alert emitted), with / without, median: "
        f"{statistics.median(cpu_ratios):.3f}"
    )
    processor._deliver = deliver
    alerts = log_exporter.count - alerts_before
    sessions_held = len(processor.list_sessions())
    print(
        f"alerts logged: {alerts:,} ({alerts / (total * args.repeats):.3f} per tool call); "
        f"sessions held by the engine: {sessions_held:,}; spans dropped: {processor.dropped}; "
        f"internal errors: {processor.internal_errors}"
    )
    processor.shutdown()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"peak RSS: this process {rss:.0f} MiB; engine process {child:.0f} MiB (measured after it stopped)")


if __name__ == "__main__":
    main()
