"""Reading tool lists: a ``tools/list`` result, a JSON-RPC response holding one, a bare array, or one tool."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from monitor.errors import InputError


@dataclass(frozen=True)
class ToolList:
    """The raw tools of one file, with the server name and protocol version when the file says them."""

    path: Path
    tools: list[Any]
    server: str | None = None
    protocol_version: str | None = None


def read_tool_list(path: Path) -> ToolList:
    """Read one tool-list file. Raises :class:`~monitor.errors.InputError` naming the file when it cannot."""
    try:
        doc = orjson.loads(path.read_bytes())
    except OSError as exc:
        raise InputError(str(path), f"cannot read: {exc.strerror or exc}") from None
    except orjson.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}", f"not JSON: {exc.msg}") from None
    return parse_tool_list(doc, path)


def parse_tool_list(doc: Any, path: Path) -> ToolList:
    """Find the tools in a decoded document."""
    if isinstance(doc, list):
        return ToolList(path, doc)
    if not isinstance(doc, dict):
        raise InputError(str(path), "expected a tools/list result, a tools array or a tool object")
    if isinstance(doc.get("result"), dict) and "tools" in doc["result"]:
        return parse_tool_list(doc["result"], path)
    server = doc.get("server") if isinstance(doc.get("server"), str) else None
    if server is None and isinstance(doc.get("serverInfo"), dict):
        name = doc["serverInfo"].get("name")
        server = name if isinstance(name, str) else None
    version = doc.get("protocolVersion") if isinstance(doc.get("protocolVersion"), str) else None
    if isinstance(doc.get("tools"), list):
        return ToolList(path, doc["tools"], server, version)
    if isinstance(doc.get("name"), str):
        return ToolList(path, [doc], server, version)
    raise InputError(str(path), "no 'tools' array and not a single tool object")
