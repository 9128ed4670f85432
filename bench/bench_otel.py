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

Each pass (``--repeats`` of them, fresh sessions each time) runs both sides over the same sessions, taking
turns every ``--turn`` sessions (50 by default, a few milliseconds), the side that goes first alternating; the
time of each side is the sum of its turns, and the pass's ratio is with / without (the target is at most
1.3); the median of the passes is printed. A turn of the side with the processor ends once the processor's
delivery thread took and handed over every record queued (it writes the records: the wait is timed), so that
its work never falls in the other side's turns. Turns this short put both sides under the same machine: shared
machines change speed by tens of percent within seconds, which one side after the other (the method of
earlier versions of this benchmark) took for the processor's cost, in either direction. While the side
without the processor runs, the engine process is stopped (SIGSTOP, then SIGCONT), so that everything the
processor costs this process, the engine's messages read and the alerts emitted included, falls in the
turns of the side with it, as when the sides ran one after the other. After each pass the engine is let
catch up (``force_flush``, not timed); the time it took is printed too, as are the alerts, the spans
dropped (none expected), the internal errors, and the CPU time this process spent on each side, all
threads, including the alerts emitted after the timed turns.

The whole cost is printed beside the application threads' ratio: the engine process's CPU time per tool
span (from ``/proc``, over each pass and its catch-up) and the catch-up time per tool span, and the engine
process's peak resident memory (``VmHWM``, read before it stops; the target is 300 MB at most).

Then the stamps: ``--lag-calls`` tool calls (the first sessions) are traced once with every call waiting for
the engine before the next (``force_flush``: each tool span's ``trifecta.level`` and ``trifecta.legs`` are
then exactly the level its call started at), and once per ``--lag-gaps`` value with that many milliseconds
between a call's end and the next call's start, without waiting; a stamp that differs from the first run's
lags its call's own level. The target is none for calls 1 ms apart or more, given an engine that decides a
call in less than that.

A burst like this one outruns the engine: with real content, the records of 100,000 tool spans take about
250 MB while they wait for it, more than the processor's default ``max_queue_bytes`` (128 MiB), so that
spans would be dropped (counted, and their sessions alerted). The bench gives the processor 512 MiB
(``--max-queue-mib``) so that the ratio is that of the normal path; ``--max-queue-mib 128`` shows the
default under this overload. In the engine process, the first 32 MiB of that backlog wait in memory and the rest
in a temporary file, so its peak RSS is the engine's own.

Two ablations: ``--hooks-only`` measures the processor's hooks alone (the records are written as usual but
discarded instead of being handed to the engine, so no alerts come back and no engine runs beside the
application); ``--stamps-only`` puts in the processor's place one that only writes the ``trifecta.*`` attributes
as the processor does (``trifecta.session_id`` on every span, ``trifecta.level`` and ``trifecta.legs`` on the
spans ``--level-stamps`` names: tool spans by default, as the processor's ``level_stamps``): what those
attributes cost by themselves, in the SDK and in the exporter, which no processor that stamps them can go
below. Usage::

    python bench/bench_otel.py [--workload agentdojo|synthetic] [--spans 100000] [--calls 20] [--repeats 5]
                               [--turn 50] [--no-content] [--otlp] [--worker process|thread] [--archive PATH]
                               [--max-queue-mib 512] [--level-stamps tools|all|none]
                               [--lag-calls 1000] [--lag-gaps 1 10] [--hooks-only | --stamps-only]
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import os
import resource
import signal
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk._logs import LoggerProvider, ReadableLogRecord
from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult, SimpleLogRecordProcessor
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_ARCHIVE = ROOT / ".." / "shared" / "data" / "agentdojo" / "dev-runs.tar.gz"
# How long a turn waits for the delivery thread to hand over its queue before the benchmark gives up.
DRAIN_LIMIT_S = 120.0
sys.path.insert(0, str(ROOT))

from monitor.otel import (  # noqa: E402
    ATTR_LEGS,
    ATTR_LEVEL,
    ATTR_SESSION_ID,
    LEVEL_PENDING,
    LEVEL_UNKNOWN,
    LevelStamps,
    TrifectaSpanProcessor,
)

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


class StampOnly(SpanProcessor):
    """Writes the attributes the monitor stamps, on the spans it stamps them on, and does nothing else
    (``--stamps-only``): the session id on every span, the level and legs on those ``level_stamps`` says."""

    def __init__(self, level_stamps: LevelStamps) -> None:
        self.tools = level_stamps is not LevelStamps.NONE
        self.others = level_stamps is LevelStamps.ALL

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        """Stamp the span as the processor does (into the SDK's own attribute dict, with no validation)."""
        attributes = span._attributes._dict  # type: ignore[union-attr]
        attributes[ATTR_SESSION_ID] = "bench-session"
        if self.tools if attributes.get("gen_ai.operation.name") == "execute_tool" else self.others:
            attributes[ATTR_LEVEL] = "armed"
            attributes[ATTR_LEGS] = "private_data,untrusted_content"


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


class StampCapture(SpanExporter):
    """Keeps, in order, the session, level and legs stamped on each tool span."""

    def __init__(self) -> None:
        self.stamps: list[tuple[Any, Any, Any]] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Keep the stamps of the tool spans."""
        for span in spans:
            attributes = span.attributes or {}
            if attributes.get("gen_ai.operation.name") == "execute_tool":
                self.stamps.append(
                    (attributes.get(ATTR_SESSION_ID), attributes.get(ATTR_LEVEL), attributes.get(ATTR_LEGS))
                )
        return SpanExportResult.SUCCESS


def read_process_stats(pid: int | None) -> dict[str, float]:
    """CPU seconds (user + system), resident and peak resident memory (MiB) of a process, from ``/proc``."""
    if pid is None:
        return {}
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks = os.sysconf("SC_CLK_TCK")
        status = dict(
            line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line
        )
    except (OSError, ValueError):
        return {}
    return {
        "cpu": (int(fields[11]) + int(fields[12])) / ticks,
        "rss": int(status["VmRSS"].split()[0]) / 1024,
        "peak": int(status["VmHWM"].split()[0]) / 1024,
    }


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
    from monitor.ingest import read_agentdojo
    from monitor.models import ToolCall, ToolResult, UserMessage

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


def start_session_spans(tracer: trace.Tracer, conversation_id: str, user: str | None) -> tuple[Any, Any]:
    """Start a session's ``invoke_agent`` span and, when the session has a user message, create and end its
    ``chat`` span; return the root span and its context."""
    root = tracer.start_span(
        "invoke_agent bench",
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": conversation_id},
    )
    parent = trace.set_span_in_context(root)
    if user is not None:
        messages = json.dumps([{"role": "user", "parts": [{"type": "text", "content": user}]}])
        tracer.start_span(
            "chat bench", parent, attributes={"gen_ai.operation.name": "chat", "gen_ai.input.messages": messages}
        ).end()
    return root, parent


def run(
    provider: TracerProvider,
    sessions: list[Session],
    prefix: str = "s",
    export: SpanProcessor | None = None,
) -> float:
    """Create and end every span (and, given ``export``, wait until it exported them); the wall time, seconds."""
    tracer = provider.get_tracer("bench")
    start = time.perf_counter()
    for n, (user, calls) in enumerate(sessions):
        root, parent = start_session_spans(tracer, f"{prefix}{n}", user)
        for attributes in calls:
            tracer.start_span(f"execute_tool {attributes['gen_ai.tool.name']}", parent, attributes=attributes).end()
        root.end()
    if export is not None:
        export.force_flush()
    return time.perf_counter() - start


class EnginePause:
    """Keeps the engine from running while the side without the processor is timed, so that all the processor
    costs this process, reading the engine's messages and emitting alerts included, falls on the side with it.

    An engine process is stopped (SIGSTOP) and continued (SIGCONT); an engine on the processor's delivery
    thread (``--worker thread``) is let catch up, untimed, after each turn of the side with it (so that its
    ratio leaves the engine out, and only the CPU time counts it). The delivery thread's own work (writing the
    records it takes, handing them to the engine process) is done before a turn of the side with the processor
    ends (:meth:`drain`, timed), so that none of it falls in the other side's turns.
    """

    def __init__(self, processor: TrifectaSpanProcessor, drains: bool) -> None:
        self.processor = processor
        self.drains = drains
        worker = processor._delivery.worker
        process = getattr(worker, "process", None)
        self.pid: int | None = process.pid if process is not None and hasattr(signal, "SIGSTOP") else None

    def drain(self) -> None:
        """Wait until the delivery thread took everything queued and handed it over (unless ``drains`` is False:
        with the engine on that thread, whose work is left out of the turns, or with ``--stamps-only``)."""
        if not self.drains:
            return
        delivery = self.processor._delivery
        delivery._wake.set()
        deadline = time.monotonic() + DRAIN_LIMIT_S
        while delivery._queued or not delivery._asleep:
            if time.monotonic() > deadline:
                raise SystemExit(
                    f"the delivery thread did not hand over its queue within {DRAIN_LIMIT_S:.0f} s "
                    f"({len(delivery._queued)} items left): it stopped or is stuck, so the turns cannot be timed"
                )
            time.sleep(0.00005)

    def pause(self) -> None:
        """Stop the engine."""
        if self.pid is not None:
            os.kill(self.pid, signal.SIGSTOP)
        elif self.processor.worker_kind == "thread":
            self.processor.force_flush(600_000)

    def resume(self) -> None:
        """Let the engine run again."""
        if self.pid is not None:
            os.kill(self.pid, signal.SIGCONT)


def run_pass(
    sides: dict[str, tuple[TracerProvider, SpanProcessor | None]],
    sessions: list[Session],
    turn: int,
    prefix: str,
    pause: EnginePause,
) -> dict[str, tuple[float, float]]:
    """Both sides over the same sessions, ``turn`` sessions at a time, taking turns at going first; per side,
    the wall time and this process's CPU time (all threads), seconds."""
    totals = {side: [0.0, 0.0] for side in sides}
    order = list(sides)
    gc.collect()
    for first in range(0, len(sessions), turn):
        chunk = sessions[first : first + turn]
        order.reverse()
        for side in order:
            provider, export = sides[side]
            if side == "with":
                pause.resume()
            cpu = time.process_time()
            totals[side][0] += run(provider, chunk, f"{prefix}{first}-", export)
            if side == "with":
                started = time.perf_counter()
                pause.drain()
                totals[side][0] += time.perf_counter() - started
                pause.pause()
            totals[side][1] += time.process_time() - cpu
    return {side: (wall, cpu) for side, (wall, cpu) in totals.items()}


def trace_with_gaps(provider: TracerProvider, sessions: list[Session], gap: float, after_call: Any = None) -> None:
    """Trace the sessions one call at a time, ``gap`` seconds (at least) between a span's end and the next
    call's start; ``after_call`` is called after each chat and tool span ended."""
    tracer = provider.get_tracer("bench-lag")
    for n, (user, calls) in enumerate(sessions):
        root, parent = start_session_spans(tracer, f"lag{n}", user)
        if user is not None and after_call is not None:
            after_call()
        for attributes in calls:
            if gap:
                time.sleep(gap)
            tracer.start_span(f"execute_tool {attributes['gen_ai.tool.name']}", parent, attributes=attributes).end()
            if after_call is not None:
                after_call()
        root.end()


def measure_stamps(sessions: list[Session], gap: float, worker: str, reference: list[Any] | None) -> list[Any]:
    """The stamps of every tool span, traced ``gap`` seconds apart (``reference`` None: each call waits for the
    engine before the next, so its stamp is exactly the level its call started at), with lagging ones counted
    against ``reference``."""
    capture = StampCapture()
    processor = TrifectaSpanProcessor(worker=worker)
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(SimpleSpanProcessor(capture))
    provider.add_span_processor(processor)
    flush = (lambda: processor.force_flush(600_000)) if reference is None else None
    trace_with_gaps(provider, sessions[:1], 0.0, lambda: processor.force_flush(600_000))  # the engine is up
    processor.end_session("lag0")
    processor.force_flush(600_000)
    capture.stamps.clear()
    trace_with_gaps(provider, sessions, gap, flush)
    processor.force_flush(600_000)
    processor.shutdown()
    return capture.stamps


def make_provider(otlp: bool, processor: SpanProcessor | None) -> tuple[TracerProvider, SpanProcessor]:
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
    parser.add_argument("--repeats", type=int, default=5, help="passes over the sessions (default 5)")
    parser.add_argument("--turn", type=int, default=50, help="sessions per turn of a side (default 50)")
    parser.add_argument("--no-content", action="store_true", help="synthetic: no arguments and results")
    parser.add_argument("--otlp", action="store_true", help="BatchSpanProcessor + OTLP protobuf encoding")
    parser.add_argument("--worker", choices=["process", "thread"], default="process", help="where the engine runs")
    parser.add_argument(
        "--level-stamps",
        choices=[kind.value for kind in LevelStamps],
        default=LevelStamps.TOOLS.value,
        help="the spans stamped with the level and legs (default: tools, the processor's default)",
    )
    parser.add_argument(
        "--max-queue-mib", type=int, default=512, help="the processor's max_queue_bytes, in MiB (default 512)"
    )
    parser.add_argument(
        "--lag-calls", type=int, default=1000, help="tool calls traced apart to count lagging stamps (default 1000)"
    )
    parser.add_argument(
        "--lag-gaps",
        type=float,
        nargs="*",
        default=[1.0, 10.0],
        help="milliseconds between calls for the stamp count (default: 1 10; none: skip it)",
    )
    ablations = parser.add_mutually_exclusive_group()
    ablations.add_argument(
        "--hooks-only", action="store_true", help="discard the records instead of feeding the engine (ablation)"
    )
    ablations.add_argument("--stamps-only", action="store_true", help="only stamp the trifecta.* attributes (ablation)")
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
    level_stamps = LevelStamps(args.level_stamps)
    processor = TrifectaSpanProcessor(
        logger_provider=logger_provider,
        worker=args.worker,
        max_queue_bytes=args.max_queue_mib << 20,
        level_stamps=level_stamps,
    )
    plain, plain_export = make_provider(args.otlp, None)
    monitored, monitored_export = make_provider(args.otlp, StampOnly(level_stamps) if args.stamps_only else processor)

    run(plain, warm, "warm-up-")
    run(monitored, warm, "warm-up-")
    processor.force_flush(600_000)
    alerts_before = log_exporter.count
    deliver = processor._delivery._deliver
    if args.hooks_only:  # an ablation: the records are written, then dropped on the delivery thread
        processor._delivery._deliver = lambda lines: None  # type: ignore[method-assign]

    exporter = "BatchSpanProcessor + OTLP protobuf encoding" if args.otlp else "SimpleSpanProcessor + no-op exporter"
    print(f"tool spans per side: {total:,} in {len(sessions):,} sessions, {described}")
    engine = "none (--hooks-only: records discarded)" if args.hooks_only else args.worker
    if args.stamps_only:
        engine = "none (--stamps-only: a processor that only stamps the trifecta.* attributes)"
    print(
        f"exporter on both sides: {exporter}; engine: {engine}; max_queue_bytes: {args.max_queue_mib} MiB; "
        f"level and legs stamped on: {level_stamps.value}"
    )
    print(f"the sides take turns every {args.turn} sessions; the engine process is paused while the other side runs")
    print(f"load average: {Path('/proc/loadavg').read_text().split()[:3]}")
    sides: dict[str, tuple[TracerProvider, SpanProcessor | None]] = {
        "without": (plain, plain_export if args.otlp else None),
        "with": (monitored, monitored_export if args.otlp else None),
    }
    engine_on_thread = args.worker == "thread" and not args.hooks_only
    pause = EnginePause(processor, drains=not (engine_on_thread or args.stamps_only))
    pause.pause()
    ratios = []
    cpu_ratios = []
    engine_cpu: list[float] = []
    catch_ups: list[float] = []
    for repeat in range(args.repeats):
        engine_before = read_process_stats(pause.pid)
        # The sides take turns every few sessions, so that the machine's changes of speed (shared machines
        # drift by tens of percent within seconds) fall on both alike; the engine catches up (not timed)
        # after each pass, so every pass starts from the same state.
        times = run_pass(sides, sessions, args.turn, f"r{repeat}-", pause)
        (without, cpu_without), (with_processor, cpu_with) = times["without"], times["with"]
        pause.resume()
        cpu = time.process_time()
        started = time.perf_counter()
        caught_up = args.hooks_only or args.stamps_only or processor.force_flush(600_000)
        catch_up = time.perf_counter() - started
        cpu_with += time.process_time() - cpu  # every alert emitted
        engine_after = read_process_stats(pause.pid)
        pause.pause()
        ratio = with_processor / without
        ratios.append(ratio)
        cpu_ratios.append(cpu_with / cpu_without)
        catch_ups.append(catch_up)
        engine = ""
        if engine_before and engine_after:
            engine_cpu.append(engine_after["cpu"] - engine_before["cpu"])
            engine = (
                f"; engine process CPU {engine_cpu[-1]:6.1f} s ({engine_cpu[-1] / total * 1e6:6.0f} us/span), "
                f"RSS {engine_after['rss']:5.0f} MiB (peak {engine_after['peak']:5.0f} MiB)"
            )
        print(
            f"  pass {repeat + 1}: without {without:6.3f} s ({without / total * 1e6:5.1f} us/span), "
            f"with {with_processor:6.3f} s ({with_processor / total * 1e6:5.1f} us/span), ratio {ratio:.3f}; "
            f"engine caught up {catch_up:5.1f} s after the last span{'' if caught_up else ' (TIMED OUT)'}; "
            f"CPU of this process {cpu_without:5.2f} s -> {cpu_with:5.2f} s{engine}"
        )
    pause.resume()
    print(f"ratio (median of {len(ratios)}): {statistics.median(ratios):.3f}  (target <= 1.3)")
    print(
        f"CPU time of this process (all threads, every alert emitted), with / without, median: "
        f"{statistics.median(cpu_ratios):.3f}"
    )
    if not (args.hooks_only or args.stamps_only):
        per_span = statistics.median(catch_ups) / total * 1e6
        cpu_text = (
            f"engine process CPU {statistics.median(engine_cpu) / total * 1e6:.0f} us per tool span (median); "
            if engine_cpu
            else "engine CPU: on this process's delivery thread (counted in its CPU time above); "
        )
        print(
            f"the whole cost: application threads {statistics.median(ratios):.3f} x; {cpu_text}"
            f"catch-up after the last span {per_span:.0f} us per tool span (median)"
        )
    processor._delivery._deliver = deliver  # type: ignore[method-assign]
    alerts = log_exporter.count - alerts_before
    sessions_held = len(processor.list_sessions())
    print(
        f"alerts logged: {alerts:,} ({alerts / (total * args.repeats):.3f} per tool call); "
        f"sessions held by the engine: {sessions_held:,}; spans dropped: {processor.dropped}; "
        f"internal errors: {processor.internal_errors}"
    )
    engine_stats = read_process_stats(pause.pid)
    processor.shutdown()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"peak RSS: this process {rss:.0f} MiB; engine process {child:.0f} MiB (measured after it stopped)")
    if engine_stats:
        print(f"engine process peak RSS (VmHWM, before it stopped): {engine_stats['peak']:.0f} MiB  (target <= 300)")
    if args.lag_calls > 0 and args.lag_gaps and not (args.hooks_only or args.stamps_only):
        lag_sessions = make_lag_sessions(sessions, args.lag_calls)
        calls = sum(len(c) for _, c in lag_sessions)
        reference = measure_stamps(lag_sessions, 0.0, args.worker, None)
        for gap in args.lag_gaps:
            stamps = measure_stamps(lag_sessions, gap / 1000, args.worker, reference)
            pairs = list(zip(stamps, reference, strict=True))
            pending = sum(1 for got, _ in pairs if got[1] in (LEVEL_PENDING, LEVEL_UNKNOWN))
            wrong = sum(1 for got, want in pairs if got != want and got[1] not in (LEVEL_PENDING, LEVEL_UNKNOWN))
            print(
                f"stamps on tool spans {gap:g} ms apart: {wrong} of {calls} differ from their call's own level "
                f"(target 0), {pending} ({pending / calls:.1%}) still pending when the span ended"
            )
    print(f"load average: {Path('/proc/loadavg').read_text().split()[:3]}")


def make_lag_sessions(sessions: list[Session], calls: int) -> list[Session]:
    """The first sessions, up to ``calls`` tool calls."""
    out: list[Session] = []
    made = 0
    for user, session_calls in sessions:
        if made >= calls:
            break
        out.append((user, session_calls[: calls - made]))
        made += len(out[-1][1])
    return out


if __name__ == "__main__":
    main()
