"""Decoding one JSON record at the boundary: repeated keys found and kept, depth bounded, never recursion.

Every reader decodes its records here (:func:`decode_json_record`), and span attributes that hold JSON text
are decoded the same way. Two things a plain ``orjson.loads`` hides are
brought out, as :class:`JsonProblem` values the reader reports as input errors naming the record:

- **Repeated keys** (``{"to": "a@x.example", "to": "b@y.example"}``): JSON parsers keep the last value, so
  the first would go unseen. The record is reported, and read with *every* value of the repeated key: two
  objects are merged (their own repeated keys the same way), two arrays are joined, and anything else
  becomes the array of the values (``"to": ["a@x.example", "b@y.example"]``), so the engine examines all
  of them. Finding them costs one count over the bytes (every key is a string followed by ``:``) and one
  over the decoded keys; the slow decode that sees the repeats runs only when the two counts differ.
- **Nesting deeper than** :data:`MAX_JSON_DEPTH`: each container at that depth is replaced by the text of its
  leaves (one per line), so no later step walks an unbounded depth and no leaf is dropped.

Every walk here is iterative.
"""

from __future__ import annotations

import itertools
import json
import re
import secrets
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

__all__ = ["ABRIDGED", "LARGE_RECORD", "MAX_JSON_DEPTH", "JsonProblem", "decode_json_record", "flatten_json_text"]

MAX_JSON_DEPTH = 100
"""Containers nested deeper than this are read as the text of their leaves."""

LARGE_RECORD = 16 * 1024 * 1024
"""Records this large (in bytes) given as a ``bytearray`` have their long strings decoded apart, in place.
A reader hands such a record over as a ``bytearray`` and keeps no other copy of it."""

_MAX_POINTER = 120
_KEY_END = re.compile(rb'"[ \t\r\n]+:')
_KEY_EXACT = re.compile(rb'(?<!\\)(?:\\\\)*"[ \t\r\n]*:')
_KEY_EXACT_SPACED = re.compile(rb'(?<!\\)(?:\\\\)*"[ \t\r\n]+:')
_KEY_PATTERNS_TEXT = tuple(re.compile(p.pattern.decode()) for p in (_KEY_END, _KEY_EXACT, _KEY_EXACT_SPACED))
_MAX_RUN = 8
_LONG_STRING = 1024 * 1024
"""A string value this long (in bytes, as written) is decoded apart in a record of :data:`LARGE_RECORD` bytes."""
_PIECE = 1024 * 1024
_LONG_RUN = re.compile(rb'"[^"]{%d,}(?=")' % _LONG_STRING)
_BACKSLASH = 0x5C
_SPACES: dict[bool, tuple[Any, ...]] = {False: (b" ", b"\t", b"\r", b"\n"), True: (" ", "\t", "\r", "\n")}
_LARGE_MEASURE = 4096
"""A record this long (bytes or characters, as written) is measured from its ``orjson`` text, not walked."""
_DEEP_LINE = b"\n" + b" " * (2 * MAX_JSON_DEPTH)
_COLON_STRING = re.compile(rb'\n *":')
ABRIDGED = "\n…\n"
"""What stands for the middle left out of a string decoded with ``abridge``."""
_NOT_AN_END = frozenset(b"\\u0123456789abcdefABCDEF") | frozenset(range(0x80, 0x100))
"""Bytes a piece of a string never ends on: they may be inside an escape or a UTF-8 character."""


@dataclass(frozen=True, slots=True)
class JsonProblem:
    """Something a record says ambiguously or too deeply: ``where`` is a JSON pointer into the record."""

    where: str
    message: str

    def __post_init__(self) -> None:
        if len(self.where) > _MAX_POINTER:
            object.__setattr__(self, "where", self.where[: _MAX_POINTER - 1] + "…")


def decode_json_record(data: bytes | bytearray | str, *, abridge: bool = False) -> tuple[Any, list[JsonProblem]]:
    """Decode one JSON record; return the value and its problems (repeated keys, too deep nesting).

    Raises ``orjson.JSONDecodeError`` when ``data`` is not JSON, as ``orjson.loads`` does.

    A ``bytearray`` is taken over: it serves as working space and is left empty. In a record of
    :data:`LARGE_RECORD` bytes or more, each long string value (:data:`_LONG_STRING` bytes or more, escaped quotes
    and all) is then decoded apart, piece by piece into the buffer's own room, so the record's memory is the
    buffer and its strings, not also a parser's copy of it all. With ``abridge``, each such string is kept as
    its first and last pieces (about a MiB each) around ``"\\n…\\n"``: for values read only by their head and
    tail, whose whole would be one more copy.
    """
    if isinstance(data, bytearray):
        try:
            return _decode_buffer(data, abridge)
        finally:
            data.clear()
    if abridge and isinstance(data, bytes):
        return _decode_buffer(data, abridge)
    return _finish_record(data, orjson.loads(data), data, None)


def _finish_record(
    text: bytes | bytearray | str, value: Any, written: bytes | bytearray | str, fill: Callable[[Any], Any] | None
) -> tuple[Any, list[JsonProblem]]:
    """Check a value decoded from ``text`` by ``orjson``: repeated keys (counted in ``written``, the record
    as written), then ``fill`` (which puts back what ``text`` left out), then the depth."""
    if not isinstance(value, dict | list):
        return (value if fill is None else fill(value)), []
    problems: list[JsonProblem] = []
    if len(text) >= _LARGE_MEASURE and text is written and _is_compact_text(value, written):
        # Written exactly as the value's own compact text: no key was repeated (its text would be longer).
        depth = _measure_large_depth(value) or _measure(value)[1]
    else:
        keys, depth = (_measure_large(value) if len(text) >= _LARGE_MEASURE else None) or _measure(value)
        if _count_keys_written(written, keys) > keys:
            value, problems = _load_with_repeats(text, value)
    if fill is not None:
        value = fill(value)
    if depth > MAX_JSON_DEPTH:
        value, deep = _cut_depth(value)
        problems.extend(deep)
    return value, problems


def _count_keys_written(data: bytes | bytearray | str, decoded: int) -> int:
    """The number of keys written in ``data``, or more (never less): compared with ``decoded``, the keys left
    once decoded, a larger count means keys may repeat.

    Every key is a string whose closing quote is followed by optional white space and a colon. The quick count
    takes every quote followed by a colon; when it is larger than ``decoded``, quotes escaped by an odd run of
    backslashes (``\\":`` inside a string) are taken off. Each count is a scan of the bytes.
    """
    if isinstance(data, str):  # counted as text: no encoded copy of a long attribute value
        return _count_keys(data, '":', "\\", _KEY_PATTERNS_TEXT, decoded)
    return _count_keys(data, b'":', b"\\", (_KEY_END, _KEY_EXACT, _KEY_EXACT_SPACED), decoded)


def _count_keys(raw: Any, key_end: Any, backslash: Any, patterns: tuple[re.Pattern[Any], ...], decoded: int) -> int:
    """:func:`_count_keys_written` on bytes or text, with the markers and patterns of that type."""
    end, exact, exact_spaced = patterns
    tight: int = raw.count(key_end)
    if len(raw) < _LARGE_MEASURE:
        spaced = _count(end, raw)
    else:  # a quote followed by white space is rare in compact JSON: four quick searches before the pattern's
        quote = key_end[:1]
        spaced = _count(end, raw) if any(quote + space in raw for space in _SPACES[type(raw) is str]) else 0
    if tight + spaced <= decoded:
        return tight + spaced
    if not spaced and len(raw) >= _LARGE_MEASURE:
        # With the escaped backslashes taken out, every backslash left escapes what follows it: a key ends at a
        # quote followed by a colon, but for an escaped quote. Two counts, whatever the runs of backslashes.
        pair = backslash + backslash
        plain = raw.replace(pair, raw[:0]) if pair in raw else raw
        return int(plain.count(key_end) - plain.count(backslash + key_end))
    escaped = 0
    sign = 1
    run = backslash
    while (found := raw.count(run + key_end)) > 0:
        if len(run) > _MAX_RUN:  # long runs of backslashes: one exact pass instead of a scan per length
            return _count(exact, raw)
        escaped += sign * found
        sign = -sign
        run += backslash
    if spaced:
        return tight - escaped + _count(exact_spaced, raw)
    return tight - escaped


def _count(pattern: re.Pattern[Any], raw: Any) -> int:
    """The matches of ``pattern`` in ``raw``, counted one by one (no list of them)."""
    return sum(1 for _ in pattern.finditer(raw))


def _decode_buffer(buf: bytes | bytearray, abridge: bool = False) -> tuple[Any, list[JsonProblem]]:
    """Decode a record the caller gives away, its long strings apart (:func:`decode_json_record`).

    The rest of the record, with a placeholder for each long string, is decoded and checked as every record
    is; each long string is decoded piece by piece into the room it took in ``buf`` and put in its place.
    Whenever this cannot be done exactly (a placeholder not found once as a value, a piece that is not JSON
    text), the record is decoded whole instead, so the value and its errors are the same either way.
    """
    spans = _find_long_strings(buf) if len(buf) >= LARGE_RECORD else []
    if not spans:
        return _finish_record(buf, orjson.loads(buf), buf, None)
    nonce = secrets.token_hex(8)
    names = [f"\x00{nonce}-{i}" for i in range(len(spans))]
    with memoryview(buf) as view:
        parts: list[bytes | memoryview] = []
        start = 0
        for i, ends in enumerate(spans):
            parts.extend((view[start : ends[0]], b"\\u0000%s-%d" % (nonce.encode(), i)))
            start = ends[-1]
        parts.append(view[start:])
        skeleton = b"".join(parts)
        del parts
    try:
        value = orjson.loads(skeleton)
        exact = sorted(_place(value, {})[0]) == sorted(names) and all(_decode_pieces(buf, e, False) for e in spans)
    except orjson.JSONDecodeError:
        exact = False
    if not exact:
        return _finish_record(buf, orjson.loads(buf), buf, None)

    def fill(found: Any) -> Any:
        strings = {
            name: _read_pieces(buf, ends[:2]) + ABRIDGED + _read_pieces(buf, ends[-2:])
            if abridge and len(ends) > 3
            else _read_pieces(buf, ends)
            if abridge or isinstance(buf, bytes)
            else _decode_pieces(buf, ends, True)
            for name, ends in zip(names, spans, strict=True)
        }
        return _place(found, strings)[1]

    return _finish_record(skeleton, value, buf, fill)


def _find_long_strings(buf: bytes | bytearray) -> list[list[int]]:
    """The runs of ``buf`` that may be long strings (:data:`_LONG_STRING` bytes or more between two quotes),
    each as the offsets that cut it in pieces: its first byte, then the end of each piece (the last is the
    quote after it). No piece ends inside an escape or a UTF-8 character; a run that cannot be cut so is left
    out. Whether a run is a string value is told by decoding the record with it left out
    (:func:`_decode_buffer`).

    Without an escaped quote in ``buf``, a run is a stretch with no quote at all (one scan); else the quotes
    no backslash escapes are paired in order, as they open and close strings in JSON text."""
    if b'\\"' not in buf:
        runs: Iterable[tuple[int, int]] = ((m.start() + 1, m.end()) for m in _LONG_RUN.finditer(buf))
    else:
        quotes = _iter_unescaped_quotes(buf)
        runs = ((start + 1, end) for start, end in zip(quotes, quotes, strict=False) if end - start > _LONG_STRING)
    spans: list[list[int]] = []
    for first, last in runs:
        ends = [first]
        while ends[-1] + _PIECE < last:
            end = ends[-1] + _PIECE
            while end > ends[-1] and buf[end - 1] in _NOT_AN_END:
                end -= 1
            if end == ends[-1]:
                break
            ends.append(end)
        else:
            ends.append(last)
            spans.append(ends)
    return spans


def _iter_unescaped_quotes(buf: bytes | bytearray) -> Iterator[int]:
    """The offsets of the quotes in ``buf`` that no backslash escapes (after none, or after an even run)."""
    at = buf.find(b'"')
    while at >= 0:
        start = at
        while start > 0 and buf[start - 1] == _BACKSLASH:
            start -= 1
        if (at - start) % 2 == 0:
            yield at
        at = buf.find(b'"', at + 1)


def _read_pieces(buf: bytes | bytearray, ends: list[int]) -> str:
    """The string cut at ``ends``, decoded piece by piece without writing into ``buf``."""
    with memoryview(buf) as view:
        return "".join(orjson.loads(b"".join((b'"', view[a:b], b'"'))) for a, b in itertools.pairwise(ends))


def _decode_pieces(buf: bytes | bytearray, ends: list[int], write: bool) -> str:
    """Decode the string cut at ``ends`` piece by piece; with ``write``, the UTF-8 of each decoded piece is
    written over the string's room in ``buf`` (never longer than what it decodes) and the string returned,
    else only checked (anything non-empty when every piece is JSON text).

    Raises ``orjson.JSONDecodeError`` for a piece that is not JSON string text.
    """
    with memoryview(buf) as view:
        at = ends[0]
        for start, end in itertools.pairwise(ends):
            text: str = orjson.loads(b"".join((b'"', view[start:end], b'"')))
            if write:
                encoded = text.encode()
                view[at : at + len(encoded)] = encoded
                at += len(encoded)
        return str(view[ends[0] : at], "utf-8") if write else "checked"


def _place(value: Any, strings: dict[str, str]) -> tuple[list[str], Any]:
    """The placeholders found as values in ``value`` (a walk), and ``value`` with each one found in
    ``strings`` replaced by its string."""
    found: list[str] = []
    if isinstance(value, str):
        return [value], strings.get(value, value)
    stack: list[Any] = [value]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, item in list(items):
            if isinstance(item, dict | list):
                stack.append(item)
            elif isinstance(item, str) and item.startswith("\x00"):
                found.append(item)
                if item in strings:
                    node[key] = strings[item]
    return found, value


def _is_compact_text(value: Any, written: bytes | bytearray | str) -> bool:
    """Whether ``written`` is, byte for byte, the compact ``orjson`` text of ``value`` (as many writers of
    large records write them)."""
    if isinstance(written, str):
        return False
    try:
        return orjson.dumps(value) == written
    except orjson.JSONEncodeError:
        return False


def _measure_large_depth(value: dict[str, Any] | list[Any]) -> int | None:
    """The depth of :func:`_measure_large`, alone: :data:`MAX_JSON_DEPTH` when it is at most that, else None."""
    try:
        text = orjson.dumps(value, option=orjson.OPT_INDENT_2)
    except orjson.JSONEncodeError:
        return None
    return None if _DEEP_LINE in text else MAX_JSON_DEPTH


def _measure_large(value: dict[str, Any] | list[Any]) -> tuple[int, int] | None:
    """:func:`_measure` of a large value, from its indented ``orjson`` text instead of a walk in Python; None
    when that text cannot tell (a walk is needed).

    In that text no key repeats (the value is decoded already), a backslash always starts an escape and a
    quote inside a string is always escaped: once the escaped backslashes (two backslashes) are taken out,
    the keys are the quotes followed by a colon but for the escaped ones (a backslash before the quote).
    Each element of a container at depth ``d`` starts a line indented by ``2 * d`` spaces (no string holds a
    raw line break), so a line indented by ``2 * MAX_JSON_DEPTH`` spaces is the only sign of a container
    nested deeper than :data:`MAX_JSON_DEPTH`: without one, the depth returned is that bound (only ever
    compared with it); with one, a walk measures it.
    """
    try:
        text = orjson.dumps(value, option=orjson.OPT_INDENT_2)
    except orjson.JSONEncodeError:  # nested beyond orjson's own limit
        return None
    if _DEEP_LINE in text:
        return None
    if b"\\\\" in text:
        text = text.replace(b"\\\\", b"")
    if b'": ":' in text or _COLON_STRING.search(text):
        # A string that starts with a colon opens with the same two bytes as a key's end: walk instead.
        return None
    return text.count(b'":') - text.count(b'\\":'), MAX_JSON_DEPTH


def _measure(value: dict[str, Any] | list[Any]) -> tuple[int, int]:
    """The number of keys of every object in ``value``, and its nesting depth (a walk level by level)."""
    keys = 0
    depth = 0
    level: list[Any] = [value]
    while level:
        depth += 1
        below: list[Any] = []
        for node in level:
            if isinstance(node, dict):
                keys += len(node)
                below.extend(v for v in node.values() if isinstance(v, dict | list))
            else:
                below.extend(v for v in node if isinstance(v, dict | list))
        level = below
    return keys, depth


class _Repeated(dict[str, Any]):
    """An object that repeated some of its keys: ``repeated`` names them."""

    repeated: list[str]


def _pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    repeated: list[str] = []
    for key, value in pairs:
        if key in out:
            if key not in repeated:
                repeated.append(key)
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    if not repeated:
        return out
    marked = _Repeated(out)
    marked.repeated = repeated
    return marked


def _merge(first: Any, second: Any) -> Any:
    """Both values of a repeated key, kept: objects merged, arrays joined, else the array of both."""
    if isinstance(first, _ValuesOf):
        return _ValuesOf([*first, second])
    if isinstance(first, dict) and isinstance(second, dict):
        merged = dict(first)
        for key, value in second.items():
            merged[key] = _merge(merged[key], value) if key in merged else value
        return merged
    if isinstance(first, list) and isinstance(second, list):
        return [*first, *second]
    return _ValuesOf([first, second])


class _ValuesOf(list[Any]):
    """The values of one repeated key, in order."""


def _load_with_repeats(data: bytes | bytearray | str, fallback: Any) -> tuple[Any, list[JsonProblem]]:
    """Decode again, seeing repeated keys; plain dicts and lists come out, with the problems found."""
    try:
        value = json.loads(data, object_pairs_hook=_pairs_hook, parse_int=_parse_int)
    except (ValueError, RecursionError):  # nested too deeply for the stdlib decoder
        return fallback, [
            JsonProblem("", "may repeat keys, but is nested too deeply to check; the last values are read")
        ]
    problems: list[JsonProblem] = []
    root: list[Any] = [value]
    stack: list[tuple[Any, Any, str]] = [(root, 0, "")]
    while stack:
        parent, key, where = stack.pop()
        node = parent[key]
        if isinstance(node, _Repeated):
            problems.extend(
                JsonProblem(f"{where}/{_escape(k)}", f"repeats the key {k!r}; every value is read")
                for k in node.repeated
            )
            node = parent[key] = dict(node)
        elif isinstance(node, _ValuesOf):
            node = parent[key] = list(node)
        if isinstance(node, dict):
            stack.extend((node, k, f"{where}/{_escape(k)}") for k in node)
        elif isinstance(node, list):
            stack.extend((node, i, f"{where}/{i}") for i in range(len(node)))
    problems.sort(key=lambda p: p.where)
    return root[0], problems


def _parse_int(text: str) -> int | float:
    """Integers as ``orjson`` reads them: exact within 64 bits, else a float (never a 4,300-digit error)."""
    if len(text) <= 20:
        number = int(text)
        if -(2**63) <= number < 2**64:
            return number
    return float(text)


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _cut_depth(value: Any) -> tuple[Any, list[JsonProblem]]:
    """Replace each container at :data:`MAX_JSON_DEPTH` by the text of its leaves."""
    problems: list[JsonProblem] = []
    root: list[Any] = [value]
    stack: list[tuple[Any, Any, str, int]] = [(root, 0, "", 0)]
    while stack:
        parent, key, where, level = stack.pop()
        node = parent[key]
        if not isinstance(node, dict | list):
            continue
        if level >= MAX_JSON_DEPTH:
            parent[key] = flatten_json_text(node)
            if not problems:
                problems.append(
                    JsonProblem(
                        where, f"nested deeper than {MAX_JSON_DEPTH} levels; the deeper part is read as its text"
                    )
                )
            continue
        if isinstance(node, dict):
            stack.extend((node, k, f"{where}/{_escape(k)}", level + 1) for k in node)
        else:
            stack.extend((node, i, f"{where}/{i}", level + 1) for i in range(len(node)))
    return root[0], problems


def flatten_json_text(value: Any) -> str:
    """The keys and leaves of ``value`` as text, one per line, in document order (an iterative walk)."""
    parts: list[str] = []
    stack: list[Any] = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for k, v in reversed(list(node.items())):
                stack.append(v)
                stack.append(_Key(k))
        elif isinstance(node, list):
            stack.extend(reversed(node))
        elif isinstance(node, _Key):
            parts.append(node.name)
        elif node is not None:
            parts.append(node if isinstance(node, str) else json.dumps(node))
    return "\n".join(parts)


@dataclass(frozen=True, slots=True)
class _Key:
    name: str
