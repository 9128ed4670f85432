"""What flowed where in a session: the ``flows_to`` edges the engine's evidence gives, and the path of an alert
found by a search over them (docs/design.md, "The capability graph")."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from monitor.models._decisions import Decision, Evidence, EvidenceKind, PathRole, PathStep
from monitor.models._evidence import Transform

MAX_GRAPH_CALLS = 10_000
"""Calls of one session whose edges the graph keeps; the graph of a longer session keeps the first ones and says
so (graph attributes ``truncated`` and ``calls_dropped``)."""
FLOW_TEXT_LIMIT = 200
"""Characters kept of the matched text on a ``flows_to`` edge."""
ORDER = "order"
"""How a path step reaches the next when no evidence links them: the later call came after it, with its
content in the context."""

_TRANSFORM_FLOW = {
    Transform.VERBATIM: "fragment",
    Transform.BASE64: "encoded-fragment",
    Transform.HEX: "encoded-fragment",
    Transform.URL: "encoded-fragment",
    Transform.SPLIT: "split-fragment",
    Transform.SECRET: "secret",
    Transform.PARAPHRASE: "paraphrase",
    Transform.FILE: "file-reference",
}
_KIND_FLOW = {
    EvidenceKind.FRAGMENT: "fragment",
    EvidenceKind.DESTINATION: "destination-origin",
    EvidenceKind.STEERING: "steering",
    EvidenceKind.UNEXAMINED: "unexamined",
}


class CallLike(Protocol):
    """What the path search reads of a call (a :class:`CallReport`, or the engine's record of a call)."""

    @property
    def call_id(self) -> str: ...
    @property
    def index(self) -> int: ...
    @property
    def server(self) -> str: ...
    @property
    def tool(self) -> str: ...
    @property
    def decision(self) -> Decision: ...


@dataclass(frozen=True, slots=True)
class Flow:
    """One ``flows_to`` edge: evidence that the output of ``source`` reached the arguments of ``target``.

    ``evidence`` is the kind of link (``fragment``, ``encoded-fragment``, ``split-fragment``, ``secret``,
    ``paraphrase``, ``file-reference``, ``destination-origin``, ``steering``, ``unexamined``), ``transform``
    how a fragment was found, ``text`` the matched text (at most :data:`FLOW_TEXT_LIMIT` characters)."""

    source: str
    target: str
    evidence: str
    transform: str
    text: str


def describe_flow(target: str, item: Evidence) -> Flow | None:
    """Return the ``flows_to`` edge one evidence item of ``target``'s decision gives, or None when it names no
    earlier call (a destination the user gave, content the index dropped)."""
    if not item.from_call:
        return None
    evidence = _KIND_FLOW[item.kind]
    text, _, how = item.split_detail()
    transform = ""
    if item.kind is EvidenceKind.FRAGMENT:
        if how in Transform.__members__.values():
            transform = how
            evidence = _TRANSFORM_FLOW[Transform(transform)]
        else:
            text = item.detail
    elif item.kind is EvidenceKind.DESTINATION:
        transform = how
    else:
        text = item.detail
    return Flow(item.from_call, target, evidence, transform, text[:FLOW_TEXT_LIMIT])


def describe_flows(call: CallLike) -> list[Flow]:
    """Return the ``flows_to`` edges into a call: one per evidence item of its decision that names a call."""
    flows = (describe_flow(call.call_id, item) for item in call.decision.evidence)
    return [flow for flow in flows if flow is not None and flow.source != call.call_id]


@dataclass(slots=True)
class FlowRecord:
    """The ``flows_to`` edges of a session as the engine keeps them, built as the session goes: a call's incoming
    edges are worked out once, when it is decided (its evidence is final then), and the path search of every
    later alert reads them. Bounded: the edges of the first :data:`MAX_GRAPH_CALLS` calls are kept; a later
    call's are worked out again when a search reaches it, so memory does not grow with the session."""

    into: dict[str, tuple[Flow, ...]] = field(default_factory=dict)
    dropped: int = 0

    def add_call(self, call: CallLike) -> None:
        """Record the edges into a call that has just been decided."""
        if len(self.into) >= MAX_GRAPH_CALLS:
            self.dropped += 1
            return
        self.into[call.call_id] = tuple(describe_flows(call)) if call.decision.evidence else ()

    def flows_into(self, call: CallLike) -> Sequence[Flow]:
        """Return the edges into a call: as recorded, or worked out now for a call past the bound."""
        flows = self.into.get(call.call_id)
        return describe_flows(call) if flows is None else flows

    def edges(self) -> list[Flow]:
        """Return every recorded edge, in the order the calls were decided."""
        return [flow for flows in self.into.values() for flow in flows]


def find_path_steps(
    calls: Mapping[str, CallLike],
    sink: str,
    untrusted: Iterable[str],
    private: Iterable[str],
    flows_into: Callable[[CallLike], Sequence[Flow]] = describe_flows,
) -> tuple[PathStep, ...]:
    """Search the session's ``flows_to`` edges (``calls`` by id) for the path from each untrusted and each
    private source to the sink; return the calls on those paths in session order, each with its role.

    A source the evidence links to the sink (directly, or through relays: calls whose arguments carried its
    output and whose output reached the sink) reaches it along the shortest such chain, each step's ``via``
    naming the evidence kinds (``flows_to:fragment``). A source with no such chain reaches the sink by
    ``order`` alone: the sink came after it with its content in the context. The search reads only the
    evidence of calls that reach the sink, so it costs what the path costs, not what the session does.
    ``flows_into`` gives a call's incoming edges (by default worked out from its evidence; the engine passes its
    :meth:`FlowRecord.flows_into`)."""
    end = calls.get(sink)
    if end is None:
        return ()
    into: dict[str, dict[str, set[str]]] = {}
    # Breadth first, backwards from the sink: the next hop of every call that reaches it by evidence.
    onward: dict[str, str] = {sink: ""}
    queue = deque([sink])
    while queue:
        node = queue.popleft()
        sources = into.setdefault(node, {})
        for flow in flows_into(calls[node]):
            if flow.source in calls and calls[flow.source].index < calls[node].index:
                sources.setdefault(flow.source, set()).add(flow.evidence)
        for source in sorted(sources, key=lambda c: calls[c].index):
            if source not in onward:
                onward[source] = node
                queue.append(source)
    roles: dict[str, PathRole] = {}
    for ids, role in ((untrusted, PathRole.UNTRUSTED_SOURCE), (private, PathRole.PRIVATE_SOURCE)):
        for call_id in ids:
            if call_id in calls and call_id != sink and calls[call_id].index < end.index:
                roles.setdefault(call_id, role)
    vias: dict[str, tuple[str, str]] = {}
    for source in roles:
        if source not in onward:
            vias[source] = (ORDER, sink)
            continue
        node = source
        while node != sink and node not in vias:
            after = onward[node]
            vias[node] = ("flows_to:" + "+".join(sorted(into[after][node])), after)
            node = after
    steps = [
        PathStep(
            call_id=call_id,
            tool=calls[call_id].tool,
            server=calls[call_id].server,
            index=calls[call_id].index,
            role=roles.get(call_id, PathRole.RELAY),
            via=via,
            to=to,
        )
        for call_id, (via, to) in vias.items()
    ]
    steps.append(PathStep(call_id=sink, tool=end.tool, server=end.server, index=end.index, role=PathRole.SINK))
    return tuple(sorted(steps, key=lambda step: step.index))
