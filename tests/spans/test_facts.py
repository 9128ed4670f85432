"""What one span says: tool-span detection and reading in three vocabularies, user messages, tool lists,
session keys."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
import pytest

from monitor.spans import (
    UNKNOWN_SERVER,
    ParseCache,
    SpanRecord,
    StatusCode,
    extract_tool_facts,
    extract_tool_lists,
    extract_user_texts,
    is_tool_span,
    read_session_key,
)
from monitor.spans import _facts as facts_module

SpanFactory = Callable[..., SpanRecord]


def attrs(**attributes: Any) -> dict[str, Any]:
    return {k.replace("__", "."): v for k, v in attributes.items()}


# -- which spans are tool calls ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "attributes",
    [
        {"gen_ai.operation.name": "execute_tool"},
        {"mcp.method.name": "tools/call"},
        {"openinference.span.kind": "TOOL"},
        {"openinference.span.kind": "tool"},
        {"traceloop.span.kind": "tool"},
    ],
)
def test_tool_spans_of_every_flavour_are_detected(attributes: dict[str, Any]) -> None:
    assert is_tool_span(attributes)


@pytest.mark.parametrize(
    "attributes",
    [
        {"gen_ai.operation.name": "chat"},
        {"mcp.method.name": "tools/list"},
        {"openinference.span.kind": "LLM"},
        {"traceloop.span.kind": "workflow"},
        {"tool.name": "search"},
        {},
    ],
)
def test_other_spans_are_not_tool_calls(attributes: dict[str, Any]) -> None:
    assert not is_tool_span(attributes)


# -- reading a tool span -------------------------------------------------------------------------------


def test_genai_tool_span_is_read(span: SpanFactory) -> None:
    facts = extract_tool_facts(
        span(
            gen_ai__operation__name="execute_tool",
            gen_ai__tool__name="mcp__github__list_issues",
            gen_ai__tool__call__id="call_1",
            gen_ai__tool__call__arguments='{"owner": "acme", "repo": "site"}',
            gen_ai__tool__call__result='{"issues": []}',
        )
    )
    assert (facts.tool, facts.prefix_server, facts.call_id) == ("list_issues", "github", "call_1")
    assert facts.arguments == {"owner": "acme", "repo": "site"}
    assert facts.result == {"issues": []}
    assert facts.is_error is False


def test_structured_arguments_and_results_are_kept_as_they_are(span: SpanFactory) -> None:
    facts = extract_tool_facts(
        span(
            gen_ai__operation__name="execute_tool",
            gen_ai__tool__name="lookup",
            gen_ai__tool__call__arguments={"q": "x", "n": [1, 2]},
            gen_ai__tool__call__result=[{"type": "text", "text": "hi"}],
        )
    )
    assert facts.arguments == {"q": "x", "n": [1, 2]}
    assert facts.result == [{"type": "text", "text": "hi"}]


def test_a_result_of_a_large_record_is_passed_on_as_text_and_its_arguments_still_decoded(
    span: SpanFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A result attribute as long as a large record is handed to the engine as its text (read there by its head
    and tail), never decoded a second time; arguments of that size are still decoded, so their destinations
    stay under their keys."""
    monkeypatch.setattr(facts_module, "LARGE_RECORD", 1_000)
    result = orjson.dumps({"content": [{"type": "text", "text": "x" * 2_000}]}).decode()
    arguments = orjson.dumps({"to": "a@b.example", "body": "y" * 2_000}).decode()
    facts = extract_tool_facts(
        span(
            gen_ai__operation__name="execute_tool",
            gen_ai__tool__name="send",
            gen_ai__tool__call__arguments=arguments,
            gen_ai__tool__call__result=result,
        )
    )
    assert facts.result == result
    assert facts.arguments == {"to": "a@b.example", "body": "y" * 2_000}
    small = orjson.dumps({"content": [{"type": "text", "text": "x" * 900}]}).decode()
    facts = extract_tool_facts(
        span(gen_ai__operation__name="execute_tool", gen_ai__tool__name="send", gen_ai__tool__call__result=small)
    )
    assert facts.result == {"content": [{"type": "text", "text": "x" * 900}]}


def test_missing_arguments_and_results_are_none(span: SpanFactory) -> None:
    facts = extract_tool_facts(span(gen_ai__operation__name="execute_tool", gen_ai__tool__name="lookup"))
    assert facts.arguments is None
    assert facts.result is None
    assert facts.call_id is None


def test_arguments_that_are_not_an_object_are_wrapped_and_plain_results_kept(span: SpanFactory) -> None:
    facts = extract_tool_facts(
        span(
            gen_ai__operation__name="execute_tool",
            gen_ai__tool__name="echo",
            gen_ai__tool__call__arguments="just some text",
            gen_ai__tool__call__result="plain output, not JSON",
        )
    )
    assert facts.arguments == {"input": "just some text"}
    assert facts.result == "plain output, not JSON"


def test_doubly_encoded_json_arguments_are_decoded(span: SpanFactory) -> None:
    inner = orjson.dumps({"a": 1}).decode()
    facts = extract_tool_facts(
        span(
            gen_ai__operation__name="execute_tool",
            gen_ai__tool__name="t",
            gen_ai__tool__call__arguments=orjson.dumps(inner).decode(),
        )
    )
    assert facts.arguments == {"a": 1}


def test_tool_name_falls_back_to_the_span_name(span: SpanFactory) -> None:
    assert (
        extract_tool_facts(span(name="execute_tool send_email", gen_ai__operation__name="execute_tool")).tool
        == "send_email"
    )
    assert extract_tool_facts(span(name="tools/call get-weather", mcp__method__name="tools/call")).tool == "get-weather"
    assert extract_tool_facts(span(name="search.tool", traceloop__span__kind="tool")).tool == "search"


def test_openinference_tool_span_is_read(span: SpanFactory) -> None:
    facts = extract_tool_facts(
        span(
            openinference__span__kind="TOOL",
            tool__name="get_weather",
            tool_call__id="call_62136355",
            input__value='{"city": "London"}',
            output__value="Rainy, 12 degrees",
            tool__parameters='{"type": "object", "properties": {"city": {"type": "string"}}}',
        )
    )
    assert (facts.tool, facts.call_id) == ("get_weather", "call_62136355")
    assert facts.arguments == {"city": "London"}
    assert facts.result == "Rainy, 12 degrees"


def test_openinference_tool_id_and_function_arguments_are_read(span: SpanFactory) -> None:
    facts = extract_tool_facts(
        span(
            openinference__span__kind="TOOL",
            tool__name="t",
            tool__id="call_9",
            tool_call__function__arguments='{"x": 1}',
        )
    )
    assert facts.call_id == "call_9"
    assert facts.arguments == {"x": 1}


def test_openinference_tool_parameters_are_arguments_unless_they_are_a_schema(span: SpanFactory) -> None:
    values = extract_tool_facts(
        span(openinference__span__kind="TOOL", tool__name="t", tool__parameters='{"query": "llamas"}')
    )
    assert values.arguments == {"query": "llamas"}
    schema = extract_tool_facts(
        span(openinference__span__kind="TOOL", tool__name="t", tool__parameters='{"query": {"type": "string"}}')
    )
    assert schema.arguments is None


def test_traceloop_tool_spans_are_read_in_both_input_shapes(span: SpanFactory) -> None:
    decorated = extract_tool_facts(
        span(
            traceloop__span__kind="tool",
            traceloop__entity__name="send_email",
            traceloop__entity__input='{"args": ["x"], "kwargs": {"to": "a@b.example"}}',
            traceloop__entity__output='{"sent": true}',
        )
    )
    assert decorated.tool == "send_email"
    assert decorated.arguments == {"to": "a@b.example", "args": ["x"]}
    assert decorated.result == {"sent": True}
    mcp = extract_tool_facts(
        span(
            traceloop__span__kind="tool",
            traceloop__entity__name="query",
            traceloop__entity__input='{"tool_name": "query", "arguments": {"sql": "SELECT 1"}}',
            traceloop__workflow__name="postgres.mcp",
        )
    )
    assert mcp.arguments == {"sql": "SELECT 1"}
    assert mcp.explicit_server == "postgres"


def test_per_argument_mcp_attributes_are_gathered(span: SpanFactory) -> None:
    facts = extract_tool_facts(
        span(
            mcp__method__name="tools/call",
            mcp__tool__name="weather",
            mcp__request__id="7",
            **{"mcp.request.argument.location": '"London"', "mcp.request.argument.days": "3"},
            mcp__tool__result__content="Sunny",
        )
    )
    assert facts.tool == "weather"
    assert facts.arguments == {"location": "London", "days": "3"}
    assert facts.rpc_id == "7"
    assert facts.result == "Sunny"


def test_errors_come_from_status_or_error_type(span: SpanFactory) -> None:
    base = {"gen_ai__operation__name": "execute_tool", "gen_ai__tool__name": "t"}
    assert extract_tool_facts(span(status=StatusCode.ERROR, **base)).is_error
    assert extract_tool_facts(span(error__type="tool_error", **base)).is_error
    assert not extract_tool_facts(span(status=StatusCode.OK, **base)).is_error


# -- user messages and tool lists ----------------------------------------------------------------------


def test_user_texts_from_genai_messages_only_for_role_user() -> None:
    messages = [
        {"role": "system", "parts": [{"type": "text", "content": "be nice"}]},
        {"role": "user", "parts": [{"type": "text", "content": "hello"}, {"type": "text", "content": "there"}]},
        {"role": "assistant", "parts": [{"type": "text", "content": "hi"}]},
        {"role": "user", "content": "legacy string content"},
    ]
    assert extract_user_texts(attrs(gen_ai__input__messages=orjson.dumps(messages).decode())) == (
        "hello\nthere",
        "legacy string content",
    )
    assert extract_user_texts(attrs(gen_ai__input__messages=messages)) == ("hello\nthere", "legacy string content")


def test_user_texts_from_openinference_and_traceloop() -> None:
    openinference = {
        "llm.input_messages.0.message.role": "system",
        "llm.input_messages.0.message.content": "rules",
        "llm.input_messages.1.message.role": "user",
        "llm.input_messages.1.message.content": "what is on my calendar?",
        "llm.input_messages.2.message.role": "user",
        "llm.input_messages.2.message.contents.0.message_content.type": "text",
        "llm.input_messages.2.message.contents.0.message_content.text": "and tomorrow",
        "llm.input_messages.2.message.contents.1.message_content.type": "image",
    }
    assert extract_user_texts(openinference) == ("what is on my calendar?", "and tomorrow")
    traceloop = {
        "gen_ai.prompt.0.role": "system",
        "gen_ai.prompt.0.content": "rules",
        "gen_ai.prompt.1.role": "user",
        "gen_ai.prompt.1.content": '[{"type": "text", "text": "send the report"}]',
    }
    assert extract_user_texts(traceloop) == ("send the report",)


def test_tool_definitions_are_grouped_by_server_as_mcp_tools() -> None:
    definitions = [
        {
            "type": "function",
            "name": "mcp__github__list_issues",
            "description": "List issues",
            "parameters": {"type": "object"},
            "annotations": {"readOnlyHint": True},
        },
        {"type": "function", "name": "mcp__supabase__execute_sql", "description": "Run SQL", "parameters": {}},
        {"type": "function", "name": "local_helper", "description": "A function"},
    ]
    lists = extract_tool_lists(attrs(gen_ai__tool__definitions=orjson.dumps(definitions).decode()))
    assert lists == (
        (
            "github",
            (
                {
                    "name": "list_issues",
                    "description": "List issues",
                    "inputSchema": {"type": "object"},
                    "annotations": {"readOnlyHint": True},
                },
            ),
        ),
        ("supabase", ({"name": "execute_sql", "description": "Run SQL", "inputSchema": {}},)),
        (UNKNOWN_SERVER, ({"name": "local_helper", "description": "A function"},)),
    )


def test_tool_lists_from_openinference_and_traceloop() -> None:
    openinference = {
        "llm.tools.0.tool.json_schema": orjson.dumps(
            {
                "type": "function",
                "function": {
                    "name": "mcp__fetch__fetch",
                    "description": "Fetch a URL",
                    "parameters": {"type": "object"},
                },
            }
        ).decode(),
        "llm.tools.1.tool.name": "mcp__fetch__head",
        "llm.tools.1.tool.description": "HEAD a URL",
    }
    assert extract_tool_lists(openinference) == (
        (
            "fetch",
            (
                {"name": "fetch", "description": "Fetch a URL", "inputSchema": {"type": "object"}},
                {"name": "head", "description": "HEAD a URL"},
            ),
        ),
    )
    traceloop = {
        "llm.request.functions.0.name": "get_weather",
        "llm.request.functions.0.parameters": '{"type": "object"}',
    }
    assert extract_tool_lists(traceloop) == (
        (UNKNOWN_SERVER, ({"name": "get_weather", "inputSchema": {"type": "object"}},)),
    )


def test_repeated_definitions_are_parsed_once() -> None:
    cache = ParseCache()
    raw = orjson.dumps([{"type": "function", "name": "mcp__s__t", "description": "d"}]).decode()
    first = extract_tool_lists({"gen_ai.tool.definitions": raw}, cache)
    second = extract_tool_lists({"gen_ai.tool.definitions": raw}, cache)
    assert first is second


# -- session keys --------------------------------------------------------------------------------------


def test_session_key_precedence_on_one_span() -> None:
    every = {
        "traceloop.association.properties.session_id": "tl",
        "langfuse.session.id": "lf",
        "session.id": "oi",
        "gen_ai.conversation.id": "conv",
    }
    assert read_session_key(every) == "conv"
    del every["gen_ai.conversation.id"]
    assert read_session_key(every) == "oi"
    del every["session.id"]
    assert read_session_key(every) == "lf"
    del every["langfuse.session.id"]
    assert read_session_key(every) == "tl"
    assert read_session_key({"session.id": ""}) is None
