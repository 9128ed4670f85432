"""The hook client's JSON (``monitor.hosts._hook_json``): what ``json.loads`` and ``json.dumps`` give, without
importing ``json``."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.hosts._hook_json import dumps, loads

SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text()
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner), max_leaves=30)


def same(a: Any, b: Any) -> bool:
    """Equal, NaN equal to NaN."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def outcome(parse: Any, data: bytes) -> tuple[str, Any]:
    """The value ``parse`` gives, or the kind of error it raises."""
    try:
        return "value", parse(data)
    except RecursionError:
        return "error", RecursionError
    except ValueError:
        return "error", ValueError


def assert_loads_like_json(data: bytes) -> None:
    ours, theirs = outcome(loads, data), outcome(json.loads, data)
    assert ours[0] == theirs[0], (data, ours, theirs)
    assert same(ours[1], theirs[1]), (data, ours, theirs)


@settings(max_examples=300, deadline=None)
@given(VALUES, st.booleans())
def test_dumps_writes_what_json_dumps_writes(value: Any, ensure_ascii: bool) -> None:
    assert dumps(value, ensure_ascii=ensure_ascii) == json.dumps(value, ensure_ascii=ensure_ascii)


@settings(max_examples=300, deadline=None)
@given(VALUES, st.sampled_from(["", " ", "\n", " \t\r\n"]))
def test_loads_reads_what_json_writes(value: Any, space: str) -> None:
    assert_loads_like_json(f"{space}{json.dumps(value, ensure_ascii=False)}{space}".encode())


@settings(max_examples=500, deadline=None)
@given(
    st.binary(max_size=40) | st.text(alphabet='{}[]",:0123456789.eE+-tfnaulrsNIy \\\n\x00', max_size=40).map(str.encode)
)
def test_loads_accepts_and_refuses_what_json_loads_does(data: bytes) -> None:
    assert_loads_like_json(data)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"   ",
        b"{}",
        b'{"a": 1} x',
        b'{"a": 1}{}',
        b'{"a": NaN, "b": -Infinity, "c": Infinity}',
        b'"\xff"',
        b'"\xed\xa0\x80"',  # a lone surrogate, which json reads with surrogatepass
        b'"a\x01b"',  # a control character in a string: refused (strict)
        b"\xef\xbb\xbf{}",  # a UTF-8 byte-order mark
        '{"a": "é"}'.encode("utf-16"),
        '{"a": "é"}'.encode("utf-16-le"),
        '{"a": "é"}'.encode("utf-32-be"),
        b"1e400",
        b"-0",
        b"[" * 100_000 + b"]" * 100_000,  # deeper than the interpreter allows
    ],
)
def test_loads_agrees_with_json_at_the_edges(data: bytes) -> None:
    assert_loads_like_json(data)


def test_dumps_hands_other_values_to_json() -> None:
    for value in [(1, 2), {1: "a"}, {"a": (None,)}, [float("nan"), float("-inf")]]:
        assert dumps(value) == json.dumps(value)
    with pytest.raises(TypeError):
        dumps({"a": object()})


def test_loads_refuses_bad_json_in_a_process_without_json() -> None:
    """The hook client has not imported ``json``: a payload cut short is still a ``ValueError`` (the C scanner
    raises its errors through ``json.decoder``, and fails otherwise on Python 3.11)."""
    code = (
        "import sys\n"
        "from monitor.hosts._hook_json import loads\n"
        "assert 'json' not in sys.modules\n"
        "for bad in [b'{\"a\": ', b'[1, 2', b'{\"a\" 1}', b'\"abc', b'[1,]', b'{\"a\": 1}x', b'x']:\n"
        "    try:\n"
        "        loads(bad)\n"
        "    except ValueError:\n"
        "        continue\n"
        "    raise SystemExit(f'{bad!r} was read')\n"
        "print(loads(b' {\"a\": [1, 2.5, null]} '))\n"
    )
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "{'a': [1, 2.5, None]}\n"
