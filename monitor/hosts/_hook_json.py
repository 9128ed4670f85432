"""JSON for the hook client without importing :mod:`json` (imported by the client at every event).

``json`` imports ``re`` and with it ``enum``: a third of the client's start, to encode a few small values and
decode the engine's short reply. The C accelerator under ``json`` (``_json``) does the same work without them;
:func:`loads` and :func:`dumps` give what ``json.loads`` and ``json.dumps`` give (the same value, or a
``ValueError`` where ``json`` raises one), and use ``json`` itself for what they do not cover: an interpreter
without ``_json``, bytes in UTF-16 or UTF-32 or after a byte-order mark, values other than JSON's own types.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_WHITESPACE = " \t\n\r"  # what json's decoder skips around a value


class _Defaults:
    """What ``_json.make_scanner`` reads from its ``json.JSONDecoder``: the defaults of ``json.loads``."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}.__getitem__


_scan: Callable[[str, int], tuple[Any, int]] | None
try:
    from _json import encode_basestring, encode_basestring_ascii, make_scanner

    _scan = make_scanner(_Defaults())  # type: ignore[arg-type]  # a context is any object with these attributes
except (ImportError, AttributeError, TypeError):  # pragma: no cover - another interpreter: json does it all
    _scan = None


def loads(data: bytes) -> Any:
    """``json.loads(data)``: the value, or ``ValueError`` (``RecursionError`` when nested too deep)."""
    if _scan is None or not _is_plain_utf8(data):
        import json

        return json.loads(data)
    text = data.decode("utf-8", "surrogatepass")  # as json.loads decodes bytes
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _scan(text, start)
    except StopIteration:
        raise ValueError("Expecting value") from None
    except RecursionError:
        raise
    except Exception:  # the scanner reports bad text through json.decoder, a SystemError when not imported
        import json

        return json.loads(data)
    if text[end:].lstrip(_WHITESPACE):
        raise ValueError("Extra data")
    return value


def _is_plain_utf8(data: bytes) -> bool:
    """Whether ``json.detect_encoding`` says UTF-8 without a byte-order mark (a NUL in the first two bytes or a
    mark names another encoding)."""
    if not data or not data[0] or (len(data) > 1 and not data[1]):
        return False
    return not data.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff"))


def dumps(value: Any, *, ensure_ascii: bool = True) -> str:
    """``json.dumps(value, ensure_ascii=ensure_ascii)`` (default separators) for a tree of dicts with string
    keys, lists, strings, integers, floats, booleans and None; ``json.dumps`` itself for anything else."""
    if _scan is not None:
        parts: list[str] = []
        if _encode(value, parts, encode_basestring_ascii if ensure_ascii else encode_basestring):
            return "".join(parts)
    import json

    return json.dumps(value, ensure_ascii=ensure_ascii)


def _encode(value: Any, parts: list[str], string: Callable[[str], str]) -> bool:
    """Append the JSON of ``value`` to ``parts``; False when ``value`` holds something this does not cover."""
    kind = type(value)
    if kind is str:
        parts.append(string(value))
    elif value is None:
        parts.append("null")
    elif value is True:
        parts.append("true")
    elif value is False:
        parts.append("false")
    elif kind is int:
        parts.append(int.__repr__(value))
    elif kind is float:
        parts.append(_float(value))
    elif kind is dict:
        parts.append("{")
        for n, (key, item) in enumerate(value.items()):
            if type(key) is not str:
                return False
            parts.append(f"{', ' if n else ''}{string(key)}: ")
            if not _encode(item, parts, string):
                return False
        parts.append("}")
    elif kind is list:
        parts.append("[")
        for n, item in enumerate(value):
            if n:
                parts.append(", ")
            if not _encode(item, parts, string):
                return False
        parts.append("]")
    else:
        return False
    return True


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)
