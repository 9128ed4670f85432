"""Who a server is, beyond the name the host gave it: what it announced and the package that started it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from monitor.models._protocol import SERVER_INFO_META_KEY

MAX_IDENTITY_CHARS = 200
"""The longest ``serverInfo`` name or version kept as sent; a longer one is cut and marked (``…``), so it can
never equal a name a rule pack declares."""


class ServerIdentity(BaseModel):
    """What the session knows of a server besides its name: the ``serverInfo`` its ``initialize`` result announced
    (``name``, ``version``) and the package that started it (``package``: an npm or PyPI package or a container
    image, as the host's configuration names it, e.g. ``mcp-server-fetch`` for ``uvx mcp-server-fetch``). Each
    part is None when not known. A built-in rule pack that declares the identity of the server it reviewed applies
    only to a server whose known identity agrees with it (docs/rules.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | None = Field(default=None, description="serverInfo.name of the initialize result")
    version: str | None = Field(default=None, description="serverInfo.version of the initialize result")
    package: str | None = Field(default=None, description="the npm or PyPI package or container image that ran it")

    @property
    def is_known(self) -> bool:
        """Whether any part of the identity is known."""
        return bool(self.name or self.package)

    def describe(self) -> str:
        """Return the identity in words: ``serverInfo mcp-fetch 2026.10.24, package mcp-server-fetch``."""
        parts = []
        if self.name:
            parts.append(f"serverInfo {self.name}" + (f" {self.version}" if self.version else ""))
        if self.package:
            parts.append(f"package {self.package}")
        return ", ".join(parts) or "no identity"


def read_server_info(info: Any, package: str | None = None) -> ServerIdentity | None:
    """Return the identity a ``serverInfo`` object announces (``name``, ``version``), with ``package`` (what
    started the server, when the host knows it); None when nothing of it is known.

    ``info`` comes from the server, so it is read as hostile: only strings count (anything else is not known),
    blanks around them are dropped, a character that is not printable becomes U+FFFD, and a value longer than
    :data:`MAX_IDENTITY_CHARS` is cut and marked."""
    fields = info if isinstance(info, dict) else {}
    identity = ServerIdentity(
        name=_read_text(fields.get("name")), version=_read_text(fields.get("version")), package=package or None
    )
    return identity if identity.is_known else None


def read_announced_identity(result: Any, *, initialize: bool, package: str | None = None) -> ServerIdentity | None:
    """Return the identity a server announces in a result: the ``serverInfo`` of an ``initialize`` result, else the
    ``io.modelcontextprotocol/serverInfo`` stamp in the result's ``_meta`` (MCP 2026-07-28), with ``package`` as
    in :func:`read_server_info`; None when the result names none (and no package is given)."""
    info = result.get("serverInfo") if isinstance(result, dict) and initialize else None
    if not isinstance(info, dict) and isinstance(result, dict):
        meta = result.get("_meta")
        info = meta.get(SERVER_INFO_META_KEY) if isinstance(meta, dict) else None
    return read_server_info(info, package)


def _read_text(value: Any) -> str | None:
    """A string of a server's ``serverInfo`` as kept: stripped, printable, bounded; None for anything else."""
    if not isinstance(value, str):
        return None
    text = value[: MAX_IDENTITY_CHARS * 4].strip()
    if not text:
        return None
    text = "".join(ch if ch.isprintable() else "\ufffd" for ch in text[: MAX_IDENTITY_CHARS + 1])
    return text if len(text) <= MAX_IDENTITY_CHARS else text[:MAX_IDENTITY_CHARS] + "…"
