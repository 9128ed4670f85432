"""A server's ``tools/list`` result entering a session: each tool classified, with what the host knows of the
server (its identity) deciding which rule files are its own."""

from __future__ import annotations

from typing import Any

from monitor.classify import Classifier
from monitor.models import AlertKind, Finding, ServerIdentity, Severity, ToolContext, parse_tool
from monitor.session._facts import alert_on_changed_definition, alert_on_void_pin
from monitor.session._state import SessionState


def register_listing(
    state: SessionState,
    classifier: Classifier,
    server: str,
    tools: Any,
    trusted: bool,
    identity: ServerIdentity | None = None,
) -> list[Finding]:
    """Classify each listed tool of ``server``; a malformed entry becomes a finding (and an alert), never an error.

    ``identity`` (what the host knows of the server besides its name) is kept for the session's later calls of the
    server; a listing without one keeps the one given before. A rule file that covers the server by name but
    reviewed another server does not apply to it, and the session says so once (:func:`alert_on_identity_clash`)."""
    if identity is not None and identity.is_known:
        state.identities[server] = identity
    known = state.identities.get(server)
    alert_on_identity_clash(state, classifier, server, known)
    findings: list[Finding] = []
    items = tools if isinstance(tools, list) else [tools]
    trust = classifier.trust_for(server, bool(trusted), known)
    for i, raw in enumerate(items):
        definition, tool_findings = parse_tool(raw, f"/tools/{i}")
        findings.extend(tool_findings)
        name = definition.name if definition else f"#{i}"
        for finding in tool_findings:
            state.raise_alert(
                AlertKind.INVALID_ANNOTATION, None, f"{server}/{name}: {finding.message} ({finding.pointer})"
            )
        if definition is None:
            continue
        alert_on_changed_definition(state, server, definition)
        state.tools[(server, definition.name)] = (definition, trust)
        context = ToolContext(server, definition.name, definition, trust, server_identity=known)
        classified = classifier.classify(context)
        alert_on_void_pin(state, server, definition.name, classified, None)
        state.add_available(classified.classification.legs, None)
    return findings


def alert_on_identity_clash(
    state: SessionState, classifier: Classifier, server: str, identity: ServerIdentity | None
) -> None:
    """Raise ``definition-changed`` [info] once per server in a session when a rule file covers it by name but its
    identity is not the server the file reviewed: the file is not applied (no reviewed legs, no trust), its tools
    are judged as an unreviewed server's, and the message says how to review them."""
    if server in state.clashes:
        return
    clash = classifier.find_identity_clash(server, identity)
    if clash is not None:
        state.clashes.add(server)
        state.raise_alert(AlertKind.DEFINITION_CHANGED, None, clash.describe(), Severity.INFO)
