"""The values lint produces: one finding, the findings of one tool list, and the report of a run.

A finding names its rule (:data:`~monitor.lint._catalogue.LINT_RULES`), the file, the log line and a JSON
pointer into the document as served. Findings are values, never exceptions: a file that cannot be read is
an ``input-unreadable`` finding.
"""

from __future__ import annotations

import hashlib

from pydantic import BaseModel, ConfigDict, Field

from monitor.lint._catalogue import LintSeverity


class LintFinding(BaseModel):
    """One finding: rule id and severity, where (file, log line, JSON pointer into the document as served),
    which server and tool, what is wrong, how to fix it, and a fingerprint that identifies it across runs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    severity: LintSeverity
    file: str
    line: int | None = Field(default=None, description="1-based line of a JSON-lines log; None for documents")
    pointer: str = Field(description="JSON pointer (RFC 6901) into the document (or log line) as served")
    server: str | None = None
    tool: str | None = None
    message: str
    hint: str
    fingerprint: str = Field(description="stable identity: rule, server, tool and field, not the position")


class ListingLint(BaseModel):
    """The findings of one tool listing."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    file: str
    line: int | None = None
    server: str | None = None
    protocol_version: str | None = None
    tools: int
    findings: tuple[LintFinding, ...]


class LintReport(BaseModel):
    """Everything ``trifecta lint`` found: one entry per tool listing, and the inputs it could not read."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    listings: tuple[ListingLint, ...] = ()
    input_errors: tuple[LintFinding, ...] = ()

    @property
    def findings(self) -> tuple[LintFinding, ...]:
        """Every finding, input errors first, then listing by listing."""
        return self.input_errors + tuple(f for listing in self.listings for f in listing.findings)

    def count(self, severity: LintSeverity) -> int:
        """Return how many findings have ``severity``."""
        return sum(1 for f in self.findings if f.severity is severity)

    @property
    def has_errors(self) -> bool:
        """True when any finding (an unreadable input included) is an error: ``trifecta lint`` exits 1."""
        return any(f.severity is LintSeverity.ERROR for f in self.findings)

    @property
    def exit_code(self) -> int:
        """The exit code: 2 when an input could not be read, 1 on errors, else 0.

        See docs/design.md, "Command line and exit codes"."""
        if self.input_errors:
            return 2
        return 1 if self.has_errors else 0


def escape_pointer_token(token: str) -> str:
    """Escape one JSON pointer reference token (RFC 6901: ``~`` → ``~0``, ``/`` → ``~1``)."""
    return token.replace("~", "~0").replace("/", "~1")


def fingerprint(*parts: str) -> str:
    """Return the fingerprint of a finding identified by ``parts`` (32 hex digits of their sha256)."""
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32]
