"""Session links on the application side: sessions resolved, two generations of links, stamps."""

from __future__ import annotations

from typing import Any

from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags
from support.clocks import FakeClock

from monitor.otel import LevelStamps
from monitor.otel._config import ProcessorConfig
from monitor.otel._links import SessionLinks

TRACE = 0xABC
TOOL = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "mcp__web__fetch"}
CHAT = {"gen_ai.operation.name": "chat", "gen_ai.input.messages": '[{"role": "user", "content": "hi"}]'}


class StubSpan:
    """A span as the links read it: its context, parent and resource (none)."""

    def __init__(self, span_id: int, parent: int = 0) -> None:
        self.context = SpanContext(TRACE, span_id, is_remote=False, trace_flags=TraceFlags(TraceFlags.SAMPLED))
        self.parent = SpanContext(TRACE, parent, is_remote=False) if parent else None
        self.resource = None

    def get_span_context(self) -> SpanContext:
        return self.context


def make_links(clock: FakeClock | None = None, **options: Any) -> SessionLinks:
    """Links with these config options."""
    return SessionLinks(ProcessorConfig(**options), clock or FakeClock())


def start(links: SessionLinks, span_id: int, parent: int = 0, **attributes: Any) -> Any:
    """Start a span with these attributes (``__`` for ``.`` in their names)."""
    named = {key.replace("__", "."): value for key, value in attributes.items()}
    return links.start(StubSpan(span_id, parent), span_id, parent, named, None)  # type: ignore[arg-type]


def test_a_span_takes_the_session_named_on_it_or_above_it_else_its_trace() -> None:
    links = make_links()
    assert start(links, 1, session__id="s") == ("s", None, False, 0)  # the agent span: its id only, by default
    assert start(links, 2, 1, **TOOL) == ("s", ("clean", ""), False, 0)  # a tool span below: the level and legs too
    assert start(links, 3, 2, gen_ai__conversation__id="own", **TOOL)[0] == "own"  # its own key first
    assert start(links, 4, 0, **TOOL)[0] == format(TRACE, "032x")  # nothing named: the trace
    assert start(links, 5, 0, http__route="/health") is None  # not agent work
    assert links.count == 4


def test_stamps_follow_the_engine_and_level_stamps() -> None:
    links = make_links()
    start(links, 1, session__id="s")
    links.set_stamp("s", "armed", "private_data,untrusted_content")
    assert start(links, 2, 1, **TOOL)[1] == ("armed", "private_data,untrusted_content")
    links.forget_stamp("s")  # the engine ended the session
    assert start(links, 3, 1, **TOOL)[1] == ("clean", "")
    everywhere, nowhere = make_links(level_stamps=LevelStamps.ALL), make_links(level_stamps=LevelStamps.NONE)
    assert start(everywhere, 1, session__id="s")[1] == ("clean", "")
    assert start(nowhere, 2, session__id="s", **TOOL)[1] is None


def test_stamps_are_kept_for_twice_max_sessions_and_forgotten_when_the_engine_dies() -> None:
    links = make_links(max_sessions=2)
    for n in range(6):
        links.set_stamp(f"s{n}", "partial", "private_data")
    assert links.forget_stamps() == ["s2", "s3", "s4", "s5"]  # least recently stamped first
    assert links.forget_stamps() == []


def test_links_live_two_generations_and_a_link_used_again_moves_to_the_newer() -> None:
    links = make_links(max_spans=4)  # a generation rotates beyond 2 links
    for span_id in (1, 2, 3):
        start(links, span_id, session__id=f"s{span_id}")  # the third rotates: 1, 2, 3 are the older generation
    assert start(links, 10, 1, **TOOL)[0] == "s1"  # 1 used again: it moves to the newer generation
    start(links, 20, session__id="s20")  # rotates: 2 and 3 are forgotten, 1 is not
    assert links.count == 3
    assert start(links, 11, 1, **TOOL)[0] == "s1"
    assert start(links, 12, 2, **TOOL)[0] == format(TRACE, "032x")  # its parent's link is gone


def test_the_older_generation_is_forgotten_half_a_span_ttl_after_each_rotation() -> None:
    clock = FakeClock()
    links = make_links(clock, span_ttl=10.0)
    start(links, 1, session__id="s")
    links.rotate_when_due(clock.now + 4.9)
    assert links.count == 1
    clock.now += 5
    links.rotate_when_due(clock.now)  # now in the older generation
    assert links.count == 1
    clock.now += 5
    links.rotate_when_due(clock.now)
    assert links.count == 0


def test_a_chat_span_is_written_again_at_its_end_only_when_its_attributes_changed() -> None:
    links = make_links()
    start(links, 1, session__id="s")
    assert start(links, 2, 1, **CHAT) == ("s", None, True, 0)
    links.keep_chat(2, CHAT)
    assert links.end(StubSpan(2, 1), 2, dict(CHAT)) is None  # type: ignore[arg-type]
    assert links.end(StubSpan(2, 1), 2, {**CHAT, "gen_ai.tool.definitions": "[]"}) == ("s", 0)  # type: ignore[arg-type]
    assert links.end(StubSpan(1), 1, {"session.id": "s"}) is None  # type: ignore[arg-type]  # neither tool nor chat


def test_an_ending_span_names_the_nearest_tool_span_above_it() -> None:
    links = make_links()
    start(links, 1, session__id="s")
    start(links, 2, 1, **TOOL)
    start(links, 3, 2, mcp__method__name="tools/call", gen_ai__tool__name="fetch")
    assert links.end(StubSpan(3, 2), 3, {"mcp.method.name": "tools/call"}) == ("s", 2)  # type: ignore[arg-type]
    assert links.end(StubSpan(2, 1), 2, TOOL) == ("s", 0)  # type: ignore[arg-type]
    # Unlinked (started before the processor, say): its stamp, else its keys, else its parent's link.
    assert links.end(StubSpan(9, 2), 9, {**TOOL, "trifecta.session_id": "stamped"}) == ("stamped", 2)  # type: ignore[arg-type]
    assert links.end(StubSpan(9, 2), 9, TOOL) == ("s", 2)  # type: ignore[arg-type]


def test_a_call_asked_about_is_placed_in_its_span_session() -> None:
    links = make_links()
    start(links, 1, session__id="s")
    start(links, 2, 1, **TOOL)
    own = NonRecordingSpan(StubSpan(2).context)
    assert links.resolve_call(own) == ("s", 2, 0, TRACE, 2)  # its own open tool span
    parent = trace.set_span_in_context(NonRecordingSpan(StubSpan(1).context))
    assert links.resolve_call(parent) == ("s", 0, 0, TRACE, 1)  # asked with the agent span's context
    assert links.resolve_call(None).session == "unknown"  # no span at all
