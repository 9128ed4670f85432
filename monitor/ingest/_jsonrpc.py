"""The line format of MCP JSON-RPC logs, shared by the log reader and the tool-list reader.

A line holds one JSON-RPC 2.0 message, a batch of them (a JSON array, allowed by protocol versions before
2025-06-18), or a *wrapper* object that adds what the wire does not say::

    {"timestamp": "2026-10-14T16:02:22.530Z", "direction": "client->server",
     "session": "github-public-issue", "server": "github",
     "message": {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {...}}}

Wrapper fields, all optional but the message (first spelling found wins):

- message: ``message``, ``msg`` or ``payload``: a JSON-RPC object, a batch array, or that JSON as a string.
- direction: ``direction`` or ``dir``, compared ignoring case, spaces, ``_``, ``-``, ``>`` and ``→``.
  Client to server: ``client->server`` (``client→server``, ``client_to_server``, ``c2s``...), ``send``,
  ``sent``, ``out``, ``outgoing``, ``outbound``, ``tx``; server to client: the mirror spellings and
  ``receive``, ``received``, ``recv``, ``in``, ``incoming``, ``inbound``, ``rx``. ``send``/``receive`` are
  the host's (the client's) point of view. The direction only matters where the method does not say it.
- timestamp: ``timestamp``, ``time`` or ``ts``: RFC 3339 text, or Unix seconds (milliseconds when large).
- session, in this order (:data:`SESSION_KEYS`): the host's conversation id (``conversation_id``,
  ``conversationId``, ``gen_ai.conversation.id``), the host's session name (``session``, ``session_id``,
  ``sessionId``), then a protocol session id (``mcp_session_id``, ``mcpSessionId``, ``Mcp-Session-Id``: the
  Streamable HTTP header of protocol versions before 2026-07-28, which has none). Without any, the reader
  keys the session by the file.
- server: ``server``, ``server_name`` or ``serverName``.

The same fields may also be written inline, next to the JSON-RPC keys of a bare message.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

import orjson

LOG_SUFFIXES = (".json", ".jsonl", ".ndjson", ".log")
"""File suffixes of MCP JSON-RPC logs and tool lists: the files read when a folder is given."""


MESSAGE_KEYS = ("message", "msg", "payload")
DIRECTION_KEYS = ("direction", "dir")
TIME_KEYS = ("timestamp", "time", "ts")
CONVERSATION_KEYS = (
    "conversation_id",
    "conversationId",
    "gen_ai.conversation.id",
    "session",
    "session_id",
    "sessionId",
)
"""Wrapper fields naming the host's conversation (or session), in precedence order."""
PROTOCOL_SESSION_KEYS = ("mcp_session_id", "mcpSessionId", "Mcp-Session-Id")
"""Wrapper fields holding a protocol session id (``Mcp-Session-Id``), read after :data:`CONVERSATION_KEYS`."""
SESSION_KEYS = CONVERSATION_KEYS + PROTOCOL_SESSION_KEYS
"""Every wrapper field naming a session, in precedence order (first present wins)."""
SERVER_KEYS = ("server", "server_name", "serverName")
SERVER_METHOD_PREFIXES = ("sampling/", "roots/", "elicitation/")
"""Requests only a server sends (to its client)."""

IdKey = tuple[str, Any]
"""A JSON-RPC id made hashable and type-exact: ``("n", 1)`` and ``("s", "1")`` are different ids."""


class Peer(Enum):
    """A side of an MCP connection: who sent a message, or who sent the request a response answers."""

    CLIENT = "client"
    SERVER = "server"

    @property
    def other(self) -> Peer:
        """The opposite side."""
        return Peer.SERVER if self is Peer.CLIENT else Peer.CLIENT


# Directions, compared with case, spaces, ``_``, ``-``, ``>`` and ``→`` removed.
_DIRECTIONS = {
    **dict.fromkeys(
        ("clientserver", "clienttoserver", "cs", "c2s", "send", "sent", "out", "outgoing", "outbound", "tx"),
        Peer.CLIENT,
    ),
    **dict.fromkeys(
        (
            "serverclient",
            "servertoclient",
            "sc",
            "s2c",
            "receive",
            "received",
            "recv",
            "in",
            "incoming",
            "inbound",
            "rx",
        ),
        Peer.SERVER,
    ),
}
_DIRECTION_NOISE = str.maketrans("", "", " _->→")


def is_message(doc: dict[str, Any]) -> bool:
    """True when an object has the keys of a JSON-RPC message (``jsonrpc``, a ``method``, or an ``id`` with
    a ``result`` or an ``error``), whatever their values."""
    return "jsonrpc" in doc or "method" in doc or ("id" in doc and ("result" in doc or "error" in doc))


def is_log_line(doc: Any) -> bool:
    """True for a decoded log line: a JSON-RPC 2.0 message, a batch of messages, or a wrapper holding one
    (its message may be that JSON as a string)."""
    if isinstance(doc, list):
        return bool(doc) and all(isinstance(m, dict) and is_message(m) for m in doc)
    if not isinstance(doc, dict):
        return False
    if is_message(doc):
        return doc.get("jsonrpc") == "2.0"
    payload = next((doc[k] for k in MESSAGE_KEYS if k in doc), None)
    if isinstance(payload, str):
        try:
            payload = orjson.loads(payload)
        except orjson.JSONDecodeError:
            return False
    return isinstance(payload, dict | list) and is_log_line(payload)


def first_name(doc: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    """Return the first of ``keys`` present and not null, as text; None when there is none.

    Raises ValueError when that value is not a non-empty string or an integer.
    """
    for key in keys:
        value = doc.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, str | int) or value == "":
            raise ValueError(f"{key!r} must be a non-empty string, not {value!r}")
        return str(value)
    return None


def parse_direction(value: Any) -> Peer | None:
    """Return the sender a wrapper's direction names; None when it is not a known spelling."""
    if not isinstance(value, str):
        return None
    return _DIRECTIONS.get(value.lower().translate(_DIRECTION_NOISE))


def read_id_key(value: Any) -> IdKey | None:
    """Return a JSON-RPC id as an :data:`IdKey`; None for what is not an id (a bool, null, an object)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, int | float):
        return ("n", value)
    return None


def format_id(key: IdKey) -> str:
    """Return an id as text, as call ids and messages show it (``7`` for ``7.0``)."""
    kind, value = key
    if kind == "n" and isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def describe_error(error: Any) -> str:
    """Return a JSON-RPC error object as text for a message."""
    if isinstance(error, dict):
        return f"error {error.get('code')}: {error.get('message')}"
    return f"error {error!r}"


def strip_log_suffix(name: str) -> str:
    """Return a file name without its log suffix (:data:`LOG_SUFFIXES`), unless that leaves nothing."""
    for suffix in LOG_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name
