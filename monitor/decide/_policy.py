"""How the monitor decides: the policy's settings, and the scope a user gives a session (``reviewed-only``)."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from monitor.classify import YamlLimits, YamlProblem, read_yaml_file
from monitor.clients import Client
from monitor.errors import InputError
from monitor.evidence import find_allowlist_problem, is_allowlisted
from monitor.ingest import find_yaml_line
from monitor.models import Destination, DestinationKind


class PolicyMode(StrEnum):
    """Which application policy applies on top of the trifecta rules: none (``default``), or ``reviewed-only``."""

    DEFAULT = "default"
    REVIEWED_ONLY = "reviewed-only"


class Scope(BaseModel):
    """What the user allowed a session to reach (``reviewed-only`` policy): each list, when given, is the whole
    of what is allowed; an absent list (None) does not restrict.

    ``servers`` and ``tools`` hold globs (``*``, ``?``, ``[...]``); a tool glob with a ``/`` is matched against
    ``server/tool``, else against the tool's name. ``destinations`` holds e-mail addresses and domains (a domain
    covers its subdomains), as the allowlist does; other addresses (IBANs, phone numbers) match exactly."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    servers: tuple[str, ...] | None = None
    tools: tuple[str, ...] | None = None
    destinations: tuple[str, ...] | None = None

    @field_validator("destinations")
    @classmethod
    def _check_destinations(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        return _checked_entries(value) if value is not None else None

    @model_validator(mode="after")
    def _check_restricts(self) -> Scope:
        if self.servers is None and self.tools is None and self.destinations is None:
            raise ValueError("a scope restricts nothing: give servers, tools or destinations")
        return self

    def find_outside(self, server: str, tool: str, destinations: Iterable[Destination]) -> tuple[str, ...]:
        """Return what of a call lies outside the scope (``server x``, ``tool x/y``, ``destination z``)."""
        outside: list[str] = []
        if self.servers is not None and not any(_glob(server, p) for p in self.servers):
            outside.append(f"server {server}")
        if self.tools is not None and not any(_glob(f"{server}/{tool}" if "/" in p else tool, p) for p in self.tools):
            outside.append(f"tool {server}/{tool}")
        if self.destinations is not None:
            for d in destinations:
                if d.kind is not DestinationKind.PATH and not is_allowlisted(d, self.destinations):
                    outside.append(f"destination {d.value}")
        return tuple(dict.fromkeys(outside))


def _glob(value: str, pattern: str) -> bool:
    return fnmatch.fnmatchcase(value.lower(), pattern.lower())


_SCOPE_LIMITS = YamlLimits(max_bytes=1 << 20)


def load_scope(path: str | Path) -> Scope:
    """Read a scope file (YAML, or JSON, which YAML reads): a mapping with optional ``servers``, ``tools`` and
    ``destinations`` lists. Raises :class:`~monitor.errors.InputError` naming the file and line of a problem."""
    try:
        node, value = read_yaml_file(path, _SCOPE_LIMITS)
    except YamlProblem as exc:
        raise InputError(f"{path}:{exc.line}", exc.message) from None
    if not isinstance(value, dict):
        raise InputError(f"{path}:{node.start_mark.line + 1}", "a scope file is a mapping")
    try:
        return Scope.model_validate(value)
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = tuple(error["loc"])
        where = ".".join(str(p) for p in loc) or "scope"
        raise InputError(f"{path}:{find_yaml_line(node, loc)}", f"{where}: {error['msg']}") from None


class Policy(BaseModel):
    """How the monitor decides.

    ``enforce`` turns the confirm on an exfiltration to an attacker-suggested destination into a deny.
    ``conversation_is_private`` counts user messages as private data in the context. ``allowlist`` holds
    e-mail addresses and domains (a domain covers its subdomains) that are always user-sanctioned.
    ``baseline`` is a client profile (docs/design.md, "Client profiles") whose own confirmations stay: the
    final action is the stricter of the client's and the monitor's. ``hijack`` (on by default) confirms a destructive,
    privileged or code-execution call whose target or content untrusted content chose.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    enforce: bool = False
    conversation_is_private: bool = True
    allowlist: tuple[str, ...] = ()
    baseline: Client | None = None
    hijack: bool = True
    """Confirm destructive, privileged and code-execution calls that untrusted content steered (``hijack``)."""
    mode: PolicyMode = PolicyMode.DEFAULT
    """``reviewed-only`` adds the application policy of docs/policy.md on top of the trifecta rules."""
    scope: Scope | None = None
    """With ``reviewed-only``: the scope of every session (a host may set one per session instead)."""

    @field_validator("allowlist")
    @classmethod
    def _check_allowlist(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return _checked_entries(value)


def _checked_entries(entries: tuple[str, ...]) -> tuple[str, ...]:
    """The entries, unless one would allow far more than one party (a wildcard, a public suffix alone)."""
    for entry in entries:
        problem = find_allowlist_problem(entry)
        if problem is not None:
            raise ValueError(f"{entry!r} is refused: {problem}")
    return entries
