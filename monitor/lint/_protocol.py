"""The protocol-version rules of the lint catalogue, and :data:`VALIDATORS`: every validator in report order.

The tool-list reader keeps what it noticed about a list's protocol version as notes
(:class:`~monitor.ingest.ProtocolNote`, judged against :data:`monitor.models.PROTOCOL_VERSIONS`); each rule here
reports its notes once per list.
"""

from __future__ import annotations

from collections.abc import Iterator

from monitor.lint._findings import LintFinding, fingerprint
from monitor.lint._validators import (
    AnnotationsNotObject,
    AnnotationsUnsupportedProtocol,
    AnnotationUnknownMember,
    DestructiveNameNotDestructive,
    DuplicateToolName,
    HiddenUnicode,
    HintIgnoredWhenReadOnly,
    HintMissing,
    HintNotBoolean,
    InstructionInDescription,
    LintedTool,
    NetworkNameClosedWorld,
    ReadNameNotReadOnly,
    TitleNotString,
    ToolValidator,
    ToolWithoutName,
    Validator,
)


class _ProtocolNoteValidator(ToolValidator):
    """Reports the protocol-version notes of its rule that the tool-list reader kept on the list (see
    :class:`~monitor.ingest.ProtocolNote`): once per list, with the first tool, at the note's own line."""

    checks_nameless = True

    def __init__(self) -> None:
        self._reported = False

    def check(self, tool: LintedTool) -> Iterator[LintFinding]:
        """Yield the list's notes of this rule, the first time a tool of the list is checked."""
        if self._reported:
            return
        self._reported = True
        listing = tool.listing
        for note in listing.protocol_notes:
            if note.rule != self.id:
                continue
            where = note.pointer if note.line is None else f"line {note.line}: {note.pointer}"
            yield LintFinding(
                id=self.id,
                severity=self.severity,
                file=listing.file,
                line=note.line,
                pointer=note.pointer,
                server=listing.server,
                tool=None,
                message=note.message,
                hint=note.hint,
                fingerprint=fingerprint(self.id, listing.server_name, "", where),
            )


class ProtocolVersionUnknown(_ProtocolNoteValidator):
    """A declared protocol version that is not in :data:`monitor.models.PROTOCOL_VERSIONS`."""

    id = "protocol-version-unknown"


class MethodNotInProtocol(_ProtocolNoteValidator):
    """A method the traffic's protocol version removed (``initialize``, ``ping``... under 2026-07-28)."""

    id = "method-not-in-protocol"


class SessionIdInSessionlessProtocol(_ProtocolNoteValidator):
    """A protocol session id (``Mcp-Session-Id``) in traffic of a version without protocol sessions."""

    id = "session-id-in-sessionless-protocol"


class RequestMetaMissing(_ProtocolNoteValidator):
    """A 2026-07-28 request without its protocol version or client capabilities in ``params._meta``."""

    id = "request-meta-missing"


class ResultTypeMissing(_ProtocolNoteValidator):
    """A 2026-07-28 result without ``resultType``."""

    id = "result-type-missing"


VALIDATORS: tuple[type[Validator], ...] = (
    ProtocolVersionUnknown,
    MethodNotInProtocol,
    SessionIdInSessionlessProtocol,
    RequestMetaMissing,
    ResultTypeMissing,
    ToolWithoutName,
    AnnotationsNotObject,
    AnnotationUnknownMember,
    TitleNotString,
    HintNotBoolean,
    AnnotationsUnsupportedProtocol,
    HintMissing,
    HintIgnoredWhenReadOnly,
    DestructiveNameNotDestructive,
    ReadNameNotReadOnly,
    NetworkNameClosedWorld,
    HiddenUnicode,
    InstructionInDescription,
    DuplicateToolName,
)
"""Every validator, in the order their findings are reported for a tool."""
