"""A whole trace at once: sessions inherited from ancestors, the spans of one call merged, time order.

:func:`assemble_trace` turns the :class:`~monitor.spans.SpanFacts` of one trace (or the part of it not yet
read) into time-ordered items that become events, and links that let spans arriving later still find their
session and be recognised as duplicates.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from monitor.errors import MonitorWarning
from monitor.spans import _semconv as semconv
from monitor.spans._facts import UNKNOWN_SERVER, SpanFacts, ToolFacts, ToolList


class SpanLink(NamedTuple):
    """What is remembered of a span after its trace was turned into events: enough for late descendants."""

    parent_id: str | None
    session_id: str
    tool: str | None
    call_id: str | None


@dataclass(slots=True)
class MergedCall:
    """One logical tool call: the merge of every span that records it."""

    session_id: str
    call_id: str
    server: str
    tool: str
    arguments: dict[str, Any] | None
    result: Any
    is_error: bool
    start_ns: int | None
    end_ns: int | None
    span_ids: tuple[str, ...]
    source: str | None = None


# Order of events at the same instant: a session's tools and user words come before what the agent does.
_RANK_TOOLS = 0
_RANK_USER = 1
_RANK_RESULT = 2
_RANK_CALL = 3
_RANK_OWN_RESULT = 4  # a result at the very instant its own call started


class TraceItem(NamedTuple):
    """One event-to-be of a trace, in the trace's time order."""

    session_id: str
    time_ns: int
    rank: int
    seq: int
    payload: MergedCall | str | ToolList
    source: str | None = None

    @property
    def starts_call(self) -> bool:
        """Return True for the item of a call's start; the other item of a :class:`MergedCall` is its result."""
        return self.rank == _RANK_CALL


@dataclass(slots=True)
class TraceAssembly:
    """A trace turned into event-to-be items (time-ordered) and links to remember for late spans."""

    items: list[TraceItem]
    links: dict[str, SpanLink]
    calls: list[MergedCall]


def _no_link(_span_id: str) -> SpanLink | None:
    return None


def assemble_trace(
    trace_id: str,
    spans: Mapping[str, SpanFacts],
    known: Callable[[str], SpanLink | None] = _no_link,
) -> TraceAssembly:
    """Turn the spans of one trace (or the part of it not yet read) into time-ordered event items.

    ``known`` looks up spans of the same trace that were already turned into events (their links), so that
    spans arriving late still inherit a session and are recognised as duplicates.

    **Session** of a span: the first of :data:`SESSION_KEYS` on the span, else on its nearest ancestor that
    has one, else the resource attributes of the outermost ancestor reached, else the first ``mcp.session.id``
    of the trace (never one of a span whose ``mcp.protocol.version`` has no protocol sessions, such as
    2026-07-28), else the trace id.

    **One call, several spans** (an agent's ``execute_tool`` span, an MCP client span and an MCP server span
    below it): a tool span is part of the same call as its nearest tool-span ancestor when both name the
    same tool (after ``mcp__<server>__`` is taken off) or carry the same call id; tool spans of a trace
    that carry the same call id (``gen_ai.tool.call.id``, ``tool_call.id``, ``tool.id``) are one call too.
    A tool span below a *different* tool (a tool that calls tools) is a call of its own. The merged call
    takes, outermost span first, the tool name, the first call id given (else the first JSON-RPC request
    id, else the outermost span's id), the first arguments and result recorded, and is an error when any
    of its spans is. A call whose nearest tool ancestor was already emitted, and matches, is dropped.

    **Server**, first found over the call's spans: an explicit attribute (``mcp.server.name``, or a
    Traceloop ``traceloop.workflow.name`` of the form ``<server>.mcp``), the ``mcp__<server>__<tool>``
    prefix of a tool name, ``server.address``, else :data:`UNKNOWN_SERVER`, with a :class:`MonitorWarning`
    (once per process) that names the attributes to set.
    """
    sessions = _resolve_sessions(trace_id, spans, known)
    depths = _depths(spans)
    order = {span_id: i for i, span_id in enumerate(spans)}
    groups, emitted_elsewhere = _group_tool_spans(spans, known, depths, order)

    links: dict[str, SpanLink] = {}
    calls: list[MergedCall] = []
    items: list[TraceItem] = []
    seq = 0
    for members in groups:
        members.sort(key=lambda s: (depths[s], spans[s].start_ns or 0, order[s]))
        call = _merge(members, spans, sessions)
        duplicates = [m for m in members if m in emitted_elsewhere]
        if duplicates:
            for m in members:
                links[m] = SpanLink(spans[m].parent_id, sessions[m], call.tool, emitted_elsewhere[duplicates[0]])
            continue
        calls.append(call)
        for m in members:
            links[m] = SpanLink(spans[m].parent_id, sessions[m], call.tool, call.call_id)
        start = call.start_ns or 0
        end = call.end_ns if call.end_ns is not None else start
        items.append(TraceItem(call.session_id, start, _RANK_CALL, seq, call, call.source))
        rank = _RANK_RESULT if end > start else _RANK_OWN_RESULT
        items.append(TraceItem(call.session_id, end, rank, seq + 1, call, call.source))
        seq += 2
    for span_id, facts in spans.items():
        if span_id not in links:
            links[span_id] = SpanLink(facts.parent_id, sessions[span_id], None, None)
        start = facts.start_ns or 0
        for tool_list in facts.tool_lists:
            items.append(TraceItem(sessions[span_id], start, _RANK_TOOLS, seq, tool_list, facts.source))
            seq += 1
        for text in facts.user_texts:
            items.append(TraceItem(sessions[span_id], start, _RANK_USER, seq, text, facts.source))
            seq += 1
    items.sort(key=lambda item: (item.time_ns, item.rank, item.seq))
    return TraceAssembly(items=items, links=links, calls=calls)


def _group_tool_spans(
    spans: Mapping[str, SpanFacts],
    known: Callable[[str], SpanLink | None],
    depths: Mapping[str, int],
    order: Mapping[str, int],
) -> tuple[list[list[str]], dict[str, str | None]]:
    """The tool spans of a trace grouped into calls (see :func:`assemble_trace`), and the spans that duplicate a
    call already emitted (span id -> that call's id)."""
    parent_of = _parent_lookup(spans, known)
    tool_ids = [span_id for span_id, facts in spans.items() if facts.tool is not None]
    union = {span_id: span_id for span_id in tool_ids}

    def find(span_id: str) -> str:
        while union[span_id] != span_id:
            union[span_id] = union[union[span_id]]
            span_id = union[span_id]
        return span_id

    emitted_elsewhere: dict[str, str | None] = {}
    by_call_id: dict[str, str] = {}
    for span_id in tool_ids:
        tool = spans[span_id].tool
        assert tool is not None
        ancestor = _nearest_tool_ancestor(span_id, spans, known, parent_of)
        if isinstance(ancestor, str):
            other = spans[ancestor].tool
            assert other is not None
            if _same_call(tool, other.tool, other.call_id):
                union[find(span_id)] = find(ancestor)
        elif isinstance(ancestor, SpanLink) and _same_call(tool, ancestor.tool, ancestor.call_id):
            emitted_elsewhere[span_id] = ancestor.call_id
        if tool.call_id is not None:
            first = by_call_id.setdefault(tool.call_id, span_id)
            if first != span_id and find(first) != find(span_id):
                a, b = find(first), find(span_id)
                # Keep the outer span as the group's representative.
                if (depths[b], order[b]) < (depths[a], order[a]):
                    a, b = b, a
                union[b] = a
    groups: dict[str, list[str]] = {}
    for span_id in tool_ids:
        groups.setdefault(find(span_id), []).append(span_id)
    return list(groups.values()), emitted_elsewhere


def _same_call(tool: ToolFacts, other_tool: str | None, other_call_id: str | None) -> bool:
    return tool.tool == other_tool or (tool.call_id is not None and tool.call_id == other_call_id)


def _parent_lookup(
    spans: Mapping[str, SpanFacts], known: Callable[[str], SpanLink | None]
) -> Callable[[str], str | None]:
    def parent_of(span_id: str) -> str | None:
        facts = spans.get(span_id)
        if facts is not None:
            return facts.parent_id
        link = known(span_id)
        return link.parent_id if link is not None else None

    return parent_of


def _nearest_tool_ancestor(
    span_id: str,
    spans: Mapping[str, SpanFacts],
    known: Callable[[str], SpanLink | None],
    parent_of: Callable[[str], str | None],
) -> str | SpanLink | None:
    """The nearest ancestor that is a tool span: its id when it is in ``spans``, its link when known."""
    seen = {span_id}
    current = parent_of(span_id)
    while current is not None and current not in seen:
        seen.add(current)
        facts = spans.get(current)
        if facts is not None:
            if facts.tool is not None:
                return current
        else:
            link = known(current)
            if link is None:
                return None
            if link.tool is not None:
                return link
        current = parent_of(current)
    return None


def _resolve_sessions(
    trace_id: str, spans: Mapping[str, SpanFacts], known: Callable[[str], SpanLink | None]
) -> dict[str, str]:
    resolved: dict[str, str] = {}
    # The last resort before the trace id: the first MCP protocol session of the trace (never of a 2026-07-28
    # peer), the same for every span of it whatever the order they are resolved in.
    protocol_session = next((f.protocol_session_key for f in spans.values() if f.protocol_session_key), None)
    for start in spans:
        if start in resolved:
            continue
        chain: list[str] = []
        session: str | None = None
        top: SpanFacts | None = None
        current: str | None = start
        visited: set[str] = set()
        while current is not None:
            if current in resolved:
                session = resolved[current]
                break
            facts = spans.get(current)
            if facts is None:
                link = known(current)
                if link is not None:
                    session = link.session_id
                break
            if current in visited:  # a cycle: malformed parent ids
                break
            visited.add(current)
            chain.append(current)
            top = facts
            if facts.session_key is not None:
                session = facts.session_key
                break
            current = facts.parent_id
        if session is None:
            session = (top.resource_session_key if top is not None else None) or protocol_session or trace_id
        for span_id in chain:
            resolved[span_id] = session
    return resolved


def _depths(spans: Mapping[str, SpanFacts]) -> dict[str, int]:
    depths: dict[str, int] = {}
    for start in spans:
        chain: list[str] = []
        current: str | None = start
        base = 0
        while current is not None and current in spans:
            if current in depths:
                base = depths[current] + 1
                break
            if current in chain:
                break
            chain.append(current)
            current = spans[current].parent_id
        for offset, span_id in enumerate(reversed(chain)):
            depths[span_id] = base + offset
    return depths


def _merge(members: list[str], spans: Mapping[str, SpanFacts], sessions: Mapping[str, str]) -> MergedCall:
    tools = [t for t in (spans[m].tool for m in members) if t is not None]
    server = (
        next((t.explicit_server for t in tools if t.explicit_server), None)
        or next((t.prefix_server for t in tools if t.prefix_server), None)
        or next((t.address_server for t in tools if t.address_server), None)
        or _warn_unknown_server()
    )
    call_id = (
        next((t.call_id for t in tools if t.call_id), None)
        or next((t.rpc_id for t in tools if t.rpc_id), None)
        or members[0]
    )
    starts = [s for s in (spans[m].start_ns for m in members) if s is not None]
    ends = [e for e in (spans[m].end_ns for m in members) if e is not None]
    return MergedCall(
        session_id=sessions[members[0]],
        call_id=call_id,
        server=server,
        tool=tools[0].tool,
        arguments=next((t.arguments for t in tools if t.arguments is not None), None),
        result=next((t.result for t in tools if t.result is not None), None),
        is_error=any(t.is_error for t in tools),
        start_ns=min(starts) if starts else None,
        end_ns=max(ends) if ends else None,
        span_ids=tuple(members),
        source=spans[members[0]].source,
    )


_UNKNOWN_SERVER_WARNING = (
    f"a tool span names no server, so its calls are counted under server {UNKNOWN_SERVER!r} (rules and trusted "
    f"servers cannot match them): set {semconv.MCP_SERVER_NAME!r} (or {semconv.SERVER_ADDRESS!r}, as the "
    "OpenTelemetry MCP conventions do) on the execute_tool span, or name the tool 'mcp__<server>__<tool>'"
)


def _warn_unknown_server() -> str:
    """Return :data:`UNKNOWN_SERVER` for a call whose spans name no server, warning once per process (the
    warning's text is the same for every tool, so the warnings registry shows it once). A host that turns
    warnings into errors does not lose the call: the warning is then left out."""
    with contextlib.suppress(MonitorWarning):
        warnings.warn(_UNKNOWN_SERVER_WARNING, MonitorWarning, stacklevel=2)
    return UNKNOWN_SERVER
