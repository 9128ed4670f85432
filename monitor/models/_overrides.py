"""What a classification layer looks at, and what the reviewed-override layer answers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from monitor.models._identity import ServerIdentity
from monitor.models._legs import Classification
from monitor.models._tools import ToolDefinition


class SessionFacts(Protocol):
    """What earlier results of the session showed about a value (for argument conditions)."""

    def attributes_of(self, value: str) -> list[Mapping[str, Any]]:
        """The scalar fields of every listed object in which ``value`` appeared."""
        ...


@dataclass(frozen=True, eq=False)
class ToolContext:
    """What a layer may look at: the tool identity, its definition if listed, its server's trust, the call
    and what the session has seen; ``server_identity``: what the session knows of the server besides its name."""

    server: str
    name: str
    definition: ToolDefinition | None = None
    trusted: bool = False
    arguments: Mapping[str, Any] | None = None
    facts: SessionFacts | None = None
    server_identity: ServerIdentity | None = None


@dataclass(frozen=True)
class PinMismatch:
    """A reviewed rule pinned a definition the session saw changed: the rule is void for the session."""

    rule_id: str
    pinned: str
    seen: str


@dataclass(frozen=True)
class OverrideMatch:
    """What layer 1 says of a call: the reviewed legs (None when the rule is void), the rule ids that
    decided them, the argument paths that hold destinations, a voided pin if any, and the rule's contract for
    the ``reviewed-only`` policy: whether the tool only reads, and whether repeating it is safe."""

    classification: Classification | None
    rule_ids: tuple[str, ...] = ()
    destinations: tuple[str, ...] = ()
    voided: PinMismatch | None = None
    read_only: bool | None = None
    """True: the tool only reads; False: it writes; None: the rule does not say."""
    retry_safe: bool = False
    """Repeating a call whose outcome is unknown is harmless (``retry: safe``)."""
