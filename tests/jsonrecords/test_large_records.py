"""Large records are checked for repeated keys and depth as small ones are, without a walk in Python."""

from __future__ import annotations

import json
from typing import Any

import pytest

from monitor.jsonrecords import MAX_JSON_DEPTH, decode_json_record
from monitor.jsonrecords import _decode as decode_module

PADDING = "x" * 5000  # makes a record large enough to be measured from its text


def nest(depth: int, leaf: Any) -> Any:
    """``leaf`` inside ``depth`` lists."""
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("padding", ["", PADDING])
@pytest.mark.parametrize("space", [" ", ""])
def test_a_repeated_key_is_found_and_every_value_read_in_a_record_of_any_size(padding: str, space: str) -> None:
    # Keys and strings full of escapes: quotes, backslashes, a backslash just before a closing quote. Written
    # compact (no space), the record is what a compact writer would write, but for the repeated key.
    text = (
        (
            '{"to": "a@x.example", "note": "say \\"hi\\": \\\\", "k\\\\": {"a\\"b": 1}, "pad": "'
            + padding
            + '", "to": "b@y.example"}'
        )
        .replace(": ", ":" + space)
        .replace(", ", "," + space)
    )
    value, problems = decode_json_record(text.encode())
    assert value["to"] == ["a@x.example", "b@y.example"]
    assert [(p.where, p.message) for p in problems] == [("/to", "repeats the key 'to'; every value is read")]


@pytest.mark.parametrize("padding", ["", PADDING])
@pytest.mark.parametrize("colon", ["\\u003a", ":"])
def test_a_repeated_key_is_found_beside_strings_that_start_with_a_colon(padding: str, colon: str) -> None:
    # A string opening with a colon looks like a key's end in the indented text; written as an escape it does
    # not in the record as written: the two counts must not cancel the repeated key out.
    text = (
        '{"to": "me@corp.example", "to": "evil@attacker.example", "n": "'
        + colon
        + 'x", "list": ["'
        + colon
        + '", "'
        + colon
        + 'y"], "pad": "'
        + padding
        + '"}'
    )
    value, problems = decode_json_record(text.encode())
    assert value["to"] == ["me@corp.example", "evil@attacker.example"]
    assert [(p.where, p.message) for p in problems] == [("/to", "repeats the key 'to'; every value is read")]
    assert decode_module._measure_large({"a": ': "', "pad": PADDING}) in (None, (2, MAX_JSON_DEPTH))


@pytest.mark.parametrize("padding", ["", PADDING])
def test_escaped_quotes_before_colons_are_no_repeated_keys(padding: str, monkeypatch: pytest.MonkeyPatch) -> None:
    record = {
        "a": 'he said "x": \\"y\\": and left \\',
        "b\\": {'c"': ['"\\": ' * 50, {"d": padding}]},
        "e": [{"f": "\\" * 3 + '": '}] * 30,
    }
    slow_decodes: list[Any] = []
    original = decode_module._load_with_repeats

    def spy(data: Any, fallback: Any) -> Any:
        slow_decodes.append(data)
        return original(data, fallback)

    monkeypatch.setattr(decode_module, "_load_with_repeats", spy)
    for text in (json.dumps(record), json.dumps(record, indent=2), json.dumps(record, separators=(",", ":"))):
        value, problems = decode_json_record(text.encode())
        assert value == record and problems == []
    if padding:  # a large record is measured from its text: its keys are counted exactly, no slow decode
        assert slow_decodes == []


@pytest.mark.parametrize("padding", ["", PADDING])
@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1, 300])
@pytest.mark.parametrize(("deepest", "as_text"), [({"leaf": "value"}, "leaf\nvalue"), ([], "")])
@pytest.mark.parametrize("separators", [(", ", ": "), (",", ":")])
def test_nesting_beyond_the_bound_is_read_as_text_in_a_record_of_any_size(
    depth: int, padding: str, deepest: Any, as_text: str, separators: tuple[str, str]
) -> None:
    record = {"pad": padding, "deep": nest(depth - 2, deepest)}  # depth levels in all, ``deepest`` the last
    text = json.dumps(record, separators=separators) if depth < 250 else json.dumps(record)
    value, problems = decode_json_record(text.encode())
    if depth <= MAX_JSON_DEPTH:
        assert value == record and problems == []
    else:
        assert len(problems) == 1 and "nested deeper than" in problems[0].message
        inner, levels = value["deep"], 2
        while isinstance(inner, list):
            inner, levels = inner[0], levels + 1
        assert inner == as_text  # the container beyond the bound, as the text of its leaves
        assert levels == MAX_JSON_DEPTH + 1
