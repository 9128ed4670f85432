"""Locating things in YAML files read as node trees, for errors that name a file and line."""

from __future__ import annotations

from typing import Any

import yaml


def find_duplicate_key(node: yaml.Node) -> tuple[str, int] | None:
    """Return the first key that a mapping in ``node`` repeats, with its line (1-based); None if none does.

    The walk is iterative: a deeply nested file cannot exhaust the stack."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, yaml.MappingNode):
            seen: set[str] = set()
            for key, value in current.value:
                if str(key.value) in seen:
                    return str(key.value), key.start_mark.line + 1
                seen.add(str(key.value))
                stack.append(value)
        elif isinstance(current, yaml.SequenceNode):
            stack.extend(current.value)
    return None


def find_yaml_line(node: yaml.Node, loc: tuple[Any, ...]) -> int:
    """Return the line (1-based) of the deepest node that an error location (a pydantic ``loc``) reaches; parts
    that name no key, such as a union's tag, are skipped."""
    line = node.start_mark.line + 1
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            match = next(((k, v) for k, v in node.value if str(k.value) == str(part)), None)
            if match is None:
                continue
            line = match[0].start_mark.line + 1
            node = match[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            break
    return line
