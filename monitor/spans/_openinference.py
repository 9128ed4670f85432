"""Attribute keys of OpenInference (Arize-ai/openinference, ``spec/semantic_conventions.md`` and
``spec/tool_calling.md``). List-valued attributes are flattened: ``<key>.<index>.<member>``."""

from __future__ import annotations

OPENINFERENCE_SPAN_KIND = "openinference.span.kind"  # every span: LLM, CHAIN, TOOL, AGENT, ...
OPENINFERENCE_TOOL = "TOOL"  # the openinference.span.kind of a tool span
TOOL_NAME = "tool.name"  # tool span: the tool's name
TOOL_ID = "tool.id"  # tool span: "the identifier for the result of the tool call (corresponding to tool_call.id)"
TOOL_PARAMETERS = "tool.parameters"  # tool span: arguments in many instrumentations, a parameter schema in others
TOOL_CALL_ID = "tool_call.id"  # tool_calling.md: the id of a tool call
TOOL_CALL_FUNCTION_ARGUMENTS = "tool_call.function.arguments"  # tool_calling.md: a call's arguments, JSON text
INPUT_VALUE = "input.value"  # any span: its input (a tool span's arguments)
OUTPUT_VALUE = "output.value"  # any span: its output (a tool span's result)
SESSION_ID = "session.id"  # any span: the session
LLM_INPUT_MESSAGES = "llm.input_messages"  # LLM span: .<i>.message.role / .content / .contents.<j>
LLM_TOOLS = "llm.tools"  # LLM span: .<i>.tool.json_schema / .tool.name / .tool.description
