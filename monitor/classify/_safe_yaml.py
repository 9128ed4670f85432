"""Reading YAML that someone else wrote (rule files, scenario files) with bounded work and no surprises.

:func:`load_yaml_text` checks, in this order, each step bounded by :class:`YamlLimits`:

1. the size of the text, before any parsing;
2. the event stream: one document, nesting depth, the number of aliases (``*name``), and tags: only the core
   ones (``!!str``, ``!!int``, ``!!float``, ``!!bool``, ``!!null``, ``!!seq``, ``!!map``) may be written
   explicitly; ``!!python/...``, ``!!binary``, ``!!set``, local ``!tags`` and the rest are refused;
3. the node graph: the size it would have with every alias expanded (a "billion laughs" file is a few aliases
   that expand to billions of nodes), and recursive aliases;
4. duplicate keys in a mapping;

and only then builds the Python value. Every problem is a :class:`YamlProblem` with the 1-based line it is
on: the caller writes it as ``file:line: message``. Nothing else escapes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from monitor.ingest import find_duplicate_key

_CORE = "tag:yaml.org,2002:"
CORE_TAGS = frozenset(_CORE + name for name in ("str", "int", "float", "bool", "null", "seq", "map"))
"""The tags a file may write explicitly (``!!str`` and the like)."""

_PARSER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class YamlLimits:
    """Bounds on one YAML file: its size in bytes, aliases, nodes once aliases are expanded, nesting depth."""

    max_bytes: int = 1 << 20
    max_aliases: int = 100
    max_nodes: int = 100_000
    max_depth: int = 64


RULE_FILE_LIMITS = YamlLimits()
"""The bounds a rule file is read with."""


class YamlProblem(ValueError):
    """A YAML file that is refused: ``line`` (1-based) and ``message``."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"{line}: {message}")
        self.line = line
        self.message = message


def read_yaml_file(path: str | Path, limits: YamlLimits = RULE_FILE_LIMITS) -> tuple[yaml.Node, Any]:
    """Read one YAML file safely: its node tree (for error lines) and its value. Raises :class:`YamlProblem`
    (an unreadable file, one too large, and every problem :func:`load_yaml_text` finds)."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > limits.max_bytes:
            raise YamlProblem(1, f"file too large: {size} bytes (at most {limits.max_bytes})")
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise YamlProblem(1, f"cannot read: {exc}") from None
    return load_yaml_text(text, limits)


def load_yaml_text(text: str, limits: YamlLimits = RULE_FILE_LIMITS) -> tuple[yaml.Node, Any]:
    """Parse one YAML document within ``limits``: its node tree and its value. An empty document is a problem.
    Raises :class:`YamlProblem` and nothing else."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > limits.max_bytes:
        raise YamlProblem(1, f"file too large: {size} bytes (at most {limits.max_bytes})")
    try:
        aliases, nodes = _check_events(text, limits)
        node = yaml.compose(text, Loader=_PARSER)
    except YamlProblem:
        raise
    except yaml.YAMLError as exc:
        raise YamlProblem(_line_of(exc), f"not valid YAML: {getattr(exc, 'problem', None) or exc}") from None
    except Exception as exc:  # a parser failing in a way it does not declare: still a finding
        raise YamlProblem(1, f"not valid YAML: {type(exc).__name__}: {exc}") from None
    if node is None:
        raise YamlProblem(1, "empty file")
    if aliases or nodes > limits.max_nodes:
        # Without aliases the tree is no larger than its events counted (and has no cycle): nothing to expand.
        _check_expanded_size(node, limits.max_nodes)
    duplicate = find_duplicate_key(node)
    if duplicate is not None:
        raise YamlProblem(duplicate[1], f"duplicate key {duplicate[0]!r}")
    try:
        loader = yaml.SafeLoader("")
        try:
            value = loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        raise YamlProblem(_line_of(exc), f"not valid YAML: {getattr(exc, 'problem', None) or exc}") from None
    except Exception as exc:  # e.g. an implicit date out of range (2026-02-30)
        raise YamlProblem(node.start_mark.line + 1, f"a value cannot be read: {exc}") from None
    return node, value


def _line_of(exc: yaml.YAMLError) -> int:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    return int(mark.line) + 1 if mark is not None else 1


def _check_events(text: str, limits: YamlLimits) -> tuple[int, int]:
    """Walk the event stream (no nodes built yet): documents, depth, aliases and explicit tags. Returns the
    aliases and the nodes (scalars and collections) it holds as written."""
    aliases = depth = documents = nodes = 0
    for event in yaml.parse(text, Loader=_PARSER):
        line = event.start_mark.line + 1 if event.start_mark is not None else 1
        if isinstance(event, yaml.DocumentStartEvent):
            documents += 1
            if documents > 1:
                raise YamlProblem(line, "one document per file (a second '---' starts another)")
        elif isinstance(event, yaml.AliasEvent):
            aliases += 1
            if aliases > limits.max_aliases:
                raise YamlProblem(line, f"more than {limits.max_aliases} aliases (*name)")
        elif isinstance(event, yaml.ScalarEvent):
            nodes += 1
        elif isinstance(event, yaml.CollectionStartEvent):
            nodes += 1
            depth += 1
            if depth > limits.max_depth:
                raise YamlProblem(line, f"nested deeper than {limits.max_depth} levels")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
        tag = getattr(event, "tag", None)
        if tag is not None and tag != "!" and tag not in CORE_TAGS:
            shown = "!!" + tag.removeprefix(_CORE) if tag.startswith(_CORE) else tag
            raise YamlProblem(line, f"tag {shown} is not allowed (only the core tags: !!str, !!int, !!map, ...)")
    return aliases, nodes


def _check_expanded_size(root: yaml.Node, max_nodes: int) -> None:
    """Refuse a node graph that, with its aliases expanded, has more than ``max_nodes`` nodes, or a cycle.

    Each node is visited once (shared nodes are counted by reference, through a memo), so the check itself is
    linear in the file, whatever the expansion would be."""
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        children = _children(node)
        if children_done:
            on_path.discard(key)
            total = 1 + sum(sizes[id(child)] for child in children)
            if total > max_nodes:
                raise YamlProblem(
                    node.start_mark.line + 1, f"aliases expand to more than {max_nodes} nodes (an alias bomb?)"
                )
            sizes[key] = total
            continue
        if key in sizes:
            continue
        on_path.add(key)
        stack.append((node, True))
        for child in children:
            if id(child) in on_path:
                raise YamlProblem(child.start_mark.line + 1, "an alias refers to a node that contains it")
            if id(child) not in sizes:
                stack.append((child, False))


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []
