"""The library's boundary: what a host may pass in, converted to plain JSON values before the engine sees it.

Hosts hold plain dicts and lists (JSON as parsed) or the ``mcp`` SDK's pydantic objects (``Tool``,
``ListToolsResult``, ``CallToolResult``, content blocks). Both are accepted: a pydantic model is dumped the
way the SDK sends it on the wire (``by_alias``, JSON mode, ``None`` left out), so the same listing or result
gives the same decisions either way. The ``mcp`` package is never imported here: any pydantic model is
recognised by its ``model_dump``. Anything else is a host's programming error, and a :class:`TypeError`
naming the type, raised at once rather than turned into a quiet wrong answer.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from monitor.errors import MonitorWarning
from monitor.models import Decision, Finding, SessionReport, Severity

_SCALARS = (str, int, float, bool, type(None))


def dump_model(value: BaseModel) -> Any:
    """Return a pydantic model as the JSON value the ``mcp`` SDK would send."""
    return value.model_dump(by_alias=True, mode="json", exclude_none=True)


def _describe(value: object) -> str:
    kind = type(value)
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def _plain(value: Any, what: str, depth: int) -> Any:
    """``value`` with pydantic models dumped and mappings made dicts, down to ``depth`` container levels (the
    levels where an SDK object can sit: a result, its content list, its blocks). Deeper values are left as they
    are: the result reader takes JSON values and reads anything else as text. Containers that need no change
    are returned as they are, not copied."""
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, BaseModel):
        return dump_model(value)
    if isinstance(value, Mapping):
        copy: dict[Any, Any] | None = None if isinstance(value, dict) else dict(value)
        if depth > 0:
            for key, item in value.items():
                plain = _plain(item, what, depth - 1)
                if plain is not item:
                    copy = dict(value) if copy is None else copy
                    copy[key] = plain
        return value if copy is None else copy
    if isinstance(value, list | tuple):
        items: list[Any] | None = None if isinstance(value, list) else list(value)
        if depth > 0:
            for n, item in enumerate(value):
                plain = _plain(item, what, depth - 1)
                if plain is not item:
                    items = list(value) if items is None else items
                    items[n] = plain
        return value if items is None else items
    raise TypeError(
        f"{what}: expected a dict, a list, a JSON value or an mcp SDK object (a pydantic model), got {_describe(value)}"
    )


def convert_tools(tools: object) -> list[Any]:
    """Return a ``tools/list`` result as a list of raw tool objects.

    Accepts a list (or tuple) of tool dicts or SDK ``Tool`` objects, one tool, or a whole ``tools/list`` result
    (a ``ListToolsResult`` or a dict with a ``tools`` list). Entries that are JSON but not tools stay in the
    list: the engine reports each as a finding."""
    if isinstance(tools, BaseModel | Mapping):
        plain = _plain(tools, "register_tools(tools=...)", 0)
        if "name" not in plain and isinstance(plain.get("tools"), list):
            return [_plain(item, "register_tools(tools=[...])", 0) for item in plain["tools"]]
        return [plain]
    if isinstance(tools, list | tuple):
        return [_plain(item, "register_tools(tools=[...])", 0) for item in tools]
    raise TypeError(
        "register_tools(tools=...): expected a list of tool dicts or mcp Tool objects, a ListToolsResult or one "
        f"tool, got {_describe(tools)}"
    )


def convert_arguments(arguments: object) -> Mapping[str, Any] | None:
    """Return a call's arguments as a mapping (or None)."""
    if arguments is None or isinstance(arguments, Mapping):
        return arguments
    if isinstance(arguments, BaseModel):
        dumped = dump_model(arguments)
        if isinstance(dumped, dict):
            return dumped
    raise TypeError(
        "before_call(arguments=...): expected a dict of arguments, None or a pydantic model, "
        f"got {_describe(arguments)}"
    )


def convert_result(result: object) -> tuple[Any, bool]:
    """Return a call's result as JSON values, and whether the result itself says it is an error (``isError``)."""
    plain = _plain(result, "after_call(result=...)", 3)
    return plain, isinstance(plain, dict) and plain.get("isError") is True


def warn_and_find(finding_id: str, message: str, pointer: str = "/", severity: Severity = Severity.WARNING) -> Finding:
    """Warn (``MonitorWarning``) and return the same problem as a finding, for the value handed back."""
    warnings.warn(message, MonitorWarning, stacklevel=3)
    return Finding(id=finding_id, severity=severity, message=message, pointer=pointer)


def warn_dropped_tools(server: str, findings: list[Finding]) -> list[Finding]:
    """Warn about each tool of a listing that was dropped (it had no name); return the findings."""
    for finding in findings:
        if finding.id == "tool-without-name":
            message = f"{server}: tool at {finding.pointer} dropped: {finding.message}"
            warnings.warn(message, MonitorWarning, stacklevel=3)
    return findings


def note_call_id(decision: Decision, call_id: str | None) -> Decision:
    """Add to a decision the finding that says its ``call_id`` is not the one the host gave."""
    if decision.call_id == call_id:
        return decision
    if call_id is None:
        finding_id, severity = "call-id-assigned", Severity.INFO
        message = f"the call had no id; it is {decision.call_id!r} (pass that to after_call)"
    else:
        finding_id, severity = "call-id-reused", Severity.WARNING
        message = f"call id {call_id!r} was already used in the session; this call is {decision.call_id!r}"
        message += " (pass that to after_call)"
    finding = Finding(id=finding_id, severity=severity, message=message, pointer="/call_id")
    return decision.model_copy(update={"findings": (*decision.findings, finding)})


def warn_reused_call_id(decision: Decision) -> Decision:
    """Warn (to the host) when the decision says the host's call id was already used; return the decision."""
    for finding in decision.findings:
        if finding.id == "call-id-reused":
            warnings.warn(finding.message, MonitorWarning, stacklevel=3)
    return decision


def report_unknown_session(report: SessionReport) -> SessionReport:
    """Mark the empty report of a session the monitor does not hold (and warn)."""
    message = f"session {report.session_id!r} is not held by the monitor (never seen, or already ended)"
    finding = warn_and_find("unknown-session", message, "/session_id")
    return report.model_copy(update={"findings": (finding,)})
