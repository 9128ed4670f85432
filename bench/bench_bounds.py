"""Benchmark: the work one hostile record costs the monitor.

Prints, for each figure, the number the bound promises next to what was measured:

- the YAML alias bomb (``a0: &a0 [lol, ...]`` with nine values, then ``aN: &aN [*aN-1, ...]`` with nine
  aliases), 6 to 12 lines: engine time of ``after_call`` (the target is under 50 ms at 12 lines) and the values
  the walk visited;
- a session blocked inside its work (a hook that waits) against ``before_call`` on another session: how long
  the other session waited (the target is no wait at all: per-session locks);
- a huge tool message (200 MB by default) of an AgentDojo run, as prose, as prose full of JSON escapes
  (quotes, new lines, backslashes) and as a YAML listing, then one huge tool result in every other line format
  (native JSONL, an MCP log, a Claude Code transcript, OTLP JSON, each a bundled sample with one result made
  huge): the peak resident memory of ``trifecta analyze`` on it (the target is under 600 MB), next to the peak
  of only reading the file (the reader's share), and the engine's own peak (tracemalloc) and time on the same
  string.

Usage::

    python bench/bench_bounds.py [--size-mb 200] [--skip-large]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path

import orjson
from machine_load import describe_load

from monitor import SessionMonitor
from monitor.evidence import Reading, iter_leaves
from monitor.models import ToolContext
from monitor.types import OverrideSource

READ_ONLY = """
import sys
from pathlib import Path
from monitor.ingest import read_inputs
for _ in read_inputs([Path(sys.argv[1])]):
    pass
"""


def yaml_bomb(lines: int) -> str:
    """The alias bomb: each line holds nine aliases of the line before."""
    rows = ["a0: &a0 [" + ", ".join(["lol"] * 9) + "]"]
    rows.extend(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, lines))
    return "\n".join(rows)


def bench_bomb() -> None:
    """Engine time of ``after_call`` on the bomb, by its number of lines."""
    print(describe_load())
    print("YAML alias bomb (target: under 50 ms of engine time at 12 lines)")
    warm = SessionMonitor(rules="none")  # the first call compiles patterns and loads word lists
    warm.before_call("s", "web", "fetch_page", {"url": "https://a.example"}, "c1")
    warm.after_call("s", "c1", yaml_bomb(2))
    for lines in range(6, 13):
        text = yaml_bomb(lines)
        monitor = SessionMonitor(rules="none")
        monitor.observe_user_message("s", "read the page")
        monitor.before_call("s", "web", "fetch_page", {"url": "https://a.example"}, "c1")
        start = time.process_time()
        monitor.after_call("s", "c1", text)
        elapsed = time.process_time() - start
        reading = Reading(text)
        leaves = sum(1 for _ in iter_leaves(reading))
        print(
            f"  {lines:2d} lines, {len(text):4d} bytes: {elapsed * 1000:7.2f} ms, "
            f"{reading.nodes} values visited, {leaves} leaves, truncated={reading.truncated}"
        )


class _BlockingRules:
    """Reviewed overrides that stop inside the classification of one tool until released."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def classify(self, tool: ToolContext) -> None:
        """Wait for the release on ``slow_tool``; no reviewed rule covers anything."""
        if tool.name == "slow_tool":
            self.entered.set()
            self.release.wait(30)
        return None

    def trust_for(self, server: str) -> bool | None:
        """No reviewed trust."""
        return None


def bench_locks() -> None:
    """How long ``before_call`` on one session waits while another session is stuck in its work."""
    rules = _BlockingRules()
    source: OverrideSource = rules
    monitor = SessionMonitor(rules=source)
    worker = threading.Thread(target=monitor.before_call, args=("slow", "srv", "slow_tool", {}, "c1"))
    worker.start()
    rules.entered.wait(30)
    # A wait, not work: wall time is what it is measured in.
    start = time.perf_counter()
    monitor.before_call("other", "srv", "fast_tool", {"q": "x"}, "c1")
    waited = time.perf_counter() - start
    rules.release.set()
    worker.join()
    print(f"Locks: before_call on another session while one is blocked in its work: {waited * 1000:.2f} ms")


def write_run(path: Path, size: int, kind: str) -> None:
    """An AgentDojo run whose one tool message is ``size`` characters of prose or of a YAML listing."""
    if kind == "prose":
        line = "The quarterly numbers look fine and the team met its goals for the period. "
    elif kind == "quoted":  # JSON escapes all along the string: quotes, new lines, tabs, backslashes
        line = 'The "quarterly" numbers look fine,\n\tthe team met its goals (C:\\reports). '
    else:
        line = "- id_: '{i}'\n  sender: ana@corp.example\n  subject: minutes\n  body: the minutes of the weekly call\n"
    parts: list[str] = []
    total = i = 0
    while total < size:
        part = line.replace("{i}", str(i))
        parts.append(part)
        total += len(part)
        i += 1
    content = "".join(parts)[:size]
    parts.clear()
    call = {"id": "t1", "function": "read_file", "args": {"file_id": "notes"}}
    run = {
        "suite_name": "workspace",
        "user_task_id": "user_task_0",
        "injection_task_id": None,
        "messages": [
            {"role": "user", "content": "Summarise my notes and send them to ana@corp.example"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "content": content, "tool_call_id": "t1", "tool_call": call, "error": None},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "t2", "function": "send_email", "args": {"recipients": ["ana@corp.example"], "body": "ok"}}
                ],
            },
        ],
    }
    path.write_bytes(orjson.dumps(run))


SAMPLES = Path(__file__).resolve().parent.parent / "samples"
# Per format: the bundled sample, a test picking the line with a tool result, and the path to its text.
LINE_FORMATS: dict[str, tuple[str, str, tuple[str | int, ...]]] = {
    "mcp": ("mcp/github-benign.jsonl", '"content": [{"text"', ("message", "result", "content", 0, "text")),
    "claude-code": (
        "claude-code/github-benign.jsonl",
        '"type":"tool_result"',
        ("message", "content", 0, "content", 0, "text"),
    ),
}


def write_line_format(path: Path, size: int, fmt: str) -> None:
    """One of the bundled samples in ``fmt`` with the text of its first tool result made ``size`` characters
    of prose (for ``jsonl``, a session of three events; for ``otlp``, the tool span's result attribute)."""
    line = "The quarterly numbers look fine and the team met its goals for the period. "
    text = (line * (size // len(line) + 1))[:size]
    if fmt == "jsonl":
        records = [
            {"kind": "user_message", "session_id": "s", "text": "summarise my notes"},
            {"kind": "tool_call", "session_id": "s", "call_id": "c1", "server": "drive", "tool": "read_file"},
            {"kind": "tool_result", "session_id": "s", "call_id": "c1", "result": text},
        ]
        path.write_bytes(b"\n".join(orjson.dumps(r) for r in records) + b"\n")
        return
    if fmt == "otlp":
        lines = (SAMPLES / "otel/genai.jsonl").read_text().splitlines()
        for i, raw in enumerate(lines):
            if "gen_ai.tool.call.result" in raw:
                doc = orjson.loads(raw)
                attributes = [
                    attribute
                    for resource in doc["resourceSpans"]
                    for scope in resource["scopeSpans"]
                    for span in scope["spans"]
                    for attribute in span.get("attributes", [])
                    if attribute["key"] == "gen_ai.tool.call.result"
                ]
                block = {"content": [{"type": "text", "text": text}]}
                attributes[0]["value"] = {"stringValue": orjson.dumps(block).decode()}
                lines[i] = orjson.dumps(doc).decode()
                break
        path.write_text("\n".join(lines) + "\n")
        return
    sample, marker, where = LINE_FORMATS[fmt]
    lines = (SAMPLES / sample).read_text().splitlines()
    for i, raw in enumerate(lines):
        if marker in raw:
            doc = orjson.loads(raw)
            node = doc
            for step in where[:-1]:
                node = node[step]
            node[where[-1]] = text
            lines[i] = orjson.dumps(doc).decode()
            break
    path.write_text("\n".join(lines) + "\n")


# A process started from this one reports at least this one's peak memory (its memory until it runs the
# command counts as its own), so the command is started from a small process that prints its peak and code.
STARTER = """
import os, sys
pid = os.posix_spawn(sys.argv[1], sys.argv[1:], os.environ)
_, status, usage = os.wait4(pid, 0)
print(usage.ru_utime + usage.ru_stime, usage.ru_maxrss, os.waitstatus_to_exitcode(status))
"""


def peak_of(command: list[str]) -> tuple[float, float, int]:
    """Run a command; its own peak resident memory (MB), its CPU time (s, user + system) and its exit code."""
    shown = subprocess.run(
        [sys.executable, "-S", "-c", STARTER, *command], capture_output=True, text=True, check=True
    ).stdout.split()
    return int(shown[-2]) / 1024, float(shown[-3]), int(shown[-1])


def bench_large(size_mb: int) -> None:
    """Peak memory of ``trifecta analyze`` on a run with one huge tool message, against reading it alone."""
    size = size_mb * 1_000_000
    print(f"One {size_mb} MB tool message (target: trifecta analyze peaks under 600 MB)")
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("prose", "quoted", "listing"):
            path = Path(tmp) / f"{kind}.json"
            write_run(path, size, kind)
            read_peak, read_time, _ = peak_of([sys.executable, "-c", READ_ONLY, str(path)])
            cli = [sys.executable, "-m", "monitor", "analyze", "--input-format", "agentdojo", str(path)]
            peak, elapsed, code = peak_of(cli)
            print(
                f"  {kind:11s}: analyze peak {peak:7.0f} MB in {elapsed:5.1f} s CPU (exit {code}); "
                f"reading alone {read_peak:7.0f} MB in {read_time:5.1f} s CPU"
            )
            path.unlink()
        for fmt in ("jsonl", "mcp", "claude-code", "otlp"):
            path = Path(tmp) / f"{fmt}.jsonl"
            write_line_format(path, size, fmt)
            read_peak, read_time, _ = peak_of([sys.executable, "-c", READ_ONLY, str(path)])
            cli = [sys.executable, "-m", "monitor", "analyze", "--input-format", fmt, str(path)]
            peak, elapsed, code = peak_of(cli)
            print(
                f"  {fmt:11s}: analyze peak {peak:7.0f} MB in {elapsed:5.1f} s CPU (exit {code}); "
                f"reading alone {read_peak:7.0f} MB in {read_time:5.1f} s CPU"
            )
            path.unlink()
    line = "The quarterly numbers look fine and the team met its goals for the period. "
    text = (line * (size // len(line) + 1))[:size]
    monitor = SessionMonitor(rules="none")
    monitor.observe_user_message("s", "summarise my notes")
    monitor.before_call("s", "drive", "read_file", {"path": "notes.txt"}, "c1")
    start = time.process_time()
    monitor.after_call("s", "c1", text)
    monitor.before_call("s", "mail", "send_email", {"to": "ana@corp.example", "body": "the notes"}, "c2")
    elapsed = time.process_time() - start
    monitor.before_call("s", "drive", "read_file", {"path": "notes.txt"}, "c3")
    tracemalloc.start()
    monitor.after_call("s", "c3", text)
    monitor.before_call("s", "mail", "send_email", {"to": "ana@corp.example", "body": "the notes"}, "c4")
    peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    print(
        f"  engine alone on the {size_mb} MB string (after_call, then a send that searches it): {elapsed:.1f} s CPU, "
        f"peak {peak:.1f} MB above the input (tracemalloc)"
    )


def main() -> None:
    """Run the benchmarks and print their figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--size-mb", type=int, default=200, help="size of the huge tool message (default 200)")
    parser.add_argument("--skip-large", action="store_true", help="skip the huge-record measurement")
    args = parser.parse_args()
    bench_bomb()
    bench_locks()
    if not args.skip_large:
        bench_large(args.size_mb)


if __name__ == "__main__":
    main()
