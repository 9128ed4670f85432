"""Reading tool results as the structured data they are, and telling free text from listed values.

Who chose a destination depends on where the session first saw it (docs/design.md, "Destinations and evidence"): a short
value in a listing of the user's own things (an id, a contact, a channel) is not what an attacker wrote; free text (a
message body, a review, a page, a long or sentence-like value under any key) is. So a result is parsed as what it is:
JSON, a YAML or ``key: value`` dump, the ``repr`` of Python values that servers written in Python often return
(``{'name': 'x', 'stars': "['a', 'b']"}``, ``Issue(author='ana@x.example', ...)``), an MCP ``CallToolResult`` with
content blocks and structured content, prose that wraps JSON lines; and walked into :class:`TextLeaf` values, each with
the key it stood under and whether it reads as free text. ``_meta`` is protocol, not content, and is skipped.

Every result is attacker-controlled, so reading one is bounded (:class:`ReadBounds`), and every bound is
checked before the work it limits:

- size: text longer than ``max_parse_chars`` is not parsed (JSON), nor longer than ``max_yaml_chars`` as YAML,
  a Python ``repr`` or ``key: value`` lines; it is read as text;
- nesting: text whose brackets nest deeper than ``max_depth`` is not parsed (the parsers' own limits, 1024
  for JSON and 1000 for YAML, stand behind it; a Python ``repr`` counts parentheses too);
- aliases: a YAML document whose aliases would add more than ``max_alias_nodes`` values once expanded, or
  that refers to a node still open (a cycle), is not built: it is read as the text it is, where every
  anchored value appears once;
- work: the walk is iterative (no recursion, whatever the depth) and visits at most ``max_nodes`` values;
- characters: at most ``max_chars`` characters of one result are examined; a longer string is examined by its
  head and its tail.

What a bound left out is recorded in a :class:`Reading` (``truncated``): the caller counts it as possibly
carrying data, never as clean.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson
import yaml

from monitor.evidence._memo import memoize_text

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
_FIELD_NAME = re.compile(r"[\w.$@-]{1,64}")
_WRAPPER = re.compile(r"\A(?:<<|«|```[\w-]*\n)|(?:>>|»|\n```)\Z")
_KEY_VALUE_LINE = re.compile(r"^\s*([A-Za-z_][\w .-]{0,40}):\s+(\S.*)$")
_DOCUMENT_HEAD = re.compile(r"\s*(?:[\[{]|- )")
_BRACKET = re.compile(r"[\[\]{}]")
_REPR_BRACKET = re.compile(r"[\[\]{}()]")
# The start of a Python ``repr``: a collection, or a constructor with keyword fields (``Issue(author=``).
_REPR_HEAD = re.compile(r"[\[{(]|[A-Za-z_]\w{0,63}\(\s*(?:[A-Za-z_]\w{0,63}\s*=|\))")
# YAML errors, and what PyYAML's constructors raise on values they cannot build (a 13th month, an integer of
# more digits than Python converts).
_PARSE_ERRORS = (yaml.YAMLError, ValueError, OverflowError, TypeError, RecursionError)


@dataclass(frozen=True, slots=True)
class ReadBounds:
    """The limits on reading one result (the module docstring says what each bounds and when it applies)."""

    max_chars: int = 1_000_000
    """Characters of one result examined; a longer string is examined by its head and tail."""
    max_parse_chars: int = 1_000_000
    """Longest text parsed as JSON."""
    max_yaml_chars: int = 200_000
    """Longest text parsed as YAML or ``key: value`` lines."""
    max_depth: int = 128
    """Deepest bracket nesting parsed."""
    max_alias_nodes: int = 10_000
    """Values YAML aliases may add once expanded."""
    max_nodes: int = 200_000
    """Values visited in one result."""


@dataclass(slots=True)
class Reading:
    """One result being read, and the tally of what reading it cost and what it left unexamined.

    Pass a ``Reading`` wherever a result goes to :func:`iter_leaves` (directly, or through an index that reads
    results with it): the walk uses its ``bounds`` and records its work in it.
    """

    result: Any
    bounds: ReadBounds = field(default_factory=ReadBounds)
    nodes: int = 0
    """Values visited so far."""
    chars: int = 0
    """Characters examined so far."""
    truncated: bool = False
    """A bound left part of the result unexamined: count it as possibly carrying data."""


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
# What the walk still has to do: a value to read (with its key and whether it is a whole result), or a leaf.
_Item = tuple[Any, str, bool] | TextLeaf


def iter_leaves(value: Any, key: str = "", on_object: ObjectSink | None = None) -> Iterator[TextLeaf]:
    """Yield the string leaves of a result, parsing strings that hold JSON, YAML or key: value text, within the
    bounds of :class:`ReadBounds`. ``value`` may be a :class:`Reading`, which then records the work done and
    whether a bound left something out.

    ``on_object`` is called with every object (mapping) found on the way, once parsed.
    """
    reading = value if isinstance(value, Reading) else Reading(value)
    return _walk(reading, key, on_object)


def _walk(reading: Reading, key: str, on_object: ObjectSink | None) -> Iterator[TextLeaf]:
    bounds = reading.bounds
    stack: list[_Item] = [(reading.result, key, isinstance(reading.result, str))]
    while stack:
        item = stack.pop()
        if isinstance(item, TextLeaf):
            yield item
            continue
        value, name, whole = item
        if reading.nodes >= bounds.max_nodes:
            reading.truncated = True
            return
        reading.nodes += 1
        if isinstance(value, str):
            stack.extend(reversed(_read_string(reading, value, name, whole)))
        elif isinstance(value, dict):
            stack.extend(reversed(_read_mapping(reading, value, name, on_object)))
        elif isinstance(value, list | tuple):
            stack.extend((element, name, False) for element in reversed(_head(reading, value)))
        elif value is not None and not isinstance(value, bool):
            stack.extend(reversed(_leaves(reading, name, _scalar_text(reading, value), False)))


def _head(reading: Reading, items: list[Any] | tuple[Any, ...]) -> list[Any] | tuple[Any, ...]:
    """The items the node budget still covers (the rest will not be visited: the reading is truncated)."""
    room = reading.bounds.max_nodes - reading.nodes
    if len(items) <= room:
        return items
    reading.truncated = True
    return items[: max(room, 0)]


def _read_mapping(reading: Reading, value: dict[Any, Any], key: str, on_object: ObjectSink | None) -> list[_Item]:
    if isinstance(value.get("content"), list) and value.get("type") is None:
        # An MCP CallToolResult: read its content blocks and structured content, skip protocol fields.
        items: list[_Item] = []
        for block in _head(reading, value["content"]):
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                items.append((block["text"], key, True))
            elif isinstance(block, dict) and isinstance(block.get("resource"), dict):
                items.append((block["resource"].get("text"), key, False))
        if "structuredContent" in value:
            items.append((value["structuredContent"], key, False))
        return items
    pairs = [(k, v) for k, v in _head(reading, list(value.items())) if k != "_meta"]
    named = [(_scalar_text(reading, k), v) for k, v in pairs]
    if on_object is not None:
        on_object(value if all(type(k) is str for k in value) else dict(named))
    items = []
    for name, v in named:
        if _is_data_key(name):
            # A mapping keyed by addresses (``shared_with: {ana@x.example: rw}``) lists them.
            items.extend(_leaves(reading, key, name, False))
        items.append((v, name, False))
    return items


def _scalar_text(reading: Reading, value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return str(value)
    except ValueError:  # an integer of more digits than Python converts: its digits go unexamined
        reading.truncated = True
        return f"<integer of {value.bit_length()} bits>" if isinstance(value, int) else "<unreadable value>"


def _read_string(reading: Reading, text: str, key: str, whole: bool) -> list[_Item]:
    bounds = reading.bounds
    if len(text) <= bounds.max_parse_chars and (whole or _may_hold_document(text)):
        text = _unquote(text)
        parsed = _parse_shared(text, bounds)
        # Inside a value, prose with a colon ("Your code is: 4638") is prose, not a mapping.
        if parsed is not None and (whole or _has_field_names(parsed)):
            return [(parsed, key, False)]
    if whole and "\n" in text and len(text) <= bounds.max_parse_chars:
        # A server's own message that wraps data on lines of their own ("Current keys:\n['ssh-ed25519 …']"): the
        # lines are data, the rest is prose. Inside a value (a message body) outsiders write both: read both ways.
        prose, documents = _split_documents(text, bounds)
        leaves = _leaves(reading, key, prose if documents else text, None)
        return [*leaves, *((document, key, False) for document in documents)]
    leaves = _leaves(reading, key, text, None)
    items: list[_Item] = list(leaves)
    # Prose that wraps data (e.g. query rows between boundary markers): read the data too.
    for leaf in leaves:
        items.extend((document, key, False) for document in _embedded_documents(leaf.value, bounds))
    return items


def _leaves(reading: Reading, key: str, text: str, free_text: bool | None) -> list[TextLeaf]:
    """``text`` as leaves within the character budget: whole, or its head and tail (the middle unexamined)."""
    room = reading.bounds.max_chars - reading.chars
    free = is_free_text(key, text) if free_text is None else free_text
    if len(text) <= room:
        reading.chars += len(text)
        return [TextLeaf(key, text, free)]
    reading.truncated = True
    if room <= 0:
        return []
    reading.chars = reading.bounds.max_chars
    half = room // 2
    head, tail = text[: room - half], text[len(text) - half :] if half else ""
    return [TextLeaf(key, part, free) for part in (head, tail) if part]


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


def _embedded_documents(text: str, bounds: ReadBounds) -> Iterator[dict[str, Any] | list[Any]]:
    if "\n" not in text:
        return
    for line in text.splitlines():
        document = _line_document(line.strip(), bounds)
        if document is not None:
            yield document


def _split_documents(text: str, bounds: ReadBounds) -> tuple[str, list[dict[str, Any] | list[Any]]]:
    """The lines of ``text`` that are not documents, and the documents (JSON, or the repr of Python values) on
    lines of their own."""
    prose: list[str] = []
    documents: list[dict[str, Any] | list[Any]] = []
    for line in text.splitlines():
        document = _line_document(line.strip(), bounds)
        if document is None:
            prose.append(line)
        else:
            documents.append(document)
    return "\n".join(prose), documents


def _line_document(line: str, bounds: ReadBounds) -> dict[str, Any] | list[Any] | None:
    if len(line) <= 2 or line[0] not in "[{" or line[-1] not in "]}" or _nests_deeper(line, bounds.max_depth):
        return None
    try:
        document = orjson.loads(line)
    except orjson.JSONDecodeError:
        return _parse_python_repr(line, bounds.max_depth) if "'" in line else None
    return document if isinstance(document, dict | list) else None


def _may_hold_document(text: str) -> bool:
    # A one-line value such as a timestamp or "Re: hello" is a value, not an embedded document.
    return _DOCUMENT_HEAD.match(text) is not None or ("\n" in text and ":" in text)


def _nests_deeper(text: str, limit: int) -> bool:
    """Whether brackets in ``text`` nest deeper than ``limit`` (brackets inside strings count too: a cautious
    over-estimate, which only means the text is read as text)."""
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    for match in _BRACKET.finditer(text):
        depth += 1 if match.group() in "[{" else -1
        if depth > limit:
            return True
    return False


def parse_structured(text: str, bounds: ReadBounds | None = None) -> dict[str, Any] | list[Any] | None:
    """Parse text that holds a JSON or YAML document or ``key: value`` lines; None for plain prose, and for text
    over the size, nesting or alias bounds (``bounds``, by default :class:`ReadBounds`), which is read as text.

    A document inside a wrapper that prompt-injection defences add (``<< … >>``, a code fence) is read too.
    """
    bounds = bounds or _DEFAULT_BOUNDS
    if len(text) > bounds.max_parse_chars:
        return None
    stripped = _WRAPPER.sub("", text.strip()) if _WRAPPER.search(text) else text.strip()
    if not stripped or _nests_deeper(stripped, bounds.max_depth):
        return None
    if stripped[0] in "[{":
        try:
            doc = orjson.loads(stripped)
        except orjson.JSONDecodeError:
            pass
        else:
            return doc if isinstance(doc, dict | list) else None
    if len(stripped) > bounds.max_yaml_chars:
        return None
    if _REPR_HEAD.match(stripped) and ("'" in stripped or "(" in stripped):
        literal = _parse_python_repr(stripped, bounds.max_depth)
        if literal is not None:
            return literal
    if ":" not in stripped and not stripped.startswith("- "):
        return None
    if "&" in stripped and "*" in stripped and not _aliases_within(stripped, bounds.max_alias_nodes):
        return None
    try:
        doc = yaml.load(stripped, Loader=_YamlLoader)
    except _PARSE_ERRORS:
        return _parse_key_value_lines(stripped)
    return doc if isinstance(doc, dict | list) else None


def _parse_python_repr(text: str, max_depth: int) -> dict[str, Any] | list[Any] | None:
    """The value a Python ``repr`` stands for, built from its syntax tree (nothing is evaluated): literals,
    collections, and constructors with keyword fields, read as mappings of those fields. None for anything else."""
    depth = 0
    for match in _REPR_BRACKET.finditer(text):
        depth += 1 if match.group() in "[{(" else -1
        if depth > max_depth:
            return None
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    try:
        value = _literal(tree.body)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict | list) else None


def _literal(node: ast.expr) -> Any:
    # Recursion is bounded: the tokenizer refuses brackets nested over 200 deep, the caller over max_depth.
    if isinstance(node, ast.Constant) and not isinstance(node.value, bytes | complex) and node.value is not ...:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        number = node.operand.value
        if isinstance(number, int | float) and not isinstance(number, bool):
            return -number
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return [_literal(element) for element in node.elts]
    if isinstance(node, ast.Dict):
        mapping: dict[str, Any] = {}
        for key, value in zip(node.keys, node.values, strict=True):
            if key is None:
                raise ValueError("a ** in a mapping is not a literal")
            mapping[str(_literal(key))] = _literal(value)
        return mapping
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.args:
        if any(keyword.arg is None for keyword in node.keywords):
            raise ValueError("a ** in a call is not a literal")
        return {str(keyword.arg): _literal(keyword.value) for keyword in node.keywords}
    raise ValueError("not part of a value's repr")


@memoize_text(chars=50_000, budget=4_000_000)
def _parse_shared(text: str, bounds: ReadBounds) -> dict[str, Any] | list[Any] | None:
    # The walk only reads the document it is given, so one parsed copy serves every reading of the same text.
    return parse_structured(text, bounds)


def _aliases_within(text: str, limit: int) -> bool:
    """Whether the YAML text's aliases add at most ``limit`` values once expanded, and none refers to a node
    still open (a cycle). Read from the parser's events, before any node is built; text that does not parse is
    within (the loader will refuse it)."""
    sizes: dict[str, int] = {}
    open_nodes: list[list[Any]] = []  # [anchor, values so far]
    added = 0
    try:
        for event in yaml.parse(text, Loader=_YamlLoader):
            if isinstance(event, yaml.AliasEvent):
                size = sizes.get(event.anchor or "")
                if size is None:
                    return False
                added += size
                if added > limit:
                    return False
            elif isinstance(event, yaml.CollectionStartEvent):
                if event.anchor:
                    sizes.pop(event.anchor, None)  # redefined: an alias to it from inside is a cycle
                open_nodes.append([event.anchor, 1])
                continue
            elif isinstance(event, yaml.CollectionEndEvent):
                anchor, size = open_nodes.pop()
                if anchor:
                    sizes[anchor] = size
            elif isinstance(event, yaml.ScalarEvent):
                size = 1
                if event.anchor:
                    sizes[event.anchor] = 1
            else:
                continue
            if open_nodes:
                open_nodes[-1][1] += size
    except yaml.YAMLError:
        return True
    return True


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


_DEFAULT_BOUNDS = ReadBounds()
