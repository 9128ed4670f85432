"""The schema of reviewed override rule files (docs/design.md, "Rule files"): Sigma-style metadata, tool entries, tests.

Rule files are YAML, validated by these strict models (unknown keys are errors). Patterns are checked when
the file loads: globs must be well formed, regular expressions must compile under RE2 (linear time, no
backtracking). Globs and regular expressions are matched against at most :data:`MAX_REGEX_INPUT` characters: a
longer value is not examined: the condition's additions apply and its removals do not.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import re
from enum import StrEnum
from typing import Any, Literal, Self
from uuid import UUID

import re2
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from monitor.models import Leg

MAX_REGEX_INPUT = 10_000
"""The longest value a glob or regular expression is matched against; a longer one is judged cautiously."""
_SHA256 = re.compile(r"[0-9a-f]{64}")
MAX_PATTERN_LENGTH = 1_000
_REGEX_OPTIONS = re2.Options()
_REGEX_OPTIONS.log_errors = False
_REGEX_OPTIONS.max_mem = 1 << 22


class Status(StrEnum):
    """Maturity of a rule file, as in Sigma."""

    EXPERIMENTAL = "experimental"
    TEST = "test"
    STABLE = "stable"
    DEPRECATED = "deprecated"


class Trust(StrEnum):
    """Whether a server's own hints may lower risk."""

    TRUSTED = "trusted"
    UNTRUSTED = "untrusted"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


def compile_regex(pattern: str) -> Any:
    """Compile a rule's regular expression with RE2 (linear time); raises ``ValueError`` if it cannot."""
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise ValueError(f"regex longer than {MAX_PATTERN_LENGTH} characters")
    try:
        return re2.compile(pattern, _REGEX_OPTIONS)
    except re2.error as exc:
        detail = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise ValueError(
            f"unsafe or invalid regex {pattern!r}: {detail} (patterns run on RE2: no backreferences or lookaround)"
        ) from None


def check_glob(pattern: str) -> str:
    """Validate a glob (``*``, ``?``, ``[...]``); raises ``ValueError`` when malformed."""
    if not pattern or len(pattern) > MAX_PATTERN_LENGTH:
        raise ValueError("glob must be a non-empty string of at most 1000 characters")
    depth = 0
    for ch in pattern:
        if ch == "[":
            depth += 1
        elif ch == "]" and depth:
            depth -= 1
    if depth:
        raise ValueError(f"bad glob {pattern!r}: unclosed '['")
    try:
        re.compile(fnmatch.translate(pattern))
    except re.error as exc:
        raise ValueError(f"bad glob {pattern!r}: {exc}") from None
    return pattern


_OPERATORS = ("equals", "in_", "glob", "domain_in", "regex", "seen_with", "internal_host")


class Condition(_Strict):
    """An argument condition: when it holds for a call, ``add`` and ``remove`` change that call's legs.

    The subject is either ``arg`` (an argument path, ``a.b`` or ``a/0/b``; for a list, any element may
    match) or ``value`` (a template over arguments, e.g. ``"{owner}/{repo}"``). Exactly one operator:
    ``equals``, ``in``, ``glob`` (case-insensitive), ``domain_in`` (every e-mail address or URL in the
    value is on one of these domains or their subdomains), ``regex`` (RE2, searched, bounded input),
    ``seen_with`` (an earlier result of the session listed the value in an object with these fields) or
    ``internal_host: true`` (the value is a ``file:`` URL, or a URL or ``host[:port][/path]`` whose host stays
    on the user's machine or network, read as a resolver reads it: a public address in any spelling, such as
    ``1481646427`` or ``0x58501234``, is not internal). ``not: true`` negates the condition.

    A glob or regex cannot examine a value longer than :data:`MAX_REGEX_INPUT` characters; for such a value the
    condition's ``add`` applies and its ``remove`` does not, whatever ``not`` says.
    """

    arg: str | None = None
    value: str | None = None
    equals: Any = None
    in_: list[Any] | None = Field(default=None, alias="in")
    glob: str | None = None
    domain_in: list[str] | None = None
    regex: str | None = None
    seen_with: dict[str, str | int | float | bool] | None = None
    internal_host: bool | None = Field(
        default=None,
        description=(
            "true: the value is a file: URL (on no server or an internal one), or a URL or host[:port][/path] "
            "whose host is loopback, private, link-local, single-label or under an internal suffix (.internal, "
            ".local, .home.arpa...), in any spelling a resolver accepts; a public address in any spelling is not "
            "internal"
        ),
    )
    negate: bool = Field(default=False, alias="not")
    add: list[Leg] = Field(default_factory=list)
    remove: list[Leg] = Field(default_factory=list)

    @field_validator("glob")
    @classmethod
    def _check_glob(cls, v: str | None) -> str | None:
        return None if v is None else check_glob(v)

    @field_validator("regex")
    @classmethod
    def _check_regex(cls, v: str | None) -> str | None:
        if v is not None:
            compile_regex(v)
        return v

    @field_validator("internal_host")
    @classmethod
    def _check_internal_host(cls, v: bool | None) -> bool | None:
        if v is False:
            raise ValueError("internal_host takes true; write 'not: true' for hosts that are not internal")
        return v

    @model_validator(mode="after")
    def _check_shape(self) -> Self:
        if (self.arg is None) == (self.value is None):
            raise ValueError("a condition names exactly one of 'arg' or 'value'")
        given = [
            name
            for name in _OPERATORS
            if getattr(self, name) is not None or (name == "equals" and "equals" in self.model_fields_set)
        ]
        if len(given) != 1:
            names = ", ".join("in" if n == "in_" else n for n in _OPERATORS)
            raise ValueError(f"a condition has exactly one operator of {names}; got {len(given)}")
        if not self.add and not self.remove:
            raise ValueError("a condition must 'add' or 'remove' at least one leg")
        return self


class ToolRule(_Strict):
    """The reviewed legs of the tools a ``match`` name or glob selects on the file's server."""

    match: str
    pin: str | list[str] | None = None
    legs: list[Leg]
    when: list[Condition] = Field(default_factory=list)
    destinations: list[str] = Field(default_factory=list)
    reason: str = Field(min_length=1)
    read_only: bool | None = Field(
        default=None,
        description="true: the tool only reads (the reviewed-only policy lets it run); false: it writes",
    )
    retry: Literal["safe"] | None = Field(
        default=None,
        description="safe: repeating a call whose outcome is unknown is harmless (a reviewed retry contract)",
    )

    @field_validator("match")
    @classmethod
    def _check_match(cls, v: str) -> str:
        return check_glob(v)

    @field_validator("pin")
    @classmethod
    def _check_pin(cls, v: str | list[str] | None) -> str | list[str] | None:
        for digest in [v] if isinstance(v, str) else v or []:
            if not _SHA256.fullmatch(digest):
                raise ValueError(f"a pin is a sha256 hex digest (64 lowercase hex characters), got {digest!r}")
        return v

    @property
    def pins(self) -> tuple[str, ...]:
        """The definition hashes this entry was reviewed against (one per server version it covers)."""
        return (self.pin,) if isinstance(self.pin, str) else tuple(self.pin or ())


class RuleTest(_Strict):
    """An inline test: a call and the legs it must get (``legs``, exact) or must not get (``absent``).

    ``arguments: null`` stands for a call whose arguments were not recorded (conditions do not apply).

    ``seen`` lists objects earlier results of the session showed (for ``seen_with`` conditions);
    ``definition`` is the tool definition the session listed (for pins). Without ``definition`` the session
    listed the definition the covering entry's first pin names; ``definition: null`` stands for a session that
    listed none (a pinned entry then only adds legs to what the other layers say).
    """

    tool: str
    server: str | None = None
    arguments: dict[str, Any] | None = Field(default_factory=dict)
    legs: list[Leg] | None = None
    absent: list[Leg] | None = None
    seen: list[dict[str, Any]] = Field(default_factory=list)
    definition: dict[str, Any] | None = None
    description: str | None = None

    @model_validator(mode="after")
    def _check_expectation(self) -> Self:
        if self.legs is None and self.absent is None:
            raise ValueError("a test says the 'legs' a call gets or the legs 'absent' from it")
        return self

    @property
    def is_positive(self) -> bool:
        """Expects a leg to be present."""
        return bool(self.legs)

    @property
    def is_negative(self) -> bool:
        """Expects legs to be absent: ``absent`` names some, or ``legs`` is empty."""
        return bool(self.absent) or self.legs == []


class ServerInfoRule(_Strict):
    """The ``serverInfo`` the reviewed server announces in its ``initialize`` result."""

    name: str | list[str] = Field(description="serverInfo.name of the reviewed server (several: any of them)")

    @field_validator("name")
    @classmethod
    def _check_name(cls, v: str | list[str]) -> str | list[str]:
        if not v or any(not n for n in ([v] if isinstance(v, str) else v)):
            raise ValueError("server_info.name is a non-empty name or list of names")
        return v

    @property
    def names(self) -> tuple[str, ...]:
        """Every serverInfo name the reviewed server is known to announce."""
        return (self.name,) if isinstance(self.name, str) else tuple(self.name)


class RuleFile(_Strict):
    """One rule file: metadata, the server it covers, its tool entries and its tests.

    ``server`` matches the name the host gave the server. ``server_info`` and ``packages`` say which server the
    file reviewed, beyond that name: when the session knows a server's identity (its announced ``serverInfo``, the
    package that started it) and it contradicts them, the file does not apply to that server (a server of the
    user's own that merely has the reviewed server's name)."""

    id: UUID
    title: str = Field(min_length=1)
    status: Status
    author: str = Field(min_length=1)
    date: dt.date
    modified: dt.date | None = None
    description: str | None = None
    references: list[str] = Field(default_factory=list)
    server: str
    server_info: ServerInfoRule | None = None
    packages: list[str] = Field(
        default_factory=list,
        description="the npm or PyPI packages or container images that run the reviewed server (any of them)",
    )
    trust: Trust | None = None
    allow_wildcard: bool = Field(
        default=False,
        description=(
            "Accept a server glob that lowers risk for every server it matches: 'trust: trusted', or a tool "
            "entry without a pin that leaves out a leg or removes one. Without it such a file is refused."
        ),
    )
    overrides: UUID | None = None
    tools: list[ToolRule] = Field(default_factory=list)
    tests: list[RuleTest] = Field(default_factory=list)

    @field_validator("server")
    @classmethod
    def _check_server(cls, v: str) -> str:
        return check_glob(v)

    @field_validator("packages")
    @classmethod
    def _check_packages(cls, v: list[str]) -> list[str]:
        if any(not p.strip() for p in v):
            raise ValueError("a package is a non-empty name")
        return v

    @property
    def is_wildcard(self) -> bool:
        """The file's ``server`` is a glob: it covers servers whose names nobody reviewed."""
        return bool(GLOB_CHARS & set(self.server))


GLOB_CHARS = frozenset("*?[")
"""The characters that make a name a glob."""


def find_wildcard_risks(rule: RuleFile) -> list[str]:
    """What a file whose ``server`` is a glob does to lower risk on every server it matches: a trust grant, and
    each tool entry without a pin that leaves a leg out or removes one. Empty for an exact server name.

    A pinned entry is not a risk: it applies only to a tool whose listed definition is the reviewed one."""
    if not rule.is_wildcard:
        return []
    risks = ["trust: trusted"] if rule.trust is Trust.TRUSTED else []
    for i, entry in enumerate(rule.tools):
        if entry.pins:
            continue
        missing = [leg.value for leg in Leg if leg not in entry.legs]
        removed = sorted({leg.value for c in entry.when for leg in c.remove})
        if missing:
            risks.append(f"tools.{i} {entry.match!r} leaves out {', '.join(missing)} without a pin")
        if removed:
            risks.append(f"tools.{i} {entry.match!r} removes {', '.join(removed)} without a pin")
    return risks


def build_rule_schema() -> dict[str, Any]:
    """Return the JSON Schema of a rule file."""
    schema = RuleFile.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "trifecta-monitor rule file"
    return schema
