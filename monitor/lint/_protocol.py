"""The protocol-version rules of the lint catalogue, and :data:`VALIDATORS`: every validator in report order.

The tool-list reader keeps what it noticed about a list's protocol version as notes
(:class:`~monitor.ingest.ProtocolNote`, judged against :data:`monitor.models.PROTOCOL_VERSIONS`); each rule here
reports its notes once per list. The validators are imported here to list them in report order; ``monitor.lint``
exports the same names (the two import lists are alike on purpose).
"""

from __future__ import annotations

from collections.abc import Iterator

from monitor.ingest import ToolList
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


class ListingNoteValidator(ToolValidator):
    """Reports the protocol-version notes of its rule that the tool-list reader kept on the list (see
    :class:`~monitor.ingest.ProtocolNote`): once per list (:meth:`check_listing`, also for a list without
    tools), at the note's own line, under the server whose traffic broke the rule."""

    checks_nameless = True

    def check(self, tool: LintedTool) -> Iterator[LintFinding]:
        """Nothing per tool: the notes are the list's (:meth:`check_listing`)."""
        return iter(())

    def check_listing(self, listing: ToolList) -> Iterator[LintFinding]:
        """Yield the list's notes of this rule."""
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
                server=note.server or listing.server,
                tool=None,
                message=note.message,
                hint=note.hint,
                fingerprint=fingerprint(self.id, note.server or listing.server_name, "", where),
            )


class ProtocolVersionUnknown(ListingNoteValidator):
    """A declared protocol version that is not in :data:`monitor.models.PROTOCOL_VERSIONS`."""

    id = "protocol-version-unknown"


class MethodNotInProtocol(ListingNoteValidator):
    """A method the traffic's protocol version removed (``initialize``, ``ping``... under 2026-07-28)."""

    id = "method-not-in-protocol"


class SessionIdInSessionlessProtocol(ListingNoteValidator):
    """A protocol session id (``Mcp-Session-Id``) in traffic of a version without protocol sessions."""

    id = "session-id-in-sessionless-protocol"


class RequestMetaMissing(ListingNoteValidator):
    """A 2026-07-28 request without its protocol version or client capabilities in ``params._meta``."""

    id = "request-meta-missing"


class ResultTypeMissing(ListingNoteValidator):
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
