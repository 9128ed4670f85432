"""Session links on the application side: which session each span belongs to, and what to stamp on it.

A span's session is the first of the session keys on the span itself, else on its nearest ancestor that
named one, else in the baggage, else its nearest linked ancestor's, else the resource's, else its own MCP
protocol session (``mcp.session.id``, unless ``mcp.protocol.version`` has none), else the trace id (as the
offline reader has it, which also takes the protocol session of another span of the trace). Each span of
agent work gets a link when it starts, kept in two generations: the links used lately and the ones before;
the older generation is forgotten when the newer one holds half of ``max_spans`` links, or ``span_ttl / 2``
seconds after the last rotation. The level and legs the engine last reported for each session are kept here
too, to be stamped on the session's new spans once the engine caught up with the session
(:mod:`~monitor.otel._progress`): until then they are ``pending``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from opentelemetry import baggage
from opentelemetry import trace as trace_api
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span
from opentelemetry.trace import SpanContext

from monitor.models import Level
from monitor.otel._config import LevelStamps, ProcessorConfig
from monitor.otel._names import ATTR_SESSION_ID, BAGGAGE_SESSION_KEYS
from monitor.otel._progress import PENDING, UNKNOWN, EngineProgress
from monitor.spans import (
    EXECUTE_TOOL,
    GEN_AI_INPUT_MESSAGES,
    GEN_AI_OPERATION_NAME,
    GEN_AI_PROMPT,
    GEN_AI_TOOL_DEFINITIONS,
    LLM_INPUT_MESSAGES,
    LLM_REQUEST_FUNCTIONS,
    LLM_TOOLS,
    MCP_METHOD_NAME,
    OPENINFERENCE_SPAN_KIND,
    SESSION_KEYS,
    TRACELOOP_SPAN_KIND,
    is_tool_span,
    read_protocol_session_key,
    read_session_key,
)

# A span that marks GenAI work (its session is worth resolving and stamping even without a session key).
_GENAI_MARKERS = (GEN_AI_OPERATION_NAME, OPENINFERENCE_SPAN_KIND, TRACELOOP_SPAN_KIND)
# Attributes that carry user messages or tool definitions (what the engine reads on chat spans).
_CHAT_KEYS = (
    GEN_AI_INPUT_MESSAGES,
    GEN_AI_TOOL_DEFINITIONS,
    f"{LLM_INPUT_MESSAGES}.0.message.role",
    f"{LLM_TOOLS}.0.tool.json_schema",
    f"{LLM_TOOLS}.0.tool.name",
    f"{LLM_REQUEST_FUNCTIONS}.0.name",
    f"{GEN_AI_PROMPT}.0.role",
)
# Every attribute looked at on a span, to pass over other spans (HTTP, database…) in one test.
_KEYS = frozenset((*SESSION_KEYS, *_GENAI_MARKERS, *_CHAT_KEYS, MCP_METHOD_NAME))
_SESSION_KEYSET = frozenset(SESSION_KEYS)
_CHAT_KEYSET = frozenset(_CHAT_KEYS)
# What can make a span a tool span besides ``gen_ai.operation.name``, or a chat span: a span with none of these
# (an agent span, say) is passed over at its end in one test.
_TOOL_MARKERS = frozenset((MCP_METHOD_NAME, OPENINFERENCE_SPAN_KIND, TRACELOOP_SPAN_KIND))
_END_KEYS = _TOOL_MARKERS | _CHAT_KEYSET
_CLEAN: tuple[str, str] = (Level.CLEAN.value, "")
_PENDING: tuple[str, None] = (PENDING, None)
_UNKNOWN: tuple[str, None] = (UNKNOWN, None)

Link = tuple[str, bool, int, bool, int, dict[str, Any] | None]
"""What is kept of a span: its session, whether it was named explicitly (by attributes or baggage, its own or an
ancestor's), the nearest tool span at or above it, whether it is a tool span, the nearest tool span strictly
above it (0: none), and, for a chat span, its attributes as they were written when it started (its end is not
written again when they did not change)."""

Started = tuple[str, tuple[str, str | None] | None, bool, int]
"""A started span's session, the level and legs to stamp on it (None: its session id only; legs None: the
level is ``pending`` or ``unknown``), whether it is a chat span (whose start is written for the engine), and,
for a ``pending`` level, the record number the engine must acknowledge before the level is known (else 0)."""


class CallPlace(NamedTuple):
    """Where a call asked about with ``check_tool_call`` happens."""

    session: str
    own_span: int  # the call's own tool span, when the question came with it (0: none)
    up: int  # the nearest tool span above it (0: none)
    trace_id: int
    span_id: int  # the span the call's alerts are reported against


class SessionLinks:
    """The span → session links of the application side, in two generations, and the sessions' stamps.

    Read and written on the application's threads without a lock (each dictionary operation is atomic); the
    delivery thread rotates the generations (:meth:`rotate_when_due`) and the engine's messages set the stamps
    and say how far the engine got (:attr:`progress`, one of its own unless given).
    """

    __slots__ = (
        "_clock",
        "_config",
        "_half_spans",
        "_levels_on_others",
        "_levels_on_tools",
        "_links",
        "_max_stamps",
        "_old_links",
        "_rotate_at",
        "_stamps",
        "progress",
    )

    def __init__(
        self, config: ProcessorConfig, clock: Callable[[], float], progress: EngineProgress | None = None
    ) -> None:
        self.progress = progress if progress is not None else EngineProgress(config.max_sessions)
        """Which records of each session the engine handled: whether a session's stamp is known."""
        self._config = config
        self._clock = clock
        self._half_spans = max(1, config.max_spans // 2)
        self._max_stamps = 2 * config.max_sessions
        # Whether a tool span, and any other span, gets the level and legs (read on every span's start).
        self._levels_on_tools = config.level_stamps is not LevelStamps.NONE
        self._levels_on_others = config.level_stamps is LevelStamps.ALL
        self.clear()

    def clear(self) -> None:
        """Forget every link and stamp, and the engine's progress."""
        self.progress.clear()
        self._links: dict[int, Link] = {}
        self._old_links: dict[int, Link] = {}
        self._stamps: dict[str, tuple[str, str]] = {}
        self._rotate_at = self._clock() + self._config.span_ttl / 2

    @property
    def count(self) -> int:
        """Links held now."""
        return len(self._links) + len(self._old_links)

    # -- spans ----------------------------------------------------------------------------------------

    def start(
        self,
        span: Span,
        span_id: int,
        parent_id: int,
        attributes: Mapping[str, Any],
        parent_context: Context | None,
    ) -> Started | None:
        """Link a starting span (its parent ``parent_id``, 0: none) to its session; what to stamp on it, or None
        when it is not agent work."""
        parent_link = (self._links.get(parent_id) or self._find_old(parent_id)) if parent_id else None
        if (
            parent_link is not None
            and parent_link[1]
            and attributes.get(GEN_AI_OPERATION_NAME) == EXECUTE_TOOL
            and _SESSION_KEYSET.isdisjoint(attributes)
        ):  # the common case: a tool span inside a session named above it
            session, explicit, is_tool, is_chat = parent_link[0], True, True, False
        else:
            resolved = self._resolve_start(span, attributes, parent_link, parent_context)
            if resolved is None:
                return None  # not agent work: nothing to keep, nothing to stamp
            session, explicit, is_tool, is_chat = resolved
        up = parent_link[2] if parent_link is not None else 0
        links = self._links
        links[span_id] = (session, explicit, span_id if is_tool else up, is_tool, up, None)
        if len(links) > self._half_spans:
            self._rotate()
        if self._levels_on_tools if is_tool else self._levels_on_others:
            wait = self.progress.find_wait(session)
            if not wait:
                return session, self._stamps.get(session, _CLEAN), is_chat, 0
            return session, _PENDING if wait > 0 else _UNKNOWN, is_chat, wait
        return session, None, is_chat, 0

    def keep_chat(self, span_id: int, attributes: Mapping[str, Any]) -> None:
        """Keep a chat span's attributes as its start was written: its end is written only if they changed."""
        link = self._links.get(span_id) or self._old_links.get(span_id)
        if link is not None:
            self._links[span_id] = (*link[:5], dict(attributes))

    def end(self, span: ReadableSpan, span_id: int, attributes: Mapping[str, Any]) -> tuple[str, int] | None:
        """An ending tool or chat span's session and the nearest tool span above it (0: none); None for any other
        span, and for a chat span with nothing new since its start was written."""
        if attributes.get(GEN_AI_OPERATION_NAME) != EXECUTE_TOOL and (
            _END_KEYS.isdisjoint(attributes) or (_CHAT_KEYSET.isdisjoint(attributes) and not is_tool_span(attributes))
        ):
            return None
        link = self._links.get(span_id) or self._old_links.get(span_id)
        if link is None:
            return self._resolve_unlinked(span, attributes)
        if link[5] is not None and link[5] == attributes:
            return None
        return link[0], link[4]

    def resolve_call(self, span_or_context: trace_api.Span | Context | None) -> CallPlace:
        """Where a call asked about happens: the session of the given span or context (the current one for
        None), resolved as for any span; its own tool span, the nearest one above, and its trace."""
        if isinstance(span_or_context, trace_api.Span):
            span, context = span_or_context, None
        else:
            context = span_or_context
            span = trace_api.get_current_span(context)
        span_context = span.get_span_context()
        link = self._find(span_context.span_id) if span_context.is_valid else None
        session = link[0] if link is not None else None
        attributes = getattr(span, "attributes", None)
        attributes = attributes if isinstance(attributes, Mapping) else None
        if session is None:
            session = read_session_key(attributes) if attributes is not None else None
        if session is None:
            session = _read_baggage_session(context)
        parent_id = _get_parent_id(span)
        parent_link = self._find(parent_id) if parent_id else None
        if session is None:
            if parent_link is not None:
                session = parent_link[0]
            elif span_context.is_valid:
                session = _resolve_fallback_session(span, attributes)
            else:
                session = "unknown"
        own_span = span_context.span_id if link is not None and link[3] else 0
        up = parent_link[2] if parent_link is not None else 0
        return CallPlace(session, own_span, up, span_context.trace_id, span_context.span_id)

    def rotate_when_due(self, now: float) -> None:
        """Forget the older generation if ``span_ttl / 2`` seconds passed since the last rotation."""
        if now >= self._rotate_at:
            self._rotate()

    # -- stamps -----------------------------------------------------------------------------------------

    def set_stamp(self, session: str, level: str, legs: str) -> None:
        """Stamp the session's new spans with this level and legs (at most ``2 * max_sessions`` sessions kept)."""
        stamps = self._stamps
        stamps[session] = (level, legs)
        if len(stamps) > self._max_stamps:
            del stamps[next(iter(stamps))]

    def read_stamp(self, session: str) -> tuple[str, str]:
        """The level and legs the engine last reported for the session."""
        return self._stamps.get(session, _CLEAN)

    def acknowledge(self, number: int) -> None:
        """The engine handled every record numbered up to ``number``: spans waiting for it get their stamps."""
        self.progress.acknowledge(number, self.read_stamp)

    def forget_stamp(self, session: str) -> None:
        """The engine ended the session: its next spans start clean."""
        self._stamps.pop(session, None)
        self.progress.forget_lost(session)

    def forget_stamps(self) -> list[str]:
        """Forget every stamp (the engine that held the sessions died); the sessions, least recently stamped
        first. Their stamps, and those of the sessions with records in flight, are ``unknown`` from now on."""
        sessions = list(self._stamps)
        self._stamps.clear()
        self.progress.lose([*sessions, *self.progress.find_in_flight()])
        return sessions

    # -- the generations --------------------------------------------------------------------------------

    def _find(self, span_id: int) -> Link | None:
        return self._links.get(span_id) or self._find_old(span_id)

    def _find_old(self, span_id: int) -> Link | None:
        link = self._old_links.get(span_id)
        if link is not None:
            self._links[span_id] = link  # used again: keep it through the next rotation
        return link

    def _rotate(self) -> None:
        """Forget the older generation: links are kept for at least ``span_ttl / 2`` seconds after their last
        use and at most ``span_ttl``, and at most ``max_spans`` of them."""
        self._old_links = self._links
        self._links = {}
        self._rotate_at = self._clock() + self._config.span_ttl / 2

    # -- resolution -------------------------------------------------------------------------------------

    def _resolve_start(
        self,
        span: Span,
        attributes: Mapping[str, Any],
        parent_link: Link | None,
        parent_context: Context | None,
    ) -> tuple[str, bool, bool, bool] | None:
        """A starting span's session, whether it was named explicitly, whether it is a tool or a chat span;
        None when it is not agent work in a session."""
        if attributes.get(GEN_AI_OPERATION_NAME) == EXECUTE_TOOL:
            relevant = is_tool = True
            is_chat = False
        else:
            relevant = not _KEYS.isdisjoint(attributes)
            is_tool = relevant and not _TOOL_MARKERS.isdisjoint(attributes) and is_tool_span(attributes)
            is_chat = relevant and not is_tool and not _CHAT_KEYSET.isdisjoint(attributes)
        session = read_session_key(attributes) if relevant and not _SESSION_KEYSET.isdisjoint(attributes) else None
        if session is not None:
            return session, True, is_tool, is_chat
        if parent_link is not None and parent_link[1]:
            return parent_link[0], True, is_tool, is_chat
        session = _read_baggage_session(parent_context)
        if session is not None:
            return session, True, is_tool, is_chat
        if parent_link is not None:
            return parent_link[0], False, is_tool, is_chat
        if relevant:  # a tool, chat or agent span: its trace is its session
            return _resolve_fallback_session(span, attributes), False, is_tool, is_chat
        return None

    def _resolve_unlinked(self, span: ReadableSpan, attributes: Mapping[str, Any]) -> tuple[str, int]:
        """The session of a span that has no link (not agent work when it started, or its link expired), and
        the nearest tool span above it (0: none)."""
        parent = span.parent
        parent_link = self._find(parent.span_id) if parent is not None else None
        up = parent_link[2] if parent_link is not None else 0
        session = attributes.get(ATTR_SESSION_ID)  # our stamp: the session resolved when the span started
        if type(session) is str:
            return session, up
        session = read_session_key(attributes)
        if session is not None:
            return session, up
        return (parent_link[0] if parent_link is not None else _resolve_fallback_session(span, attributes)), up


def _read_baggage_session(context: Context | None) -> str | None:
    entries = baggage.get_all(context)
    if not entries:
        return None
    for key in BAGGAGE_SESSION_KEYS:
        value = entries.get(key)
        if value is not None and value != "":
            return str(value)
    return None


def _resolve_fallback_session(span: ReadableSpan | trace_api.Span, attributes: Mapping[str, Any] | None = None) -> str:
    """As the OTLP reader: the resource's session key, else the span's MCP protocol session, else the trace id."""
    resource = getattr(span, "resource", None)
    if resource is not None:
        session = read_session_key(resource.attributes)
        if session is not None:
            return session
    if attributes is not None:
        session = read_protocol_session_key(attributes)
        if session is not None:
            return session
    context = span.get_span_context()
    return format(context.trace_id, "032x") if context is not None else "unknown"


def _get_parent_id(span: object) -> int | None:
    parent = getattr(span, "parent", None)
    return parent.span_id if isinstance(parent, SpanContext) and parent.span_id else None
