"""A record holding a huge string is read once: the same value, problems and errors, without a parser's copy."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import orjson
import pytest

from monitor.ingest import InputFormat, read_agentdojo, read_inputs
from monitor.jsonrecords import ABRIDGED, decode_json_record
from monitor.models import ToolCall, ToolResult

BIG = 17 * 1024 * 1024  # records this large have their long strings decoded apart
PROSE = "The quarterly numbers look fine and the team met its goals for the period. "
LISTING = "- id_: '{i}'\n  sender: ana@corp.example\n  subject: minutes \\ notes\n  body: café € 😀 \x01\n"
QUOTED = 'He said "fine" and left. '  # escaped quotes: strings are found by pairing the unescaped ones


def _long(line: str, size: int) -> str:
    return (line * (size // len(line) + 1))[:size]


def _decoded(data: bytes | bytearray) -> Any:
    try:
        return decode_json_record(data)
    except orjson.JSONDecodeError as exc:
        return ("error", exc.msg, exc.pos)


def _same_either_way(raw: bytes) -> Any:
    """Decode ``raw`` as bytes and as a buffer given away; both must agree, and the buffer ends empty."""
    buffer = bytearray(raw)
    given = _decoded(buffer)
    assert given == _decoded(raw)
    assert buffer == b""
    return given


@pytest.mark.parametrize("ascii_only", [True, False])
@pytest.mark.parametrize("line", [PROSE, LISTING, QUOTED])
def test_a_huge_string_reads_as_it_is_written(line: str, ascii_only: bool) -> None:
    text = _long(line, BIG)
    record = {"messages": [{"role": "tool", "content": text}, {"role": "user", "content": [text[:2_000_000]]}]}
    value, problems = _same_either_way(json.dumps(record, ensure_ascii=ascii_only).encode())
    assert value == record
    assert problems == []


@pytest.mark.parametrize("line", [LISTING.replace("café € 😀", "cafe"), QUOTED + '\\"quoted\\" \\\\'])
def test_a_huge_string_is_not_copied_by_the_parser(line: str) -> None:
    text = _long(line, BIG)  # one byte a character, as the record is written
    raw = orjson.dumps({"role": "tool", "content": text})
    buffer = bytearray(raw)
    tracemalloc.start()
    try:
        value, _ = decode_json_record(buffer)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert value["content"] == text
    assert peak < 1.5 * len(raw)  # the string itself, not also a parser's copy of the record


@pytest.mark.parametrize(
    "tail",
    [b"\x01", b"\xff", b"\\q", b"\\ud800", b"\\ud800\\ude00", b'\\"', b"\\\\", b'\\\\\\"', b'\\\\"'],
    ids=[
        "control",
        "not-utf8",
        "bad-escape",
        "lone-surrogate",
        "pair",
        "escaped-quote",
        "backslash",
        "backslash-then-quote",
        "unescaped-quote",
    ],
)
@pytest.mark.parametrize("body", [PROSE, QUOTED.replace('"', '\\"')], ids=["prose", "quoted"])
def test_a_huge_string_ending_oddly_reads_or_fails_as_it_would_whole(tail: bytes, body: str) -> None:
    raw = b'{"a": "' + _long(body, 3_000_000).encode() + tail + b'", "b": 1}' + b" " * BIG
    _same_either_way(raw)


def test_a_huge_document_that_is_not_json_fails_the_same() -> None:
    _same_either_way(b'{"a": "' + _long(PROSE, BIG).encode() + b'"')
    _same_either_way(b'{"a": 1, "' + _long(PROSE, BIG).encode() + b'": 2')


def test_repeated_keys_with_huge_values_keep_every_value() -> None:
    first, second = _long(PROSE, 3_000_000), _long(LISTING, 3_000_000)
    raw = b'{"a": %s, "a": %s}' % (orjson.dumps(first), orjson.dumps(second)) + b" " * BIG
    value, problems = _same_either_way(raw)
    assert value == {"a": [first, second]}
    assert [p.where for p in problems] == ["/a"]


@pytest.mark.parametrize(
    "record",
    [
        {_long(PROSE, 2_000_000): 1, "b": _long(PROSE, 2_000_000)},
        {"a": "\x00" + "0" * 16 + "-0", "b": _long(PROSE, 2_000_000)},
        _long(PROSE, 2_000_000),
        [[[_long(LISTING, 2_000_000)]]],
        {"hex": _long("0123456789abcdef", 3_000_000), "accents": _long("éè", 3_000_000)},
    ],
    ids=["long-key", "placeholder-lookalike", "top-level-string", "nested", "no-place-to-cut"],
)
def test_long_keys_and_lookalike_values_read_the_same(record: Any) -> None:
    value, problems = _same_either_way(json.dumps(record).encode() + b" " * BIG)
    assert (value, problems) == (record, [])


def test_an_agentdojo_run_with_a_huge_tool_message_gives_it_whole(tmp_path: Path) -> None:
    content = _long(LISTING, BIG)
    call = {"id": "t1", "function": "read_file", "args": {"file_id": "notes"}}
    run = {
        "suite_name": "workspace",
        "messages": [
            {"role": "user", "content": "Summarise my notes"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "content": content, "tool_call_id": "t1", "tool_call": call, "error": None},
        ],
    }
    path = tmp_path / "run.json"
    path.write_bytes(orjson.dumps(run))
    results = [r for r in read_agentdojo(path) if isinstance(r, ToolResult)]
    assert [r.result for r in results] == [content]


@pytest.mark.parametrize("given", [bytes, bytearray], ids=["bytes", "buffer"])
def test_an_abridged_record_keeps_its_structure_and_the_head_and_tail_of_long_strings(given: Any) -> None:
    text = _long(QUOTED + '\\"quoted\\" ', BIG)
    record = {"to": "a@b.example", "body": text, "n": [1, {"k": "v"}]}
    value, problems = decode_json_record(given(json.dumps(record).encode()), abridge=True)
    assert problems == []
    assert {k: v for k, v in value.items() if k != "body"} == {"to": "a@b.example", "n": [1, {"k": "v"}]}
    head, tail = value["body"].split(ABRIDGED)
    assert text.startswith(head) and text.endswith(tail)
    assert 1_000_000 < len(head) + len(tail) < 3_000_000 < len(text)
    # Below the size of a large record, nothing is abridged.
    small = {"body": text[:100_000]}
    assert decode_json_record(json.dumps(small).encode(), abridge=True)[0] == small


def test_an_otlp_arguments_attribute_as_long_as_a_large_record_is_read_abridged_and_counts_as_cut(
    tmp_path: Path,
) -> None:
    body = _long(PROSE, BIG)
    lines = (Path(__file__).resolve().parents[2] / "samples/otel/genai.jsonl").read_text().splitlines()
    for i, raw in enumerate(lines):
        if "gen_ai.tool.call.arguments" in raw and "send_gmail_message" in raw:
            doc = json.loads(raw)
            for resource in doc["resourceSpans"]:
                for scope in resource["scopeSpans"]:
                    for span in scope["spans"]:
                        for attribute in span.get("attributes", []):
                            if attribute["key"] == "gen_ai.tool.call.arguments":
                                parsed = json.loads(attribute["value"]["stringValue"])
                                if "to" in parsed:  # the send
                                    arguments = {**parsed, "body": body}
                                    attribute["value"] = {"stringValue": json.dumps(arguments)}
            lines[i] = json.dumps(doc)
            break
    else:
        raise AssertionError("the sample has no send span")
    path = tmp_path / "genai.jsonl"
    path.write_text("\n".join(lines) + "\n")
    calls = [
        r
        for r in read_inputs([path], InputFormat.OTLP)
        if isinstance(r, ToolCall) and r.arguments and "body" in r.arguments
    ]
    abridged = [c for c in calls if ABRIDGED in str(c.arguments["body"])]
    assert abridged  # the same span may be read from the client and the server side
    for call in abridged:
        head, tail = call.arguments["body"].split(ABRIDGED)
        assert body.startswith(head) and body.endswith(tail)
        assert set(arguments) <= set(call.arguments)
