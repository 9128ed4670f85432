"""Replay the native sample sessions as a scripted agent traced with the OpenTelemetry SDK, into OTLP JSON.

Each session of ``samples/sessions/*.jsonl`` becomes one trace, made by a real ``TracerProvider`` and
written by a file exporter that encodes every batch it receives with ``opentelemetry-exporter-otlp-proto-common``
(``encode_spans``) and ``protobuf``'s ``json_format``, one ``ExportTraceServiceRequest`` per line, as the
Collector's file exporter does. Two flavours:

``genai.jsonl`` — OpenTelemetry GenAI and MCP semantic conventions, written as OTLP/JSON specifies (hex ids,
enums as numbers, 64-bit integers as strings). Per session::

    invoke_agent sample-agent            (agent; gen_ai.conversation.id = the session id)
      tools/list                         (MCP client, one per server) -> tools/list (MCP server process)
      chat <model>                       (gen_ai.input.messages: the user message and the history so far;
                                          gen_ai.tool.definitions: the servers' tools as mcp__<server>__<tool>,
                                          each with its MCP annotations)
      execute_tool mcp__<server>__<tool> (gen_ai.tool.call.id / .arguments / .result)
        tools/call <tool>                (MCP client; jsonrpc.request.id)
          tools/call <tool>              (MCP server process, its own resource)
      chat <model> ...

  The agent's spans of a session are exported as one batch when the session ends; each MCP server span is
  exported by its own process as soon as it ends, so it is written on an earlier line than its parent.

``openinference.jsonl`` — OpenInference conventions (an AGENT span with ``session.id``, LLM spans with
``llm.input_messages.*`` and ``llm.tools.*``, TOOL spans with ``tool.name``, ``tool_call.id``,
``input.value`` and ``output.value``), one span per line as each ends, in protobuf's generic JSON mapping
(base64 ids, enum names).

Ids come from a seeded generator and resources are fixed, so the output is reproducible. Run from the
project root::

    python samples/otel/record.py            # writes samples/otel/genai.jsonl and openinference.jsonl
    python samples/otel/record.py --check    # and compares their analysis with samples/sessions

Needs ``opentelemetry-sdk`` and ``opentelemetry-exporter-otlp-proto-common`` (which brings ``protobuf``).
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import NonRecordingSpan, SpanContext, SpanKind, TraceFlags

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SESSIONS = ROOT / "samples" / "sessions"

AGENT_NAME = "sample-agent"
MODEL = "claude-sonnet-4-5"
PROVIDER = "anthropic"
MCP_PROTOCOL_VERSION = "2025-06-18"
SCOPE = "trifecta-monitor.samples"
SCOPE_VERSION = "1.0.0"
MS = 1_000_000  # nanoseconds


# -- the native sessions -----------------------------------------------------------------------------


@dataclass
class Call:
    """A tool call of a native session with its result."""

    call_id: str
    server: str
    tool: str
    arguments: dict[str, Any] | None
    start: int
    result: Any = None
    end: int = 0
    is_error: bool = False


@dataclass
class Session:
    """One native sample session, read back from its JSONL file."""

    session_id: str
    listings: list[tuple[str, list[dict[str, Any]], int]] = field(default_factory=list)
    user_messages: list[tuple[str, int]] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)


def to_ns(stamp: str) -> int:
    """An ISO 8601 time as Unix nanoseconds."""
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    return int(moment.timestamp() * 1_000_000) * 1000


def read_session(path: Path) -> Session:
    """Read a native session file (one event per line)."""
    session: Session | None = None
    calls: dict[str, Call] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        event = json.loads(line)
        if session is None:
            session = Session(event["session_id"])
        when = to_ns(event["time"])
        kind = event["kind"]
        if kind == "tools_listed":
            session.listings.append((event["server"], event["tools"], when))
        elif kind == "user_message":
            session.user_messages.append((event["text"], when))
        elif kind == "tool_call":
            call = Call(event["call_id"], event["server"], event["tool"], event.get("arguments"), when)
            calls[call.call_id] = call
            session.calls.append(call)
        elif kind == "tool_result":
            call = calls[event["call_id"]]
            call.result, call.end, call.is_error = event.get("result"), when, bool(event.get("is_error"))
    if session is None:
        raise SystemExit(f"{path}: no events")
    return session


def mcp_name(server: str, tool: str) -> str:
    """The name a host gives an MCP tool: ``mcp__<server>__<tool>``."""
    return f"mcp__{server}__{tool}"


# -- the OpenTelemetry side --------------------------------------------------------------------------


class SeededIds(IdGenerator):
    """Trace and span ids from a seeded generator, so that every run writes the same files."""

    def __init__(self, seed: int) -> None:
        self._random = random.Random(seed)

    def generate_span_id(self) -> int:
        return self._random.getrandbits(64) or 1

    def generate_trace_id(self) -> int:
        return self._random.getrandbits(128) or 1


class OtlpJsonLinesExporter(SpanExporter):
    """Writes batches of spans as ``ExportTraceServiceRequest`` JSON lines.

    With ``batched``, spans are held until :meth:`write_batch` (a whole session in one line, as a batch
    processor would send it); otherwise each export is written at once. ``hex_ids`` writes the OTLP/JSON
    form (hex ids, enums as numbers); without it, protobuf's generic JSON mapping (base64 ids, enum names).
    """

    def __init__(self, out: IO[str], *, batched: bool, hex_ids: bool) -> None:
        self._out = out
        self._batched = batched
        self._hex_ids = hex_ids
        self._pending: list[ReadableSpan] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self._pending.extend(spans)
        if not self._batched:
            self.write_batch()
        return SpanExportResult.SUCCESS

    def write_batch(self) -> None:
        """Write the spans held so far as one line."""
        # Imported here: the session reader above needs opentelemetry-sdk alone.
        from google.protobuf import json_format
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

        if not self._pending:
            return
        request = encode_spans(self._pending)
        self._pending = []
        document = json_format.MessageToDict(request, use_integers_for_enums=self._hex_ids)
        if self._hex_ids:
            hex_ids(document)
        self._out.write(json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n")

    def shutdown(self) -> None:
        self.write_batch()


def hex_ids(document: dict[str, Any]) -> None:
    """Rewrite the base64 ids of protobuf's JSON mapping as the hex OTLP/JSON requires."""
    for resource_spans in document.get("resourceSpans", []):
        for scope_spans in resource_spans.get("scopeSpans", []):
            for span in scope_spans.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if span.get(key):
                        span[key] = base64.b64decode(span[key]).hex()
                for link in span.get("links", []):
                    for key in ("traceId", "spanId"):
                        if link.get(key):
                            link[key] = base64.b64decode(link[key]).hex()


def make_provider(service: str, exporter: SpanExporter, ids: IdGenerator) -> TracerProvider:
    """A tracer provider for one process (its resource), exporting each span as it ends."""
    provider = TracerProvider(resource=Resource({"service.name": service}), id_generator=ids)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


def dumps(value: Any) -> str:
    """JSON text for an attribute (span attributes hold only primitives and their arrays)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def remote_parent(span: trace.Span) -> Any:
    """The context an MCP server extracts from ``params._meta.traceparent``: the client span, remote."""
    ctx = span.get_span_context()
    remote = SpanContext(ctx.trace_id, ctx.span_id, is_remote=True, trace_flags=TraceFlags(TraceFlags.SAMPLED))
    return trace.set_span_in_context(NonRecordingSpan(remote))


# -- GenAI semantic conventions ----------------------------------------------------------------------


def genai_definitions(session: Session) -> list[dict[str, Any]]:
    """The session's MCP tools as ``gen_ai.tool.definitions`` entries, MCP annotations kept."""
    definitions = []
    for server, tools, _ in session.listings:
        for tool in tools:
            definition: dict[str, Any] = {
                "type": "function",
                "name": mcp_name(server, tool["name"]),
                "description": tool.get("description", ""),
                "parameters": tool.get("inputSchema", {}),
            }
            if "annotations" in tool:
                definition["annotations"] = tool["annotations"]
            definitions.append(definition)
    return definitions


class GenAiRecorder:
    """The agent, its MCP client and the MCP servers, traced with GenAI and MCP semantic conventions."""

    def __init__(self, out: IO[str]) -> None:
        self.ids = SeededIds(20261014)
        self.agent_exporter = OtlpJsonLinesExporter(out, batched=True, hex_ids=True)
        self.agent = make_provider("trifecta-sample-agent", self.agent_exporter, self.ids)
        self.server_exporter = OtlpJsonLinesExporter(out, batched=False, hex_ids=True)
        self.servers: dict[str, TracerProvider] = {}
        self.tracer = self.agent.get_tracer(SCOPE, SCOPE_VERSION)

    def server_tracer(self, server: str) -> trace.Tracer:
        """The tracer of an MCP server process."""
        if server not in self.servers:
            self.servers[server] = make_provider(f"{server}-mcp-server", self.server_exporter, self.ids)
        return self.servers[server].get_tracer(SCOPE, SCOPE_VERSION)

    def record(self, session: Session) -> None:
        """Trace one session and write the agent's batch."""
        start = min([when for _, _, when in session.listings] + [when for _, when in session.user_messages])
        last = max([c.end for c in session.calls] + [start])
        root = self.tracer.start_span(
            f"invoke_agent {AGENT_NAME}",
            kind=SpanKind.INTERNAL,
            start_time=start,
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": AGENT_NAME,
                "gen_ai.provider.name": PROVIDER,
                "gen_ai.request.model": MODEL,
                "gen_ai.conversation.id": session.session_id,
            },
        )
        in_root = trace.set_span_in_context(root)
        mcp_sessions: dict[str, tuple[str, list[int]]] = {}
        for server, _, when in session.listings:
            mcp_sessions[server] = (f"{self.ids.generate_trace_id():032x}", [0])
            self.mcp_request(in_root, server, "tools/list", None, when, when + 40 * MS, mcp_sessions)
        definitions = dumps(genai_definitions(session))
        history: list[dict[str, Any]] = []
        pending_users = list(session.user_messages)
        chat_start = pending_users[0][1] if pending_users else start
        for call in session.calls:
            while pending_users and pending_users[0][1] <= call.start:
                text, _ = pending_users.pop(0)
                history.append({"role": "user", "parts": [{"type": "text", "content": text}]})
            request = {"type": "tool_call", "id": call.call_id, "name": mcp_name(call.server, call.tool)}
            request["arguments"] = call.arguments
            chat = self.tracer.start_span(
                f"chat {MODEL}",
                context=in_root,
                kind=SpanKind.CLIENT,
                start_time=chat_start,
                attributes={
                    "gen_ai.operation.name": "chat",
                    "gen_ai.provider.name": PROVIDER,
                    "gen_ai.request.model": MODEL,
                    "gen_ai.conversation.id": session.session_id,
                    "gen_ai.input.messages": dumps(history),
                    "gen_ai.tool.definitions": definitions,
                    "gen_ai.output.messages": dumps(
                        [{"role": "assistant", "parts": [request], "finish_reason": "tool_call"}]
                    ),
                },
            )
            chat.end(end_time=call.start - 10 * MS)
            history.append({"role": "assistant", "parts": [request]})
            self.execute_tool(in_root, call, mcp_sessions)
            history.append(
                {"role": "tool", "parts": [{"type": "tool_call_response", "id": call.call_id, "response": call.result}]}
            )
            chat_start = call.end + 10 * MS
        root.end(end_time=last + 1500 * MS)
        self.agent_exporter.write_batch()

    def execute_tool(self, parent: Any, call: Call, mcp_sessions: dict[str, tuple[str, list[int]]]) -> None:
        """The agent's ``execute_tool`` span, and below it the MCP request."""
        span = self.tracer.start_span(
            f"execute_tool {mcp_name(call.server, call.tool)}",
            context=parent,
            kind=SpanKind.INTERNAL,
            start_time=call.start,
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": mcp_name(call.server, call.tool),
                "gen_ai.tool.type": "extension",
                "gen_ai.tool.call.id": call.call_id,
                "gen_ai.tool.call.arguments": dumps(call.arguments),
                "gen_ai.tool.call.result": dumps(call.result),
            },
        )
        self.mcp_request(
            trace.set_span_in_context(span),
            call.server,
            "tools/call",
            call,
            call.start + MS,
            call.end - MS,
            mcp_sessions,
        )
        if call.is_error:
            span.set_attribute("error.type", "tool_error")
            span.set_status(trace.Status(trace.StatusCode.ERROR))
        span.end(end_time=call.end)

    def mcp_request(
        self,
        parent: Any,
        server: str,
        method: str,
        call: Call | None,
        start: int,
        end: int,
        mcp_sessions: dict[str, tuple[str, list[int]]],
    ) -> None:
        """An MCP request: the client span in the agent, the server span in the server's process."""
        mcp_session, counter = mcp_sessions[server]
        counter[0] += 1
        attributes: dict[str, Any] = {
            "mcp.method.name": method,
            "mcp.session.id": mcp_session,
            "mcp.protocol.version": MCP_PROTOCOL_VERSION,
            "jsonrpc.request.id": str(counter[0]),
            "network.transport": "pipe",
        }
        name = method
        if call is not None:
            attributes["gen_ai.operation.name"] = "execute_tool"
            attributes["gen_ai.tool.name"] = call.tool
            name = f"{method} {call.tool}"
        client = self.tracer.start_span(
            name, context=parent, kind=SpanKind.CLIENT, start_time=start, attributes=attributes
        )
        served = self.server_tracer(server).start_span(
            name, context=remote_parent(client), kind=SpanKind.SERVER, start_time=start + MS, attributes=attributes
        )
        if call is not None and call.is_error:
            for span in (client, served):
                span.set_attribute("error.type", "tool_error")
                span.set_status(trace.Status(trace.StatusCode.ERROR))
        served.end(end_time=end - MS)
        client.end(end_time=end)

    def close(self) -> None:
        """Flush and shut every provider down."""
        self.agent.shutdown()
        for provider in self.servers.values():
            provider.shutdown()


# -- OpenInference -----------------------------------------------------------------------------------


def openinference_tools(session: Session) -> dict[str, Any]:
    """``llm.tools.<i>.tool.*``: the MCP definitions themselves as the provider-native json_schema."""
    attributes: dict[str, Any] = {}
    i = 0
    for server, tools, _ in session.listings:
        for tool in tools:
            name = mcp_name(server, tool["name"])
            attributes[f"llm.tools.{i}.tool.name"] = name
            attributes[f"llm.tools.{i}.tool.description"] = tool.get("description", "")
            attributes[f"llm.tools.{i}.tool.json_schema"] = dumps({**tool, "name": name})
            i += 1
    return attributes


class OpenInferenceRecorder:
    """The same agent traced with OpenInference conventions, one span per exported line."""

    def __init__(self, out: IO[str]) -> None:
        self.exporter = OtlpJsonLinesExporter(out, batched=False, hex_ids=False)
        self.provider = make_provider("trifecta-sample-agent", self.exporter, SeededIds(20261015))
        self.tracer = self.provider.get_tracer(SCOPE, SCOPE_VERSION)

    def record(self, session: Session) -> None:
        """Trace one session."""
        start = min([when for _, _, when in session.listings] + [when for _, when in session.user_messages])
        last = max([c.end for c in session.calls] + [start])
        tools = {(server, t["name"]): t for server, listed, _ in session.listings for t in listed}
        first_text = session.user_messages[0][0] if session.user_messages else ""
        root = self.tracer.start_span(
            AGENT_NAME,
            kind=SpanKind.INTERNAL,
            start_time=start,
            attributes={
                "openinference.span.kind": "AGENT",
                "agent.name": AGENT_NAME,
                "session.id": session.session_id,
                "input.value": first_text,
                "input.mime_type": "text/plain",
            },
        )
        in_root = trace.set_span_in_context(root)
        tool_attributes = openinference_tools(session)
        messages: list[dict[str, Any]] = []
        pending_users = list(session.user_messages)
        llm_start = pending_users[0][1] if pending_users else start
        for call in session.calls:
            while pending_users and pending_users[0][1] <= call.start:
                text, _ = pending_users.pop(0)
                messages.append({"message.role": "user", "message.content": text})
            name = mcp_name(call.server, call.tool)
            arguments = dumps(call.arguments)
            attributes: dict[str, Any] = {
                "openinference.span.kind": "LLM",
                "session.id": session.session_id,
                "llm.model_name": MODEL,
                "llm.provider": PROVIDER,
                "llm.system": PROVIDER,
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.tool_calls.0.tool_call.id": call.call_id,
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": name,
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": arguments,
                **tool_attributes,
            }
            for i, message in enumerate(messages):
                for key, value in message.items():
                    attributes[f"llm.input_messages.{i}.{key}"] = value
            llm = self.tracer.start_span(
                "llm", context=in_root, kind=SpanKind.INTERNAL, start_time=llm_start, attributes=attributes
            )
            llm.end(end_time=call.start - 10 * MS)
            messages.append(
                {
                    "message.role": "assistant",
                    "message.tool_calls.0.tool_call.id": call.call_id,
                    "message.tool_calls.0.tool_call.function.name": name,
                    "message.tool_calls.0.tool_call.function.arguments": arguments,
                }
            )
            definition = tools.get((call.server, call.tool), {})
            span = self.tracer.start_span(
                name,
                context=in_root,
                kind=SpanKind.INTERNAL,
                start_time=call.start,
                attributes={
                    "openinference.span.kind": "TOOL",
                    "tool.name": name,
                    "tool.description": definition.get("description", ""),
                    "tool.parameters": dumps(definition.get("inputSchema", {})),
                    "tool_call.id": call.call_id,
                    "input.value": arguments,
                    "input.mime_type": "application/json",
                    "output.value": dumps(call.result),
                    "output.mime_type": "application/json",
                },
            )
            if call.is_error:
                span.set_status(trace.Status(trace.StatusCode.ERROR))
            span.end(end_time=call.end)
            messages.append(
                {"message.role": "tool", "message.content": dumps(call.result), "message.tool_call_id": call.call_id}
            )
            llm_start = call.end + 10 * MS
        root.end(end_time=last + 1500 * MS)

    def close(self) -> None:
        """Flush and shut the provider down."""
        self.provider.shutdown()


# -- main --------------------------------------------------------------------------------------------


def write_samples(out_dir: Path) -> list[Path]:
    """Write both sample files; returns their paths."""
    sessions = [read_session(path) for path in sorted(SESSIONS.glob("*.jsonl"))]
    written = []
    for name, recorder_class in (("genai.jsonl", GenAiRecorder), ("openinference.jsonl", OpenInferenceRecorder)):
        path = out_dir / name
        with path.open("w", encoding="utf-8", newline="\n") as out:
            recorder = recorder_class(out)
            for session in sessions:
                recorder.record(session)
            recorder.close()
        written.append(path)
    return written


def check(paths: list[Path]) -> bool:
    """Compare each sample's analysis with the native sessions': same levels, same calls and actions."""
    sys.path.insert(0, str(ROOT))
    from monitor.analysis import analyze_records
    from monitor.ingest import read_jsonl, read_otlp
    from monitor.models import RecordError, SessionReport
    from monitor.session import SessionMonitor

    def summarize(records: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for item in analyze_records(records, SessionMonitor()):
            if isinstance(item, RecordError):
                out.setdefault("errors", []).append(item.message)
            elif isinstance(item, SessionReport):
                calls = [(c.call_id, c.server, c.tool, c.decision.action.value) for c in item.calls]
                out[item.session_id] = (item.level.value, calls)
        return out

    native: dict[str, Any] = {}
    for path in sorted(SESSIONS.glob("*.jsonl")):
        native.update(summarize(read_jsonl(path)))
    ok = True
    for path in paths:
        replay = summarize(read_otlp(path))
        same = replay == native
        ok = ok and same
        print(f"{path.name}: {'same levels and actions as samples/sessions' if same else 'DIFFERENT'}")
        for session_id, (level, calls) in sorted(replay.items()) if isinstance(replay, dict) else []:
            if session_id == "errors":
                continue
            actions = ", ".join(f"{tool}:{action}" for _, _, tool, action in calls)
            print(f"  {session_id:22} {level:13} {actions}")
        if not same:
            print(f"  native: {native}\n  replay: {replay}")
    return ok


def main() -> None:
    """Write the samples, and check them when asked."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=HERE, help="folder to write to (default: samples/otel)")
    parser.add_argument("--check", action="store_true", help="compare the analysis with samples/sessions")
    args = parser.parse_args()
    paths = write_samples(args.out)
    for path in paths:
        print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    if args.check and not check(paths):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
