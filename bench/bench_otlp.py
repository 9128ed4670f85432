"""Benchmark: OTLP JSON-lines analysis at scale, against a bare JSON parse of the same file.

Generates (into a temporary folder) an OTLP JSON-lines file of 1,000,000 spans shaped like a Collector file
export of many agents at work: sessions of one to four turns, each turn a trace (``invoke_agent`` root,
``chat`` spans carrying the user message and the tool definitions, ``execute_tool`` spans with arguments
and results, MCP client spans below them, some MCP server spans from other processes, HTTP client spans),
48 agents interleaved, spans written in the order they end in batches of about 256 (so children come
before their parents, often on earlier lines), a few batches shuffled, and a few MCP server spans exported
late, after their trace's root.

Smaller sizes are the first lines of the same file (``--spans 100000 1000000``, the default; one size
``N`` alone also measures ``N/10``), so that how time and memory grow with the input shows in one run.

Then, for each size, in one run and one after the other, three child processes: a bare parse
(``orjson.loads`` of every line), ``read_otlp`` alone (decoding, trace assembly, events; no engine), and
the full analysis (``read_otlp`` + ``analyze_records`` + ``SessionMonitor``, reports counted and dropped);
the engine's share is the full analysis less the reading. Each child measures its own CPU time and its
peak resident memory (``ru_maxrss`` of the child itself, read with ``resource.getrusage(RUSAGE_SELF)`` at
its end: it includes the interpreter and every module the analysis imports). The load average of the
machine is printed before and after. Usage::

    python bench/bench_otlp.py [--spans 100000 1000000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
AGENTS = 48
BATCH = 256
MS = 1_000_000

# A compact catalog: (server, tool, description, parameters, annotations or None)
CATALOG: dict[str, list[tuple[str, str, dict[str, Any], dict[str, Any] | None]]] = {
    "github": [
        (
            "list_issues",
            "List issues in a GitHub repository.",
            {"owner": "string", "repo": "string"},
            {"readOnlyHint": True},
        ),
        (
            "get_file_contents",
            "Get the contents of a file or directory.",
            {"owner": "string", "repo": "string", "path": "string"},
            {"readOnlyHint": True},
        ),
        (
            "create_pull_request",
            "Open a new pull request.",
            {"owner": "string", "repo": "string", "title": "string", "body": "string"},
            {"readOnlyHint": False},
        ),
    ],
    "supabase": [
        (
            "execute_sql",
            "Executes raw SQL in the Postgres database.",
            {"project_id": "string", "query": "string"},
            {"readOnlyHint": False, "destructiveHint": True},
        ),
    ],
    "google-workspace": [
        (
            "search_gmail_messages",
            "Search messages in the user's Gmail.",
            {"query": "string", "page_size": "integer"},
            None,
        ),
        (
            "send_gmail_message",
            "Send an email from the user's account.",
            {"to": "string", "subject": "string", "body": "string"},
            None,
        ),
        ("get_events", "Retrieve calendar events.", {"calendar_id": "string", "time_min": "string"}, None),
    ],
    "fetch": [
        (
            "fetch",
            "Fetches a URL from the internet and extracts its contents as markdown.",
            {"url": "string"},
            {"readOnlyHint": True, "openWorldHint": True},
        ),
    ],
}
PROFILES = [("github", "fetch"), ("supabase",), ("google-workspace", "fetch"), ("github", "supabase")]
WORDS = "alpha beta gamma delta release invoice budget roadmap customer ticket meeting notes deploy report".split()


def sv(key: str, value: str) -> dict[str, Any]:
    """A string attribute."""
    return {"key": key, "value": {"stringValue": value}}


def iv(key: str, value: int) -> dict[str, Any]:
    """An int attribute, written as OTLP/JSON writes int64: a string."""
    return {"key": key, "value": {"intValue": str(value)}}


def definitions(profile: tuple[str, ...]) -> str:
    """``gen_ai.tool.definitions`` for a set of servers, as a JSON string."""
    out = []
    for server in profile:
        for tool, description, params, hints in CATALOG[server]:
            schema = {
                "type": "object",
                "properties": {k: {"type": v} for k, v in params.items()},
                "required": list(params),
            }
            entry: dict[str, Any] = {
                "type": "function",
                "name": f"mcp__{server}__{tool}",
                "description": description,
                "parameters": schema,
            }
            if hints:
                entry["annotations"] = hints
            out.append(entry)
    return orjson.dumps(out).decode()


class Generator:
    """Writes the synthetic export."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.definitions = {profile: definitions(profile) for profile in PROFILES}
        self.sessions = 0
        self.traces = 0
        self.calls = 0

    def hex_id(self, bits: int) -> str:
        return f"{self.rng.getrandbits(bits) or 1:0{bits // 4}x}"

    def text(self, n: int) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(n))

    def arguments(self, server: str, tool: str) -> dict[str, Any]:
        rng = self.rng
        if tool == "execute_sql":
            return {
                "project_id": "qkzvbxwhtnrmpfjdlyse",
                "query": f"SELECT id, subject FROM tickets WHERE id = {rng.randrange(10**6)};",
            }
        if tool == "send_gmail_message":
            return {"to": f"{rng.choice(WORDS)}@example.com", "subject": self.text(4), "body": self.text(30)}
        if tool == "fetch":
            return {"url": f"https://{rng.choice(WORDS)}.example.org/{rng.randrange(10**5)}"}
        if tool == "create_pull_request":
            return {"owner": "acme", "repo": rng.choice(WORDS), "title": self.text(5), "body": self.text(40)}
        return {"owner": "acme", "repo": rng.choice(WORDS), "query": self.text(3), "page_size": 10}

    def result(self) -> dict[str, Any]:
        body = self.text(self.rng.randrange(20, 120))
        return {
            "content": [
                {"type": "text", "text": json.dumps({"items": [{"id": self.rng.randrange(10**9), "body": body}]})}
            ]
        }

    def trace(
        self, agent: int, session_id: str | None, user: str, profile: tuple[str, ...], t0: int
    ) -> tuple[list[tuple[int, str, dict[str, Any]]], int]:
        """One turn: spans as ``(end time, resource, span)``; returns them and the turn's end."""
        rng = self.rng
        trace_id = self.hex_id(128)
        agent_resource = f"agent-{agent}"
        spans: list[tuple[int, str, dict[str, Any]]] = []

        def span(
            name: str,
            kind: int,
            parent: str | None,
            start: int,
            end: int,
            attrs: list[dict[str, Any]],
            resource_name: str = agent_resource,
        ) -> str:
            span_id = self.hex_id(64)
            body: dict[str, Any] = {
                "traceId": trace_id,
                "spanId": span_id,
                "name": name,
                "kind": kind,
                "startTimeUnixNano": str(start),
                "endTimeUnixNano": str(end),
                "attributes": attrs,
                "status": {},
            }
            if parent:
                body["parentSpanId"] = parent
            spans.append((end, resource_name, body))
            return span_id

        root_id = self.hex_id(64)
        conv = [sv("gen_ai.conversation.id", session_id)] if session_id else []
        t = t0 + 5 * MS
        tools = [(server, entry) for server in profile for entry in CATALOG[server]]
        for _ in range(rng.randrange(1, 6)):
            chat_end = t + rng.randrange(300, 2000) * MS
            messages = orjson.dumps(
                [
                    {"role": "system", "parts": [{"type": "text", "content": "You are a helpful agent."}]},
                    {"role": "user", "parts": [{"type": "text", "content": user}]},
                ]
            ).decode()
            chat = span(
                "chat claude-sonnet-4-5",
                3,
                root_id,
                t,
                chat_end,
                [
                    sv("gen_ai.operation.name", "chat"),
                    sv("gen_ai.provider.name", "anthropic"),
                    sv("gen_ai.request.model", "claude-sonnet-4-5"),
                    *conv,
                    sv("gen_ai.input.messages", messages),
                    sv("gen_ai.tool.definitions", self.definitions[profile]),
                    iv("gen_ai.usage.input_tokens", rng.randrange(500, 5000)),
                ],
            )
            if rng.random() < 0.5:
                span(
                    "POST",
                    3,
                    chat,
                    t + MS,
                    chat_end - MS,
                    [
                        sv("http.request.method", "POST"),
                        sv("url.full", "https://api.anthropic.com/v1/messages"),
                        sv("server.address", "api.anthropic.com"),
                        iv("http.response.status_code", 200),
                    ],
                )
            server, (tool, _, _, _) = rng.choice(tools)
            start = chat_end + 2 * MS
            end = start + rng.randrange(50, 1500) * MS
            call_id = f"toolu_{self.hex_id(96)}"
            attrs = [
                sv("gen_ai.operation.name", "execute_tool"),
                sv("gen_ai.tool.name", f"mcp__{server}__{tool}"),
                sv("gen_ai.tool.call.id", call_id),
                sv("gen_ai.tool.type", "extension"),
            ]
            if agent % 5:
                attrs += [
                    sv("gen_ai.tool.call.arguments", orjson.dumps(self.arguments(server, tool)).decode()),
                    sv("gen_ai.tool.call.result", orjson.dumps(self.result()).decode()),
                ]
            execute = span(f"execute_tool mcp__{server}__{tool}", 1, root_id, start, end, attrs)
            mcp_attrs = [
                sv("mcp.method.name", "tools/call"),
                sv("gen_ai.operation.name", "execute_tool"),
                sv("gen_ai.tool.name", tool),
                sv("jsonrpc.request.id", str(rng.randrange(2, 500))),
                sv("mcp.session.id", trace_id[:16]),
                sv("network.transport", "tcp"),
            ]
            client = span(f"tools/call {tool}", 3, execute, start + MS, end - MS, mcp_attrs)
            if rng.random() < 0.5:
                span(
                    "POST",
                    3,
                    client,
                    start + 2 * MS,
                    end - 2 * MS,
                    [
                        sv("http.request.method", "POST"),
                        sv("url.full", f"https://mcp.{server}.example/mcp"),
                        sv("server.address", f"mcp.{server}.example"),
                        iv("http.response.status_code", 200),
                    ],
                )
            if rng.random() < 0.4:
                span(f"tools/call {tool}", 2, client, start + 3 * MS, end - 3 * MS, mcp_attrs, f"{server}-mcp-server")
            self.calls += 1
            t = end + 3 * MS
        final_end = t + rng.randrange(300, 2000) * MS
        span(
            "chat claude-sonnet-4-5",
            3,
            root_id,
            t,
            final_end,
            [sv("gen_ai.operation.name", "chat"), *conv, sv("gen_ai.request.model", "claude-sonnet-4-5")],
        )
        root_end = final_end + 5 * MS
        root = {
            "traceId": trace_id,
            "spanId": root_id,
            "name": "invoke_agent support-agent",
            "kind": 1,
            "startTimeUnixNano": str(t0),
            "endTimeUnixNano": str(root_end),
            "attributes": [
                sv("gen_ai.operation.name", "invoke_agent"),
                sv("gen_ai.agent.name", "support-agent"),
                *conv,
            ],
            "status": {},
        }
        spans.append((root_end, agent_resource, root))
        self.traces += 1
        return spans, root_end

    def write(self, path: Path, total: int, prefixes: dict[int, Path] | None = None) -> int:
        """Write about ``total`` spans; returns the number written. For each ``(count, prefix path)`` of
        ``prefixes``, the file as it stands once ``count`` spans are written is copied to that path too."""
        prefixes = dict(prefixes or {})
        rng = self.rng
        clocks = [1_790_000_000_000_000_000 + i * 997 * MS for i in range(AGENTS)]
        state: list[tuple[str | None, str, tuple[str, ...], int]] = [self.new_session() for _ in range(AGENTS)]
        pending: list[tuple[int, str, dict[str, Any]]] = []
        late: list[tuple[int, str, dict[str, Any]]] = []
        written = 0
        with path.open("wb") as out:
            while written < total:
                for agent in range(AGENTS):
                    session_id, user, profile, turns = state[agent]
                    spans, end = self.trace(agent, session_id, user, profile, clocks[agent])
                    clocks[agent] = end + rng.randrange(1, 30) * 1000 * MS
                    state[agent] = (session_id, self.text(8), profile, turns - 1) if turns > 1 else self.new_session()
                    pending.extend(spans)
                pending.sort(key=lambda item: item[0])
                horizon = min(clocks)  # every span ending before this is final
                cut = next((i for i, item in enumerate(pending) if item[0] >= horizon), len(pending))
                ready, pending = pending[:cut], pending[cut:]
                for i in range(0, len(ready), BATCH):
                    batch = ready[i : i + BATCH]
                    keep = []
                    for item in batch:
                        if item[1].endswith("-mcp-server") and rng.random() < 0.02:
                            late.append(item)  # a server process that exports late
                        else:
                            keep.append(item)
                    if late and rng.random() < 0.1:
                        keep.extend(late)
                        late = []
                    if rng.random() < 0.05:
                        rng.shuffle(keep)
                    out.write(self.line(keep))
                    written += len(keep)
                    for count in [c for c in prefixes if written >= c]:
                        out.flush()
                        shutil.copyfile(path, prefixes.pop(count))
                    if written >= total:
                        break
            if late:
                out.write(self.line(late))
                written += len(late)
        return written

    def new_session(self) -> tuple[str | None, str, tuple[str, ...], int]:
        self.sessions += 1
        session_id = f"conv_{self.hex_id(64)}" if self.rng.random() < 0.9 else None
        return session_id, self.text(10), self.rng.choice(PROFILES), self.rng.randrange(1, 5)

    @staticmethod
    def line(batch: list[tuple[int, str, dict[str, Any]]]) -> bytes:
        by_resource: dict[str, list[dict[str, Any]]] = {}
        for _, resource_name, body in batch:
            by_resource.setdefault(resource_name, []).append(body)
        document = {
            "resourceSpans": [
                {
                    "resource": {"attributes": [sv("service.name", name)]},
                    "scopeSpans": [{"scope": {"name": "bench"}, "spans": spans}],
                }
                for name, spans in by_resource.items()
            ]
        }
        return orjson.dumps(document) + b"\n"


def bare_parse(path: Path) -> dict[str, Any]:
    """``orjson.loads`` of every line, nothing else."""
    start = time.process_time()
    lines = 0
    with path.open("rb") as fh:
        for line in fh:
            orjson.loads(line)
            lines += 1
    return {"seconds": time.process_time() - start, "lines": lines}


def read_only(path: Path) -> dict[str, Any]:
    """``read_otlp`` alone: decoding, assembling traces and building events, without the engine."""
    from monitor.ingest import read_otlp

    start = time.process_time()
    records = sum(1 for _ in read_otlp(path))
    return {"seconds": time.process_time() - start, "records": records}


def analyze(path: Path) -> dict[str, Any]:
    """``read_otlp`` + ``analyze_records`` + ``SessionMonitor``, counting what comes out."""
    from monitor.analysis import analyze_records
    from monitor.ingest import read_otlp
    from monitor.models import AnalysisSummary, RecordError
    from monitor.session import SessionMonitor

    start = time.process_time()
    summary = AnalysisSummary()
    for item in analyze_records(read_otlp(path), SessionMonitor()):
        if isinstance(item, RecordError):
            summary.errors += 1
        else:
            summary.add(item)
    return {
        "seconds": time.process_time() - start,
        "sessions": summary.sessions,
        "calls": summary.calls,
        "errors": summary.errors,
        "by_level": dict(summary.by_level),
        "by_action": dict(summary.by_action),
    }


def run_child(mode: str, path: Path) -> dict[str, Any]:
    """Run one measurement in a fresh interpreter; it reports its own time and peak RSS."""
    done = subprocess.run(
        [sys.executable, __file__, f"--child={mode}", str(path)], check=True, capture_output=True, text=True, cwd=ROOT
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def measure_size(path: Path) -> dict[str, dict[str, Any]]:
    """The three measurements of one file, one after the other, each in a fresh interpreter."""
    return {mode: run_child(mode, path) for mode in ("parse", "read", "analyze")}


def print_size(spans: int, size_mib: float, found: dict[str, dict[str, Any]]) -> None:
    """The figures of one size."""
    parse, reader, full = found["parse"], found["read"], found["analyze"]
    engine = max(0.0, full["seconds"] - reader["seconds"])
    print(f"{spans:,} spans ({size_mib:.0f} MiB, {parse['lines']} lines):")
    print(f"  bare parse:           {parse['seconds']:8.2f} s CPU   peak RSS {parse['max_rss_mib']:5.0f} MiB")
    print(
        f"  read_otlp alone:      {reader['seconds']:8.2f} s CPU   peak RSS {reader['max_rss_mib']:5.0f} MiB   "
        f"{reader['seconds'] / parse['seconds']:5.1f} x parse   ({reader['records']} records)"
    )
    print(
        f"  full analysis:        {full['seconds']:8.2f} s CPU   peak RSS {full['max_rss_mib']:5.0f} MiB   "
        f"{full['seconds'] / parse['seconds']:5.1f} x parse   ({full['sessions']} sessions, {full['calls']} calls, "
        f"{full['errors']} errors)"
    )
    print(
        f"  of the analysis: reading {reader['seconds'] / full['seconds']:.0%}, "
        f"engine (the rest) {engine / full['seconds']:.0%} = {engine / parse['seconds']:.1f} x parse"
    )
    print(f"  sessions by level:  {dict(sorted(full['by_level'].items()))}")
    print(f"  calls by action:    {dict(sorted(full['by_action'].items()))}")


def main() -> None:
    """Generate, measure each size, print."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", nargs="?", type=Path)
    parser.add_argument(
        "--spans",
        type=int,
        nargs="+",
        default=[100_000, 1_000_000],
        help="the sizes to measure, in spans (default: 100000 1000000; one size N alone also measures N/10)",
    )
    parser.add_argument("--keep", type=Path, help="write the generated files into this folder and keep them")
    parser.add_argument("--child", choices=["parse", "read", "analyze"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        sys.path.insert(0, str(ROOT))
        measure = {"parse": bare_parse, "read": read_only, "analyze": analyze}[args.child]
        result = measure(args.path)
        result["max_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(result))
        return
    sizes = sorted(set(args.spans))
    if len(sizes) == 1 and sizes[0] >= 20:
        sizes = [sizes[0] // 10, sizes[0]]
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        paths = {n: folder / f"bench-otlp-{n}.jsonl" for n in sizes}
        generator = Generator(seed=7)
        start = time.perf_counter()
        largest = sizes[-1]
        spans = generator.write(paths[largest], largest, {n: paths[n] for n in sizes[:-1]})
        generated = time.perf_counter() - start
        print(
            f"generated: {spans:,} spans, {generator.traces:,} traces, {generator.sessions:,} sessions, "
            f"{generator.calls:,} tool calls in {generated:.1f} s; the smaller sizes are its first lines"
        )
        print(f"load average before: {Path('/proc/loadavg').read_text().split()[:3]}")
        results = []
        for n in sizes:
            results.append((n, paths[n].stat().st_size / 2**20, measure_size(paths[n])))
            print_size(*results[-1])
        print(f"load average after: {Path('/proc/loadavg').read_text().split()[:3]}")
    print("size        ratio analysis/parse   ratio read/parse   peak RSS of the analysis")
    for n, _, found in results:
        parse = found["parse"]["seconds"]
        print(
            f"{n:>10,}  {found['analyze']['seconds'] / parse:10.1f}            {found['read']['seconds'] / parse:8.1f}"
            f"          {found['analyze']['max_rss_mib']:6.0f} MiB"
        )
    print("targets: analysis <= 6 x parse; peak RSS < 300 MiB and flat across sizes")


if __name__ == "__main__":
    main()
