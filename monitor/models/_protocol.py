"""The MCP protocol versions the monitor knows, and what each changed that a reader or ``trifecta lint`` needs.

One table (:data:`PROTOCOL_VERSIONS`), read from the specification's changelogs and schemas
(modelcontextprotocol/modelcontextprotocol, ``docs/specification/<version>/changelog.mdx`` and
``schema/<version>/schema.ts``):

- **2024-11-05**: the first version: ``initialize`` handshake, no tool annotations.
- **2025-03-26**: tool annotations (``ToolAnnotations``); JSON-RPC batches; Streamable HTTP with the
  ``Mcp-Session-Id`` header.
- **2025-06-18**: JSON-RPC batches removed; structured tool output (``structuredContent``, ``outputSchema``);
  elicitation; ``MCP-Protocol-Version`` header on HTTP requests.
- **2025-11-25**: elicitation modes (``mode: "form"``/``"url"``), tasks (experimental), icons.
- **2026-07-28**: stateless (SEP-2575, SEP-2567): no ``initialize``/``notifications/initialized`` handshake
  and no ``Mcp-Session-Id``; every request carries ``_meta["io.modelcontextprotocol/protocolVersion"]`` and
  ``_meta["io.modelcontextprotocol/clientCapabilities"]`` (both required); every result carries
  ``resultType`` (``"complete"`` or ``"input_required"``); ``server/discover`` replaces ``initialize``;
  ``ping``, ``logging/setLevel`` and ``notifications/roots/list_changed`` are removed, and a server asks for
  sampling, elicitation or roots only inside an ``InputRequiredResult`` (``inputRequests``), never as a
  request of its own.

A version string not in the table is *unknown*: readers go on by the shape of the messages, and lint reports
it. :func:`infer_protocol_version` gives the features of a well-formed unknown date: those of the latest known
version not after it.
"""

from __future__ import annotations

import re
from typing import TypeGuard

from pydantic import BaseModel, ConfigDict

PROTOCOL_VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion"
"""2026-07-28: the request ``_meta`` key naming the client's protocol version (required on every request)."""
CLIENT_CAPABILITIES_META_KEY = "io.modelcontextprotocol/clientCapabilities"
"""2026-07-28: the request ``_meta`` key holding the client's capabilities (required on every request)."""
CLIENT_INFO_META_KEY = "io.modelcontextprotocol/clientInfo"
"""2026-07-28: the request ``_meta`` key holding the client's ``Implementation`` (optional)."""
SERVER_INFO_META_KEY = "io.modelcontextprotocol/serverInfo"
"""2026-07-28: the result ``_meta`` key holding the server's ``Implementation`` (``name``, ``version``)."""

RESULT_TYPE_COMPLETE = "complete"
"""2026-07-28: the ``resultType`` of a final result."""
RESULT_TYPE_INPUT_REQUIRED = "input_required"
"""2026-07-28: the ``resultType`` of an ``InputRequiredResult``: the server needs input before it answers; the
client sends the request again with ``inputResponses`` and the opaque ``requestState``."""

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


class ProtocolVersion(BaseModel):
    """One MCP protocol version and the features of it that the monitor's readers and lint depend on."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: str
    tool_annotations: bool
    """Tools may carry ``annotations`` (``ToolAnnotations``)."""
    handshake: bool
    """Connections open with ``initialize``; Streamable HTTP may add a protocol session (``Mcp-Session-Id``)."""
    batches: bool
    """A message may be a JSON-RPC batch (an array)."""
    structured_tool_output: bool
    """Tool results may carry ``structuredContent``; tools may declare an ``outputSchema``."""
    elicitation: bool
    """Servers may ask the user for input (``elicitation/create``)."""
    elicitation_modes: bool
    """``elicitation/create`` carries ``mode`` (``"form"`` or ``"url"``, SEP-1036)."""
    request_meta: bool
    """Every request names its protocol version and client capabilities in ``params._meta``."""
    result_type: bool
    """Every result carries ``resultType``."""
    removed_methods: frozenset[str] = frozenset()
    """Methods of earlier versions that this version no longer has."""


PROTOCOL_VERSIONS: tuple[ProtocolVersion, ...] = (
    ProtocolVersion(
        version="2024-11-05",
        tool_annotations=False,
        handshake=True,
        batches=False,
        structured_tool_output=False,
        elicitation=False,
        elicitation_modes=False,
        request_meta=False,
        result_type=False,
    ),
    ProtocolVersion(
        version="2025-03-26",
        tool_annotations=True,
        handshake=True,
        batches=True,
        structured_tool_output=False,
        elicitation=False,
        elicitation_modes=False,
        request_meta=False,
        result_type=False,
    ),
    ProtocolVersion(
        version="2025-06-18",
        tool_annotations=True,
        handshake=True,
        batches=False,
        structured_tool_output=True,
        elicitation=True,
        elicitation_modes=False,
        request_meta=False,
        result_type=False,
    ),
    ProtocolVersion(
        version="2025-11-25",
        tool_annotations=True,
        handshake=True,
        batches=False,
        structured_tool_output=True,
        elicitation=True,
        elicitation_modes=True,
        request_meta=False,
        result_type=False,
    ),
    ProtocolVersion(
        version="2026-07-28",
        tool_annotations=True,
        handshake=False,
        batches=False,
        structured_tool_output=True,
        elicitation=True,
        elicitation_modes=True,
        request_meta=True,
        result_type=True,
        removed_methods=frozenset(
            {
                "initialize",
                "notifications/initialized",
                "ping",
                "logging/setLevel",
                "notifications/roots/list_changed",
                # server-to-client requests travel only inside an InputRequiredResult's inputRequests now
                "sampling/createMessage",
                "elicitation/create",
                "roots/list",
            }
        ),
    ),
)
"""Every known MCP protocol version, oldest first."""

LATEST_PROTOCOL_VERSION = PROTOCOL_VERSIONS[-1].version
"""The newest protocol version the monitor knows."""

_BY_VERSION = {entry.version: entry for entry in PROTOCOL_VERSIONS}


def find_protocol_version(version: object) -> ProtocolVersion | None:
    """Return the table entry of a known protocol version; None for anything else (never raises)."""
    return _BY_VERSION.get(version) if isinstance(version, str) else None


def infer_protocol_version(version: object) -> ProtocolVersion | None:
    """Return the entry whose features a version has: its own when known, else, for a well-formed date
    (``YYYY-MM-DD``), the latest known version not after it. None for a date before every known version and
    for anything that is not a date."""
    known = find_protocol_version(version)
    if known is not None:
        return known
    if not is_protocol_date(version):
        return None
    earlier = [entry for entry in PROTOCOL_VERSIONS if entry.version <= version]
    return earlier[-1] if earlier else None


def is_protocol_date(version: object) -> TypeGuard[str]:
    """True when a version string has the ``YYYY-MM-DD`` form MCP versions have."""
    return isinstance(version, str) and _DATE.match(version) is not None


def is_sessionless_protocol(version: object) -> bool:
    """True for a version without protocol sessions (no ``initialize``, no ``Mcp-Session-Id``): 2026-07-28 and
    later dates."""
    entry = infer_protocol_version(version)
    return entry is not None and not entry.handshake


def find_first_version(feature: str) -> str:
    """Return the first known version whose entry has ``feature`` (a boolean field of :class:`ProtocolVersion`)
    true. Raises ValueError for a feature no version has."""
    for entry in PROTOCOL_VERSIONS:
        if getattr(entry, feature) is True:
            return entry.version
    raise ValueError(f"no known MCP protocol version has {feature!r}")
