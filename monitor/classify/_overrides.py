"""Layer 1: reviewed override rules applied to calls (docs/design.md, "Classification" and "Rule files").

A :class:`RuleSet` holds the loaded rule files and finds the entry that covers a call; its ``when`` conditions add or
remove legs for that call. A pin the session's definition does not match voids the entry; a pin the session could
not check lets the entry only add legs (:class:`UncheckedPin`). Order, conditions, bounds and pins: docs/rules.md.
"""

from __future__ import annotations

import fnmatch
import re
import string
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from monitor.classify._identity import IdentityClash, describe_reviewed, find_identity_conflict
from monitor.classify._rules import (
    GLOB_CHARS,
    MAX_REGEX_INPUT,
    Condition,
    RuleFile,
    ToolRule,
    Trust,
    compile_regex,
)
from monitor.evidence import canonical_host, find_addresses, host_of_url, is_internal_host, normalize_text
from monitor.models import (
    Classification,
    DestinationKind,
    Leg,
    LegSource,
    OverrideMatch,
    PinMismatch,
    Provenance,
    ServerIdentity,
    SessionFacts,
    ToolContext,
)


@dataclass(frozen=True)
class LoadedRule:
    """A rule file and where it came from."""

    rule: RuleFile
    path: Path
    lines: Mapping[str, int] = field(default_factory=dict)

    @property
    def source(self) -> str:
        """``file:line`` of the rule's ``id``."""
        return f"{self.path}:{self.lines.get('id', 1)}"


def rule_id(rule: RuleFile, entry: ToolRule) -> str:
    """The id a tool entry is cited by in provenance: ``<file id>/<match>``."""
    return f"{rule.id}/{entry.match}"


def split_path(path: str) -> list[str]:
    """Split an argument path (``a.b``, ``a/0/b`` or ``/a/b``) into its parts."""
    return [p for p in path.replace(".", "/").split("/") if p]


def resolve_argument(arguments: Mapping[str, Any], path: str) -> list[Any]:
    """Every value at ``path``; a list met on the way (or at the end) fans out to its elements."""
    values: list[Any] = [arguments]
    for part in split_path(path):
        nxt: list[Any] = []
        for value in values:
            if isinstance(value, Mapping) and part in value:
                nxt.append(value[part])
            elif isinstance(value, list):
                if part.isdigit() and int(part) < len(value):
                    nxt.append(value[int(part)])
                else:
                    nxt.extend(v[part] for v in value if isinstance(v, Mapping) and part in v)
        values = nxt
    flat: list[Any] = []
    for value in values:
        flat.extend(value if isinstance(value, list) else [value])
    return flat


def _fill_template(template: str, arguments: Mapping[str, Any]) -> str | None:
    out = []
    for literal, name, _, _ in string.Formatter().parse(template):
        out.append(literal)
        if name is not None:
            values = resolve_argument(arguments, name)
            if len(values) != 1 or isinstance(values[0], dict | list):
                return None
            out.append(str(values[0]))
    return "".join(out)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return a.casefold() == b.casefold()
    return bool(a == b) and type(a) is type(b)


def _domain_of(kind: DestinationKind, value: str) -> str:
    return value.rsplit("@", 1)[-1] if kind is DestinationKind.EMAIL else value


def _on_domains(domains: set[str], allowed: Sequence[str]) -> bool:
    return bool(domains) and all(any(d == a or d.endswith("." + a) for a in allowed) for d in domains)


class CompiledCondition:
    """A :class:`Condition` ready to test calls."""

    def __init__(self, condition: Condition) -> None:
        self.condition = condition
        self._regex = compile_regex(condition.regex) if condition.regex is not None else None
        self._allowed = [d.lower().removeprefix("www.") for d in condition.domain_in or []]

    def holds(self, arguments: Mapping[str, Any], facts: SessionFacts | None) -> bool | None:
        """Whether the condition holds for a call (``not`` applied); None when a value is too long for its glob
        or regex to examine (the caller then applies the condition's additions and not its removals)."""
        c = self.condition
        if c.arg is not None:
            values = resolve_argument(arguments, c.arg)
        else:
            filled = _fill_template(c.value or "", arguments)
            values = [] if filled is None else [filled]
        found = self._test(values, facts)
        return None if found is None else found != c.negate

    def _test(self, values: list[Any], facts: SessionFacts | None) -> bool | None:
        c = self.condition
        if not values:
            return False
        if "equals" in c.model_fields_set:
            return any(_same(v, c.equals) for v in values)
        if c.in_ is not None:
            return any(_same(v, option) for v in values for option in c.in_)
        texts = [v if isinstance(v, str) else str(v) for v in values if not isinstance(v, dict | list)]
        if (c.glob is not None or self._regex is not None) and any(len(t) > MAX_REGEX_INPUT for t in texts):
            return None  # not examined: never judged by a prefix
        if c.glob is not None:
            return any(fnmatch.fnmatchcase(t.casefold(), c.glob.casefold()) for t in texts)
        if self._regex is not None:
            return any(self._regex.search(t) is not None for t in texts)
        if c.internal_host:
            return any(names_internal_host(t) for t in texts)
        if c.domain_in is not None:
            domains = {
                _domain_of(kind, value)
                for t in texts
                for kind, value in find_addresses(t)
                if kind in (DestinationKind.EMAIL, DestinationKind.DOMAIN)
            }
            return _on_domains(domains, self._allowed)
        if c.seen_with is not None:
            if facts is None:
                return False
            wanted = {k: str(v).casefold() for k, v in c.seen_with.items()}
            return any(
                all(k in attrs and str(attrs[k]).casefold() == v for k, v in wanted.items())
                for t in texts
                for attrs in facts.attributes_of(normalize_text(t))
            )
        return False


_MAX_FOUND = 4_096
_MAX_FOUND_CHARS = 512
_URL_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)
_WITH_AUTHORITY = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)


def names_internal_host(text: str) -> bool:
    """Whether a URL-like value stays on the user's machine or network: a ``file:`` URL (on no server, or an
    internal one), or a URL (or a ``host[:port][/path]`` without scheme) whose host
    :func:`monitor.evidence.is_internal_host` calls internal, read by a browser and by an RFC 3986 parser alike
    (``http://localhost\\@evil.example`` is public to one of them). A value with another scheme and no
    authority (``mailto:``, ``data:``, ``javascript:``) is not internal."""
    value = text.strip()
    if value[:5].lower() == "file:":
        host = host_of_url(value)  # file://server/share opens a share on that server
        return host is not None and (host == "" or is_internal_host(host))
    if not _WITH_AUTHORITY.match(value):
        scheme = _URL_SCHEME.match(value)
        if scheme is not None and not value[scheme.end() : scheme.end() + 1].isdigit():
            return False  # a scheme without an authority, not a host followed by its port
        value = "http://" + value
    return all(host is not None and is_internal_host(host) for host in _hosts_of(value))


def _hosts_of(url: str) -> list[str | None]:
    """The host of ``url`` as a browser reads it and as an RFC 3986 parser reads it (they differ on ``\\``)."""
    try:
        strict = urlsplit(url).hostname
    except ValueError:
        strict = None
    return [host_of_url(url), None if strict is None else canonical_host(strict)]


@dataclass
class _Entry:
    loaded: LoadedRule
    entry: ToolRule
    conditions: list[CompiledCondition]

    @cached_property
    def rule_id(self) -> str:
        return rule_id(self.loaded.rule, self.entry)

    @cached_property
    def base(self) -> dict[Leg, Provenance]:
        prov = Provenance(source=LegSource.OVERRIDE, rule=self.rule_id)
        return dict.fromkeys(self.entry.legs, prov)


class RuleSet:
    """The loaded reviewed rules: classifies the calls they cover and reports the trust they give servers."""

    def __init__(self, rules: Sequence[LoadedRule], sha256: str) -> None:
        self.rules = tuple(rules)
        self.sha256 = sha256
        overridden = {r.rule.overrides for r in rules if r.rule.overrides is not None}
        self.active = tuple(r for r in rules if r.rule.id not in overridden)
        # Exact server names are looked up directly; globs are tried in load order after them.
        self._exact: dict[str, list[LoadedRule]] = {}
        self._globbed: list[LoadedRule] = []
        for r in self.active:
            if GLOB_CHARS & set(r.rule.server):
                self._globbed.append(r)
            else:
                self._exact.setdefault(r.rule.server, []).append(r)
        self._entries: dict[int, list[_Entry]] = {
            id(r): [_Entry(r, e, [CompiledCondition(c) for c in e.when]) for e in r.rule.tools] for r in self.active
        }
        # The entry found for each (server, tool, identity), and the trust for each (server, identity): the rules
        # never change once loaded. Names are the input's, so the tables keep short names only, and a bounded
        # number of them (emptied when full).
        self._found: dict[tuple[str, str, ServerIdentity | None], _Entry | None] = {}
        self._trust: dict[tuple[str, ServerIdentity | None], bool | None] = {}

    def __len__(self) -> int:
        return len(self.rules)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle as the loaded files: the lookup tables are keyed by object identity and are rebuilt on arrival
        (a worker process or the span processor's engine gets the packs its parent loaded)."""
        return (RuleSet, (self.rules, self.sha256))

    def _match_name(self, server: str) -> Iterator[LoadedRule]:
        """The files whose ``server`` matches the name: exact names first, then globs in load order."""
        yield from self._exact.get(server, ())
        yield from (r for r in self._globbed if fnmatch.fnmatchcase(server, r.rule.server))

    def _files_for(self, server: str, identity: ServerIdentity | None = None) -> Iterator[LoadedRule]:
        """The files whose ``server`` matches the name, less those the server's known identity contradicts."""
        return (r for r in self._match_name(server) if find_identity_conflict(r.rule, identity) is None)

    def trust_for(self, server: str, identity: ServerIdentity | None = None) -> bool | None:
        """The trust the first rule file covering ``server`` (of that ``identity``, when known) gives it, if any. A
        file the identity contradicts grants no trust, but its ``untrusted`` still holds: what a server announces
        never makes it more trusted than its name does."""
        if len(server) > _MAX_FOUND_CHARS:
            return self._look_up_trust(server, identity)
        key = (server, identity)
        try:
            return self._trust[key]
        except KeyError:
            trust = self._look_up_trust(server, identity)
        if len(self._trust) >= _MAX_FOUND:
            self._trust.clear()
        self._trust[key] = trust
        return trust

    def _look_up_trust(self, server: str, identity: ServerIdentity | None) -> bool | None:
        for r in self._match_name(server):
            if r.rule.trust is None:
                continue
            if find_identity_conflict(r.rule, identity) is None:
                return r.rule.trust is Trust.TRUSTED
            if r.rule.trust is Trust.UNTRUSTED:
                return False
        return None

    def find_clash(self, server: str, identity: ServerIdentity | None) -> IdentityClash | None:
        """The first rule file that covers ``server`` by name but reviewed another server than the one ``identity``
        describes (the file does not apply to it), if any."""
        if identity is None:
            return None
        for r in self._match_name(server):
            if find_identity_conflict(r.rule, identity) is not None:
                return IdentityClash(server, str(r.rule.id), r.rule.title, describe_reviewed(r.rule), identity)
        return None

    def find(
        self, server: str, tool: str, identity: ServerIdentity | None = None
    ) -> tuple[LoadedRule, ToolRule] | None:
        """The rule file and tool entry that cover ``server``/``tool`` (of that ``identity``, when known), if any."""
        entry = self._find(server, tool, identity)
        return (entry.loaded, entry.entry) if entry else None

    def _find(self, server: str, tool: str, identity: ServerIdentity | None = None) -> _Entry | None:
        if len(server) + len(tool) > _MAX_FOUND_CHARS:
            return self._look_up(server, tool, identity)
        key = (server, tool, identity)
        try:
            return self._found[key]
        except KeyError:
            found = self._look_up(server, tool, identity)
        if len(self._found) >= _MAX_FOUND:
            self._found.clear()
        self._found[key] = found
        return found

    def _look_up(self, server: str, tool: str, identity: ServerIdentity | None) -> _Entry | None:
        for r in self._files_for(server, identity):
            for entry in self._entries[id(r)]:
                if fnmatch.fnmatchcase(tool, entry.entry.match):
                    return entry
        return None

    def classify(self, tool: ToolContext) -> OverrideMatch | None:
        """The reviewed legs of a call, with argument conditions applied; None if no rule covers it, or if the
        entry that covers it is pinned and the session listed no definition to check the pin against."""
        return self.match(tool)[0]

    def match(self, tool: ToolContext) -> tuple[OverrideMatch | None, UncheckedPin | None]:
        """:meth:`classify`, and the entry whose pin could not be checked (no definition listed), if any."""
        found = self._find(tool.server, tool.name, tool.server_identity)
        if found is None:
            return None, None
        pins = found.entry.pins
        if pins and tool.definition is None:
            legs = {
                leg: Provenance(source=prov.source, rule=f"{prov.rule}#pin-unchecked")
                for leg, prov in self._apply(found, tool, remove=False).items()
            }
            return None, UncheckedPin(found.rule_id, pins, Classification(provenance=legs))
        if pins and tool.definition is not None and tool.definition.definition_hash not in pins:
            seen = tool.definition.definition_hash
            voided = PinMismatch(found.rule_id, ", ".join(pins), seen)
            return OverrideMatch(None, (found.rule_id,), voided=voided), None
        provenance = self._apply(found, tool, remove=True)
        return OverrideMatch(
            Classification(provenance=provenance),
            (found.rule_id,),
            tuple(found.entry.destinations),
            read_only=found.entry.read_only,
            retry_safe=found.entry.retry == "safe",
        ), None

    @staticmethod
    def _apply(found: _Entry, tool: ToolContext, remove: bool) -> dict[Leg, Provenance]:
        """The entry's legs with the conditions that hold for the call applied (their removals only if ``remove``)."""
        provenance = dict(found.base)
        if found.conditions and tool.arguments is not None:
            for i, cond in enumerate(found.conditions):
                holds = cond.holds(tool.arguments, tool.facts)
                if holds is not False:  # None (not examined): the additions apply, the removals do not
                    if remove and holds:
                        for leg in cond.condition.remove:
                            provenance.pop(leg, None)
                    prov = Provenance(source=LegSource.OVERRIDE, rule=f"{found.rule_id}#when{i}")
                    for leg in cond.condition.add:
                        provenance.setdefault(leg, prov)
        return provenance


@dataclass(frozen=True)
class UncheckedPin:
    """A pinned entry covers the call, but the session listed no definition of the tool to check the pin
    against: the entry's ``legs`` (its conditions' additions included, its removals not) may only be added to
    what the other layers say."""

    rule_id: str
    pins: tuple[str, ...]
    legs: Classification
