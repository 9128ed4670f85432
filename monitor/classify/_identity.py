"""Which server a rule file reviewed, beyond its name: whether what a session knows of a server contradicts it.

A rule file's ``server`` matches the name the host gave a server, and anyone can give a server any name: a user's
own server called ``fetch`` is not the reference Fetch server the ``fetch`` pack reviewed. A file may therefore
say which server it reviewed (``server_info: {name: mcp-fetch}``, ``packages: [mcp-server-fetch]``). When the
session knows the server's identity (:class:`~monitor.models.ServerIdentity`: the ``serverInfo`` of its
``initialize`` result, the package that started it) and a known part contradicts the file, the file does not apply
to that server: its tools are classified as an unreviewed server's (annotations, heuristics, the posture default;
nothing of the file, not its trust either), and the session says so once (:class:`IdentityClash`). What is not
known never contradicts: a server known only by its name is covered by name, as before.
"""

from __future__ import annotations

from dataclasses import dataclass

from monitor.classify._rules import RuleFile
from monitor.models import ServerIdentity

_REGISTRY_PREFIXES = ("npm:", "pypi:", "docker:")
_VERSION_MARKS = "@=<>~!;[ "


def normalize_package(name: str) -> str:
    """Return a package or image name as rule files and identities are compared: lower case, without a registry
    prefix (``npm:``, ``pypi:``, ``docker:``) or a version (``@1.2.0``, ``==1.2``, ``:latest``)."""
    text = name.strip().lower()
    for prefix in _REGISTRY_PREFIXES:
        text = text.removeprefix(prefix)
    scope, body = ("@", text[1:]) if text.startswith("@") else ("", text)
    cut = min((i for i, ch in enumerate(body) if ch in _VERSION_MARKS), default=len(body))
    body = body[:cut]
    head, slash, last = body.rpartition("/")
    return scope + head + slash + last.partition(":")[0]


def find_identity_conflict(rule: RuleFile, identity: ServerIdentity | None) -> str | None:
    """Return the part of ``identity`` that contradicts the server ``rule`` says it reviewed (``serverInfo X``,
    ``package Y``); None when nothing known contradicts it (no identity, or the file declares none)."""
    if identity is None:
        return None
    info = rule.server_info
    if identity.name and info is not None and identity.name not in info.names:
        return f"serverInfo {identity.name}"
    reviewed = {normalize_package(p) for p in rule.packages}
    if identity.package and reviewed and normalize_package(identity.package) not in reviewed:
        return f"package {identity.package}"
    return None


def describe_reviewed(rule: RuleFile) -> str:
    """Return the identity a rule file declares, in words: ``serverInfo mcp-fetch; package mcp-server-fetch``."""
    parts = []
    if rule.server_info is not None:
        parts.append("serverInfo " + " or ".join(rule.server_info.names))
    if rule.packages:
        parts.append("package " + " or ".join(rule.packages))
    return "; ".join(parts)


@dataclass(frozen=True)
class IdentityClash:
    """A rule file covers a server by its name, but what the session knows of the server contradicts the server
    the file reviewed: the file does not apply to it."""

    server: str
    rule_id: str
    title: str
    reviewed: str
    """The identity the file declares, in words."""
    seen: ServerIdentity

    def describe(self) -> str:
        """Return what happened and what to do, in one message."""
        return (
            f"{self.server}: the server named {self.server!r} is not the one rule {self.rule_id} ({self.title}) "
            f"reviewed: the session knows it as {self.seen.describe()}, the rule covers {self.reviewed}. Its tools are "
            "judged as an unreviewed server's (annotations, heuristics, the posture default). To review them, draft "
            "a rule pack for it with 'trifecta rules suggest' and pin it, or give the server a name of its own"
        )
