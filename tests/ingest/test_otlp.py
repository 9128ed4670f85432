"""The OTLP JSON reader: tolerant decoding, errors with file and line, streaming, and the two samples."""

from __future__ import annotations

import base64
import gc
import io
import json
from pathlib import Path
from typing import Any

import pytest
from support.records import errors_of

from monitor.analysis import analyze_records
from monitor.ingest._jsonl import read_jsonl
from monitor.ingest._otlp import decode_export, iter_documents, read_otlp, read_otlp_stream, sniff
from monitor.models import Record, RecordError, SessionEnd, SessionReport, ToolCall, ToolResult, UserMessage
from monitor.session import SessionMonitor
from monitor.spans import SpanKind, SpanRecord, StatusCode

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"

TRACE_HEX = "5b8efff798038103d269b633813fc60c"
ROOT_HEX = "eee19b7ec3c1b173"
CHILD_HEX = "eee19b7ec3c1b174"

# The shape of open-telemetry/opentelemetry-proto examples/trace.json (pretty-printed, parent not in file).
PROTO_EXAMPLE = """{
  "resourceSpans": [
    {
      "resource": {
        "attributes": [
          {
            "key": "service.name",
            "value": {
              "stringValue": "my.service"
            }
          }
        ]
      },
      "scopeSpans": [
        {
          "scope": {
            "name": "my.library",
            "version": "1.0.0",
            "attributes": [
              {
                "key": "my.scope.attribute",
                "value": {
                  "stringValue": "some scope attribute"
                }
              }
            ]
          },
          "spans": [
            {
              "traceId": "5B8EFFF798038103D269B633813FC60C",
              "spanId": "EEE19B7EC3C1B174",
              "parentSpanId": "EEE19B7EC3C1B173",
              "name": "I'm a server span",
              "startTimeUnixNano": 1544712660000000000,
              "endTimeUnixNano": 1544712661000000000,
              "kind": 2,
              "attributes": [
                {
                  "key": "my.span.attr",
                  "value": {
                    "stringValue": "some value"
                  }
                }
              ]
            }
          ]
        }
      ]
    }
  ]
}
"""


def sv(key: str, value: str) -> dict[str, Any]:
    return {"key": key, "value": {"stringValue": value}}


def otlp_span(span_id: str, parent: str | None = None, trace_id: str = TRACE_HEX, **fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "traceId": trace_id,
        "spanId": span_id,
        "name": fields.pop("name", "span"),
        "kind": 1,
        "startTimeUnixNano": "1000",
        "endTimeUnixNano": "2000",
    }
    if parent:
        body["parentSpanId"] = parent
    body.update(fields)
    return body


def export(*spans: dict[str, Any], resource: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "resourceSpans": [
            {"resource": {"attributes": resource or []}, "scopeSpans": [{"scope": {"name": "t"}, "spans": list(spans)}]}
        ]
    }


def write_lines(path: Path, documents: list[Any]) -> Path:
    path.write_text("".join((d if isinstance(d, str) else json.dumps(d)) + "\n" for d in documents), encoding="utf-8")
    return path


def decode_one(span: dict[str, Any], resource: list[dict[str, Any]] | None = None) -> SpanRecord:
    (record,) = list(decode_export(export(span, resource=resource), "t:1"))
    assert isinstance(record, SpanRecord)
    return record


def tool_attributes(name: str = "mcp__mail__send", call_id: str = "c1") -> list[dict[str, Any]]:
    return [
        sv("gen_ai.operation.name", "execute_tool"),
        sv("gen_ai.tool.name", name),
        sv("gen_ai.tool.call.id", call_id),
        sv("gen_ai.tool.call.arguments", '{"to": "x@example.com"}'),
    ]


# -- sniffing ------------------------------------------------------------------------------------------


def test_sniff_recognises_documents_and_lines_by_content() -> None:
    assert sniff(PROTO_EXAMPLE.encode())
    assert sniff(b'{"resourceSpans":[{"scopeSpans":[]}]}\n{"resourceSpans":[]}\n')
    assert sniff(b'\xef\xbb\xbf {"resource_spans": []}')
    assert not sniff(b'{"kind": "tool_call", "session_id": "s"}\n')
    assert not sniff(b'{"resourceMetrics": []}')
    assert not sniff(b"resourceSpans")


# -- decoding variants ---------------------------------------------------------------------------------


def test_the_proto_example_shape_parses(tmp_path: Path) -> None:
    path = tmp_path / "trace.json"
    path.write_text(PROTO_EXAMPLE, encoding="utf-8")
    documents = list(iter_documents(path.open("rb"), str(path)))
    assert len(documents) == 1
    source, document = documents[0]  # type: ignore[misc]
    assert source == f"{path}:1"
    (record,) = list(decode_export(document, source))
    assert record == SpanRecord(
        trace_id=TRACE_HEX,
        span_id=CHILD_HEX,
        parent_span_id=ROOT_HEX,
        name="I'm a server span",
        kind=SpanKind.SERVER,
        start_time_ns=1544712660000000000,
        end_time_ns=1544712661000000000,
        attributes={"my.span.attr": "some value"},
        resource_attributes={"service.name": "my.service"},
    )
    # Not a GenAI trace: no events, no errors.
    assert list(read_otlp(path)) == []


@pytest.mark.parametrize(
    ("trace_id", "span_id"),
    [
        (TRACE_HEX, CHILD_HEX),
        (TRACE_HEX.upper(), CHILD_HEX.upper()),
        (
            base64.b64encode(bytes.fromhex(TRACE_HEX)).decode(),
            base64.b64encode(bytes.fromhex(CHILD_HEX)).decode(),
        ),
        (
            base64.urlsafe_b64encode(bytes.fromhex(TRACE_HEX)).decode().rstrip("="),
            base64.urlsafe_b64encode(bytes.fromhex(CHILD_HEX)).decode().rstrip("="),
        ),
    ],
)
def test_ids_in_hex_or_base64(trace_id: str, span_id: str) -> None:
    record = decode_one(otlp_span(span_id, trace_id=trace_id))
    assert (record.trace_id, record.span_id, record.parent_span_id) == (TRACE_HEX, CHILD_HEX, None)


@pytest.mark.parametrize(
    ("kind", "code", "expected_kind", "expected_code"),
    [
        (3, 2, SpanKind.CLIENT, StatusCode.ERROR),
        ("SPAN_KIND_CLIENT", "STATUS_CODE_ERROR", SpanKind.CLIENT, StatusCode.ERROR),
        ("SERVER", "OK", SpanKind.SERVER, StatusCode.OK),
        ("2", "1", SpanKind.SERVER, StatusCode.OK),
        (None, None, SpanKind.UNSPECIFIED, StatusCode.UNSET),
        ("SOMETHING_NEW", 9, SpanKind.UNSPECIFIED, StatusCode.UNSET),
    ],
)
def test_enums_as_numbers_or_names(kind: Any, code: Any, expected_kind: SpanKind, expected_code: StatusCode) -> None:
    record = decode_one(otlp_span(CHILD_HEX, kind=kind, status={"code": code, "message": "why"}))
    assert (record.kind, record.status_code) == (expected_kind, expected_code)
    assert record.status_message == "why"


def test_int64_as_strings_or_numbers() -> None:
    as_strings = decode_one(otlp_span(CHILD_HEX, startTimeUnixNano="1544712660000000000", endTimeUnixNano="17"))
    as_numbers = decode_one(otlp_span(CHILD_HEX, startTimeUnixNano=1544712660000000000, endTimeUnixNano=17))
    assert (as_strings.start_time_ns, as_strings.end_time_ns) == (1544712660000000000, 17)
    assert (as_numbers.start_time_ns, as_numbers.end_time_ns) == (1544712660000000000, 17)
    values = decode_one(otlp_span(CHILD_HEX, attributes=[{"key": "n", "value": {"intValue": "9007199254740993"}}]))
    assert values.attributes == {"n": 9007199254740993}


def test_snake_case_keys_and_legacy_instrumentation_library_spans() -> None:
    document = {
        "resource_spans": [
            {
                "resource": {"attributes": [{"key": "service.name", "value": {"string_value": "svc"}}]},
                "instrumentation_library_spans": [
                    {
                        "spans": [
                            {
                                "trace_id": TRACE_HEX,
                                "span_id": CHILD_HEX,
                                "parent_span_id": ROOT_HEX,
                                "start_time_unix_nano": "5",
                                "end_time_unix_nano": "6",
                                "attributes": [{"key": "flag", "value": {"bool_value": True}}],
                            }
                        ]
                    }
                ],
            }
        ]
    }
    (record,) = list(decode_export(document, "t:1"))
    assert isinstance(record, SpanRecord)
    assert (record.span_id, record.parent_span_id, record.start_time_ns, record.end_time_ns) == (
        CHILD_HEX,
        ROOT_HEX,
        5,
        6,
    )
    assert record.attributes == {"flag": True}
    assert record.resource_attributes == {"service.name": "svc"}


def test_every_attribute_value_kind() -> None:
    attributes = [
        sv("s", "text"),
        {"key": "b", "value": {"boolValue": False}},
        {"key": "i", "value": {"intValue": 42}},
        {"key": "d", "value": {"doubleValue": 1.5}},
        {"key": "d2", "value": {"doubleValue": "2.5"}},
        {"key": "bytes", "value": {"bytesValue": base64.b64encode(b"hello").decode()}},
        {"key": "raw", "value": {"bytesValue": base64.b64encode(b"\xff\xfe").decode()}},
        {"key": "arr", "value": {"arrayValue": {"values": [{"stringValue": "a"}, {"intValue": "2"}]}}},
        {
            "key": "kv",
            "value": {
                "kvlistValue": {
                    "values": [
                        {"key": "inner", "value": {"stringValue": "v"}},
                        {"key": "nested", "value": {"arrayValue": {"values": [{"boolValue": True}]}}},
                    ]
                }
            },
        },
        {"key": "empty", "value": {}},
        {"key": "empty_array", "value": {"arrayValue": {}}},
    ]
    record = decode_one(otlp_span(CHILD_HEX, attributes=attributes))
    assert record.attributes == {
        "s": "text",
        "b": False,
        "i": 42,
        "d": 1.5,
        "d2": 2.5,
        "bytes": "hello",
        "raw": base64.b64encode(b"\xff\xfe").decode(),
        "arr": ["a", 2],
        "kv": {"inner": "v", "nested": [True]},
        "empty": None,
        "empty_array": [],
    }


def test_structured_genai_attributes_from_kvlist_and_array_values(tmp_path: Path) -> None:
    arguments = {"kvlistValue": {"values": [{"key": "to", "value": {"stringValue": "x@example.com"}}]}}
    messages = {
        "arrayValue": {
            "values": [
                {
                    "kvlistValue": {
                        "values": [
                            {"key": "role", "value": {"stringValue": "user"}},
                            {
                                "key": "parts",
                                "value": {
                                    "arrayValue": {
                                        "values": [
                                            {
                                                "kvlistValue": {
                                                    "values": [
                                                        {"key": "type", "value": {"stringValue": "text"}},
                                                        {"key": "content", "value": {"stringValue": "mail it"}},
                                                    ]
                                                }
                                            }
                                        ]
                                    }
                                },
                            },
                        ]
                    }
                }
            ]
        }
    }
    root = otlp_span(
        ROOT_HEX,
        attributes=[sv("gen_ai.conversation.id", "s1"), {"key": "gen_ai.input.messages", "value": messages}],
    )
    tool = otlp_span(
        CHILD_HEX,
        ROOT_HEX,
        attributes=[
            sv("gen_ai.operation.name", "execute_tool"),
            sv("gen_ai.tool.name", "send"),
            {"key": "gen_ai.tool.call.arguments", "value": arguments},
        ],
    )
    records = list(read_otlp(write_lines(tmp_path / "t.jsonl", [export(tool, root)])))
    user = next(r for r in records if isinstance(r, UserMessage))
    call = next(r for r in records if isinstance(r, ToolCall))
    assert user.text == "mail it"
    assert call.arguments == {"to": "x@example.com"}


# -- errors --------------------------------------------------------------------------------------------


def test_bad_lines_are_reported_with_file_and_line_and_the_rest_kept(tmp_path: Path) -> None:
    good = export(otlp_span(ROOT_HEX, attributes=[sv("session.id", "s"), *tool_attributes()]))
    other = export(otlp_span(CHILD_HEX, trace_id="1" * 32, attributes=[sv("session.id", "s2"), *tool_attributes()]))
    path = write_lines(tmp_path / "t.jsonl", [good, '{"resourceSpans": [', "", "[1, 2", {"spans": []}, other])
    records = list(read_otlp(path))
    errs = errors_of(records)
    assert [e.source for e in errs] == [f"{path}:2", f"{path}:4", f"{path}:5"]
    assert errs[0].message.startswith("not JSON")
    assert "not an OTLP trace export" in errs[2].message
    assert [r.session_id for r in records if isinstance(r, ToolCall)] == ["s", "s2"]


def test_bad_spans_are_reported_and_the_rest_of_the_line_kept(tmp_path: Path) -> None:
    spans = [
        otlp_span("not hex, not b64"),
        otlp_span(ROOT_HEX, trace_id="00" * 16),
        "not a span",
        otlp_span(ROOT_HEX, startTimeUnixNano="soon"),
        otlp_span(ROOT_HEX, attributes="nope"),
        {"spanId": ROOT_HEX},
        otlp_span(ROOT_HEX, trace_id="abc"),
        otlp_span(CHILD_HEX, attributes=[sv("session.id", "kept"), *tool_attributes()]),
    ]
    path = write_lines(tmp_path / "t.jsonl", [export(*spans)])
    records = list(read_otlp(path))
    errs = errors_of(records)
    assert len(errs) == 7
    assert all(e.source == f"{path}:1" for e in errs)
    assert [e.message.split(":")[0] for e in errs] == [f"resourceSpans/0/scopeSpans/0/spans/{i}" for i in range(7)]
    assert "spanId" in errs[0].message and "neither hex nor base64" in errs[0].message
    assert "all zeros" in errs[1].message
    assert "not an object" in errs[2].message
    assert "startTimeUnixNano" in errs[3].message
    assert "attributes" in errs[4].message
    assert "traceId is missing" in errs[5].message
    assert "traceId" in errs[6].message
    assert [r.session_id for r in records if isinstance(r, ToolCall)] == ["kept"]


def test_a_broken_pretty_printed_document_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(PROTO_EXAMPLE.replace('"kind": 2,', '"kind": 2,,'), encoding="utf-8")
    (error,) = list(read_otlp(path))
    assert isinstance(error, RecordError)
    line = PROTO_EXAMPLE.splitlines().index('              "kind": 2,') + 1
    assert error.source == f"{path}:{line}"


def test_a_missing_file_is_an_error(tmp_path: Path) -> None:
    (error,) = list(read_otlp(tmp_path / "absent.jsonl"))
    assert isinstance(error, RecordError) and error.source == str(tmp_path / "absent.jsonl")


# -- streaming, ancestors and sessions ---------------------------------------------------------------


def test_children_in_earlier_lines_inherit_the_session_of_a_later_parent(tmp_path: Path) -> None:
    grandchild = otlp_span(
        "c" * 16, "b" * 16, attributes=[sv("mcp.method.name", "tools/call"), sv("gen_ai.tool.name", "send")]
    )
    child = otlp_span(
        "b" * 16, ROOT_HEX, startTimeUnixNano="1100", endTimeUnixNano="1900", attributes=tool_attributes()
    )
    root = otlp_span(
        ROOT_HEX, startTimeUnixNano="1000", endTimeUnixNano="3000", attributes=[sv("gen_ai.conversation.id", "conv-1")]
    )
    path = write_lines(tmp_path / "t.jsonl", [export(grandchild), export(child), export(root)])
    records = list(read_otlp(path))
    assert errors_of(records) == []
    calls = [r for r in records if isinstance(r, ToolCall)]
    results = [r for r in records if isinstance(r, ToolResult)]
    assert [(c.session_id, c.call_id, c.server, c.tool) for c in calls] == [("conv-1", "c1", "mail", "send")]
    assert [r.call_id for r in results] == ["c1"]
    assert records[-1] == SessionEnd(session_id="conv-1", source=str(path))


def test_sessions_end_while_the_file_is_still_being_read(tmp_path: Path) -> None:
    documents = []
    for i in range(30):
        trace_id = f"{i + 1:032x}"
        documents.append(
            export(
                otlp_span(
                    f"{i + 1:016x}", trace_id=trace_id, attributes=[sv("session.id", f"s{i}"), *tool_attributes()]
                )
            )
        )
    stream = read_otlp_stream(
        io.BytesIO("".join(json.dumps(d) + "\n" for d in documents).encode()),
        "mem",
        session_idle_spans=5,
    )
    order: list[Record] = list(stream)
    ends = [i for i, r in enumerate(order) if isinstance(r, SessionEnd)]
    calls = [i for i, r in enumerate(order) if isinstance(r, ToolCall)]
    assert len(ends) == 30
    assert ends[0] < calls[-1]  # the first sessions ended long before the last call was read


# -- the samples ---------------------------------------------------------------------------------------


def summarize(records: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in analyze_records(records, SessionMonitor()):
        assert not isinstance(item, RecordError), item
        assert isinstance(item, SessionReport)
        out[item.session_id] = (
            item.level.value,
            [(c.call_id, c.server, c.tool, c.decision.action.value) for c in item.calls],
        )
    return out


def native_events() -> dict[str, list[dict[str, Any]]]:
    by_session: dict[str, list[dict[str, Any]]] = {}
    for path in sorted((SAMPLES / "sessions").glob("*.jsonl")):
        for record in read_jsonl(path):
            if not isinstance(record, RecordError | SessionEnd):
                by_session.setdefault(record.session_id, []).append(record.model_dump(exclude={"time", "source"}))
    return by_session


@pytest.mark.parametrize("name", ["genai.jsonl", "openinference.jsonl"])
def test_samples_replay_exactly_as_the_native_sessions(name: str) -> None:
    path = SAMPLES / "otel" / name
    records = list(read_otlp(path))
    assert errors_of(records) == []
    replayed: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        if not isinstance(record, SessionEnd):
            replayed.setdefault(record.session_id, []).append(record.model_dump(exclude={"time", "source"}))
    assert replayed == native_events()
    native: dict[str, Any] = {}
    for native_path in sorted((SAMPLES / "sessions").glob("*.jsonl")):
        native.update(summarize(read_jsonl(native_path)))
    assert summarize(iter(records)) == native
    levels = {session: level for session, (level, _) in native.items()}
    assert levels["github-public-issue"] == levels["supabase-ticket"] == levels["calendar-invite"] == "exfiltration"


def test_samples_carry_the_tricky_shapes() -> None:
    genai = (SAMPLES / "otel" / "genai.jsonl").read_bytes()
    openinference = (SAMPLES / "otel" / "openinference.jsonl").read_bytes()
    assert sniff(genai[:65536]) and sniff(openinference[:65536])
    first = json.loads(genai.splitlines()[0])
    span = first["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert len(span["traceId"]) == 32 and isinstance(span["kind"], int)  # OTLP/JSON: hex, enums as numbers
    oi = json.loads(openinference.splitlines()[0])["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert len(oi["traceId"]) == 24 and oi["kind"].startswith("SPAN_KIND_")  # protobuf JSON: base64, names
    # MCP server spans (their own resource) are written before the agent's batch holding their parents.
    services = [
        json.loads(line)["resourceSpans"][0]["resource"]["attributes"][0]["value"]["stringValue"]
        for line in genai.splitlines()
    ]
    assert services[0].endswith("-mcp-server") and "trifecta-sample-agent" in services


def test_reading_otlp_leaves_the_garbage_collector_as_it_found_it(tmp_path: Path) -> None:
    span = {
        "traceId": "0af7651916cd43dd8448eb211c80319c",
        "spanId": "b7ad6b7169203331",
        "name": "execute_tool fetch",
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
            {"key": "gen_ai.tool.name", "value": {"stringValue": "mcp__web__fetch"}},
        ],
    }
    line = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})
    path = tmp_path / "traces.jsonl"
    path.write_text(f"{line}\n{{not json\n{line}\n")
    was_enabled = gc.isenabled()
    try:
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            records = read_otlp(path)
            first = next(records)  # suspended between records: the collector runs as before
            assert gc.isenabled() is enabled
            rest = list(records)
            assert gc.isenabled() is enabled
            kinds = [type(r).__name__ for r in [first, *rest]]
            assert kinds.count("RecordError") == 1 and "ToolCall" in kinds
    finally:
        (gc.enable if was_enabled else gc.disable)()
