"""Repeated keys and nesting depth in one JSON record: every value of a repeated key kept, the deep part read as
text, each reported where it is."""

from __future__ import annotations

import json
from typing import Any

import pytest

from monitor.jsonrecords import MAX_JSON_DEPTH, decode_json_record


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"a": {"x": 1}, "a": {"y": 2}}', {"a": {"x": 1, "y": 2}}),
        ('{"a": [1], "a": [2]}', {"a": [1, 2]}),
        ('{"a": 1, "a": 2, "a": 3}', {"a": [1, 2, 3]}),
        ('{"a": 1, "b": {"c": 1, "c": [2]}}', {"a": 1, "b": {"c": [1, [2]]}}),
    ],
)
@pytest.mark.parametrize(
    "given", [str.encode, str, lambda text: bytearray(text.encode())], ids=["bytes", "text", "buffer"]
)
def test_repeated_keys_keep_every_value(text: str, value: Any, given: Any) -> None:
    got, problems = decode_json_record(given(text))

    assert got == value
    assert problems and all("repeats the key" in p.message for p in problems)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": "x\\": y", "b": "\\"c\\" : 1"}',  # strings that look like keys
        '{"a" : 1, "b"\t:\t2, "c"\n:3}',  # space before the colon
        '[{"a": 1}, {"a": 2}]',  # the same key in two objects
    ],
)
@pytest.mark.parametrize(
    "given", [str.encode, str, lambda text: bytearray(text.encode())], ids=["bytes", "text", "buffer"]
)
def test_no_repeat_is_reported_where_there_is_none(text: str, given: Any) -> None:
    got, problems = decode_json_record(given(text))

    assert got == json.loads(text) and problems == []


def test_depth_beyond_the_bound_is_read_as_text_and_reported() -> None:
    deep = "[" * (MAX_JSON_DEPTH + 50) + '"leaf"' + "]" * (MAX_JSON_DEPTH + 50)
    shallow = "[" * MAX_JSON_DEPTH + '"leaf"' + "]" * MAX_JSON_DEPTH

    got, problems = decode_json_record(deep.encode())
    assert len(problems) == 1 and "nested deeper than" in problems[0].message
    node = got
    for _ in range(MAX_JSON_DEPTH - 1):
        node = node[0]
    assert node == ["leaf"] or node == "leaf"
    assert decode_json_record(shallow.encode())[1] == []


@pytest.mark.parametrize("digits", ["99999999999999999999", "1" + "0" * 30, "9" * 300])
def test_numbers_read_where_keys_repeat_are_what_orjson_reads_elsewhere(digits: str) -> None:
    value, problems = decode_json_record(f'{{"a": 1, "a": 2, "n": {digits}}}'.encode())

    assert value["a"] == [1, 2] and isinstance(value["n"], float)  # never an int orjson could not write back
    assert [p.where for p in problems] == ["/a"]
