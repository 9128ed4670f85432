"""Reading tool results as the structured data they are, and telling free text from listed values.

Who chose a destination depends on where the session first saw it (DESIGN §4): a short value in a listing of
the user's own things (an id, a contact, a channel) is not what an attacker wrote; free text (a message body, a
review, a page, a long or sentence-like value under any key) is. So a result is parsed as what it is: JSON, a
YAML or ``key: value`` dump, an MCP ``CallToolResult`` with content blocks and structured content, prose that
wraps JSON lines; and walked into :class:`TextLeaf` values, each with the key it stood under and whether it
reads as free text. ``_meta`` is protocol, not content, and is skipped.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson
import yaml

_YamlLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# Keys whose values are written prose, and so are what an attacker writes.
FREE_TEXT_KEYS = frozenset(
    [
        "body",
        "content",
        "text",
        "description",
        "message",
        "messages",
        "review",
        "reviews",
        "comment",
        "comments",
        "note",
        "notes",
        "summary",
        "snippet",
        "subject",
        "title",
        "bio",
        "about",
        "details",
        "instructions",
        "data",
        "value",
        "html",
        "markdown",
    ]
)
_FREE_TEXT_MIN_LENGTH = 80
_FREE_TEXT_MIN_WORDS = 6
_MAX_PARSE_CHARS = 2_000_000
_FIELD_NAME = re.compile(r"[\w.$@-]{1,64}")
_WRAPPER = re.compile(r"\A(?:<<|«|```[\w-]*\n)|(?:>>|»|\n```)\Z")
_KEY_VALUE_LINE = re.compile(r"^\s*([A-Za-z_][\w .-]{0,40}):\s+(\S.*)$")


@dataclass(frozen=True, slots=True)
class TextLeaf:
    """One string found in a result, with the key it stood under and whether it reads as free text."""

    key: str
    value: str
    free_text: bool


def is_free_text(key: str, value: str) -> bool:
    """Prose (by its key, its length or its shape) rather than a short structured value."""
    if key.lower() in FREE_TEXT_KEYS or "\n" in value or len(value) >= _FREE_TEXT_MIN_LENGTH:
        return True
    return value.count(" ") + 1 >= _FREE_TEXT_MIN_WORDS


ObjectSink = Callable[[dict[Any, Any]], None]


def iter_leaves(value: Any, key: str = "", on_object: ObjectSink | None = None) -> Iterator[TextLeaf]:
    """Yield every string leaf of a result, parsing strings that hold JSON, YAML or key: value text.

    ``on_object`` is called with every object (mapping) found on the way, once parsed.
    """
    if isinstance(value, str):
        yield from _iter_string(value, key, on_object, whole_result=True)
    else:
        yield from _iter_value(value, key, on_object)


def _iter_value(value: Any, key: str, on_object: ObjectSink | None) -> Iterator[TextLeaf]:
    if isinstance(value, str):
        yield from _iter_string(value, key, on_object)
    elif isinstance(value, dict):
        if isinstance(value.get("content"), list) and value.get("type") is None:
            # An MCP CallToolResult: read its content blocks and structured content, skip protocol fields.
            for block in value["content"]:
                if isinstance(block, dict) and isinstance(block.get("text"), str):
                    yield from _iter_string(block["text"], key, on_object, whole_result=True)
                elif isinstance(block, dict) and isinstance(block.get("resource"), dict):
                    yield from _iter_value(block["resource"].get("text"), key, on_object)
            if "structuredContent" in value:
                yield from _iter_value(value["structuredContent"], key, on_object)
            return
        if on_object is not None:
            on_object(value)
        for k, v in value.items():
            if k == "_meta":
                continue
            name = str(k)
            if _is_data_key(name):
                # A mapping keyed by addresses (``shared_with: {ana@x.example: rw}``) lists them.
                yield TextLeaf(key, name, False)
            yield from _iter_value(v, name, on_object)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _iter_value(item, key, on_object)
    elif value is not None and not isinstance(value, bool):
        yield TextLeaf(key, str(value), False)


def _iter_string(text: str, key: str, on_object: ObjectSink | None, whole_result: bool = False) -> Iterator[TextLeaf]:
    if whole_result or _may_hold_document(text):
        text = _unquote(text)
        parsed = parse_structured(text)
        # Inside a value, prose with a colon ("Your code is: 4638") is prose, not a mapping.
        if parsed is not None and (whole_result or _has_field_names(parsed)):
            yield from _iter_value(parsed, key, on_object)
            return
    yield TextLeaf(key, text, is_free_text(key, text))
    # Prose that wraps data (e.g. query rows between boundary markers): read the data too.
    for document in _embedded_documents(text):
        yield from _iter_value(document, key, on_object)


def _is_data_key(key: str) -> bool:
    return "@" in key or "://" in key


def _has_field_names(document: dict[str, Any] | list[Any]) -> bool:
    items = document if isinstance(document, list) else [document]
    return all(
        not isinstance(item, dict) or all(isinstance(k, str) and _FIELD_NAME.fullmatch(k) for k in item)
        for item in items
    )


def _unquote(text: str) -> str:
    """A result that is itself a JSON string literal stands for the string it encodes."""
    stripped = text.strip()
    if len(stripped) > 1 and stripped[0] == '"' == stripped[-1]:
        try:
            decoded = orjson.loads(stripped)
        except orjson.JSONDecodeError:
            return text
        if isinstance(decoded, str):
            return decoded
    return text


def _embedded_documents(text: str) -> Iterator[dict[str, Any] | list[Any]]:
    if "\n" not in text:
        return
    for line in text.splitlines():
        line = line.strip()
        if len(line) > 2 and line[0] in "[{" and line[-1] in "]}":
            try:
                document = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if isinstance(document, dict | list):
                yield document


def _may_hold_document(text: str) -> bool:
    # A one-line value such as a timestamp or "Re: hello" is a value, not an embedded document.
    head = text.lstrip()[:1]
    return head in ("{", "[") or ("\n" in text and ":" in text) or text.lstrip().startswith("- ")


def parse_structured(text: str) -> dict[str, Any] | list[Any] | None:
    """Parse text that holds a JSON or YAML document or ``key: value`` lines; None for plain prose.

    A document inside a wrapper that prompt-injection defences add (``<< … >>``, a code fence) is read too.
    """
    stripped = _WRAPPER.sub("", text.strip()) if _WRAPPER.search(text) else text.strip()
    if not stripped or len(stripped) > _MAX_PARSE_CHARS:
        return None
    if stripped[0] in "[{":
        try:
            doc = orjson.loads(stripped)
        except orjson.JSONDecodeError:
            pass
        else:
            return doc if isinstance(doc, dict | list) else None
    if ":" not in stripped and not stripped.startswith("- "):
        return None
    try:
        doc = yaml.load(stripped, Loader=_YamlLoader)
    except yaml.YAMLError:
        return _parse_key_value_lines(stripped)
    return doc if isinstance(doc, dict | list) else None


def _parse_key_value_lines(text: str) -> dict[str, Any] | None:
    pairs: dict[str, Any] = {}
    prose: list[str] = []
    for line in text.splitlines():
        m = _KEY_VALUE_LINE.match(line)
        if m:
            pairs.setdefault(m.group(1).strip(), m.group(2).strip())
        elif line.strip():
            prose.append(line)
    if not pairs:
        return None
    if prose:
        pairs["text"] = "\n".join(prose)
    return pairs
