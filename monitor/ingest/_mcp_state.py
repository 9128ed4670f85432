"""The per-session state of the MCP log reader (:mod:`monitor.ingest._mcp`), and its small helpers:
which side sent a request, and how a ``tools/call`` retried after ``input_required`` (MCP 2026-07-28) is
matched with the call that asked for input."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeGuard

import orjson

from monitor.ingest._jsonrpc import SERVER_METHOD_PREFIXES, IdKey, Peer
from monitor.models import RESULT_TYPE_INPUT_REQUIRED, ServerIdentity

_CLIENT_METHOD_PREFIXES = ("tools/", "resources/", "prompts/", "completion/", "logging/")
_CLIENT_METHODS = ("initialize", "server/discover")


# -- state -------------------------------------------------------------------------------------------------


@dataclass
class Request:
    """A request waiting for its response."""

    method: str
    line: int
    id_text: str
    call_id: str | None = None
    tool: str | None = None
    cursor: bool = False
    arguments: dict[str, Any] | None = None
    """A ``tools/call``'s arguments (None when unreadable): a retry after ``input_required`` must match them."""


AwaitKey = tuple[str, str | None, bytes | None]
"""A call waiting for input: its ``requestState``, tool and canonical arguments (:func:`await_key`)."""


@dataclass
class Connection:
    """One host↔server connection of a session: its open requests and its tool listing."""

    explicit_server: str | None
    announced_server: str | None = None
    identity: ServerIdentity | None = None
    """What the server announced of itself (``serverInfo``), given with its listings."""
    requests: dict[tuple[Peer, IdKey], Request] = field(default_factory=dict)
    cancelled: OrderedDict[tuple[Peer, IdKey], None] = field(default_factory=OrderedDict)
    awaiting: OrderedDict[AwaitKey, Request] = field(default_factory=OrderedDict)
    """Calls answered with ``input_required``, by the ``requestState`` their retry carries (``""``: none), their
    tool and arguments (:func:`await_key`)."""
    pages: list[Any] | None = None
    pages_time: datetime | None = None
    pages_source: str | None = None
    listed: bytes | None = None


@dataclass
class Session:
    """One session of the log: the line it began at and its connections, by server field."""

    first_line: int
    connections: dict[str | None, Connection] = field(default_factory=dict)


@dataclass(frozen=True)
class Envelope:
    """What a line says around its message(s)."""

    session: str
    server: str | None
    sender: Peer | None
    time: datetime | None
    source: str


# -- helpers -----------------------------------------------------------------------------------------------


def find_request_origin(method: str, sender: Peer | None) -> Peer:
    """Who sent a request: known methods go one way only; others follow the direction, else the client."""
    if method in _CLIENT_METHODS or method.startswith(_CLIENT_METHOD_PREFIXES):
        return Peer.CLIENT
    if method.startswith(SERVER_METHOD_PREFIXES):
        return Peer.SERVER
    return sender or Peer.CLIENT


def asks_for_input(result: Any) -> TypeGuard[dict[str, Any]]:
    """True for an ``InputRequiredResult`` (MCP 2026-07-28): not the call's result, a request for input."""
    return isinstance(result, dict) and result.get("resultType") == RESULT_TYPE_INPUT_REQUIRED


def canonicalize_arguments(arguments: dict[str, Any] | None) -> bytes | None:
    """Return the canonical JSON of a call's arguments (keys sorted); None when there is none to compare."""
    if arguments is None:
        return None
    try:
        return orjson.dumps(arguments, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # beyond orjson (an integer past 64 bits): never equal, so never merged
        return None


def await_key(state: Any, request: Request) -> AwaitKey:
    """What a call that asked for input is known by until its retry: the ``requestState`` (empty when there is
    none), the tool and the canonical arguments, so that calls waiting at once without a state stay apart.
    The arguments are made canonical only here: most calls never ask for input."""
    return (state if isinstance(state, str) else "", request.tool, canonicalize_arguments(request.arguments))


def pop_awaiting(connection: Connection, params: Any, request: Request) -> Request | None:
    """Return (and forget) the call that asked for input and that this ``tools/call`` retries: it carries
    ``inputResponses`` or ``requestState``, the state matches, and so do the tool and its arguments."""
    if not connection.awaiting or not isinstance(params, dict) or request.arguments is None:
        return None
    if "inputResponses" not in params and "requestState" not in params:
        return None
    key = await_key(params.get("requestState"), request)
    return None if key[2] is None else connection.awaiting.pop(key, None)
