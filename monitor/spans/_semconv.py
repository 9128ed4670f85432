"""Attribute keys of the OpenTelemetry semantic conventions: GenAI spans, MCP spans, and general attributes.

The GenAI and MCP conventions (status: development) live in open-telemetry/semantic-conventions-genai,
``docs/gen-ai/`` (earlier in open-telemetry/semantic-conventions): the execute-tool span
(``gen-ai-agent-spans.md``, "Execute tool span"), inference spans (``gen-ai-spans.md``) and MCP
(``mcp.md``). General attributes are in the attribute registry, ``docs/registry/attributes/``. The
``opentelemetry-semantic-conventions`` package marks the GenAI and MCP names as moved and deprecated, so
they are our own constants here.

Also here: the ``mcp.*`` attributes of an early draft of ``mcp.md`` that Sentry's MCP integrations
(getsentry/sentry-javascript ``packages/core/src/integrations/mcp-server/attributes.ts``, sentry-python
``SPANDATA.MCP_*``) and others still write.
"""

from __future__ import annotations

# -- GenAI (docs/gen-ai/) ------------------------------------------------------------------------------

GEN_AI_OPERATION_NAME = "gen_ai.operation.name"  # every GenAI span; required
EXECUTE_TOOL = "execute_tool"  # the gen_ai.operation.name of the execute-tool span
GEN_AI_TOOL_NAME = "gen_ai.tool.name"  # execute-tool span; also MCP tools/call spans (mcp.md)
GEN_AI_TOOL_CALL_ID = "gen_ai.tool.call.id"  # execute-tool span; the model's id of the call
GEN_AI_TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"  # execute-tool span, opt-in; an object or its JSON
GEN_AI_TOOL_CALL_RESULT = "gen_ai.tool.call.result"  # execute-tool span, opt-in; an object or its JSON
GEN_AI_TOOL_DEFINITIONS = "gen_ai.tool.definitions"  # inference span, opt-in; [{type, name, description, ...}]
GEN_AI_INPUT_MESSAGES = "gen_ai.input.messages"  # inference span, opt-in; [{role, parts: [{type, content}]}]
GEN_AI_CONVERSATION_ID = "gen_ai.conversation.id"  # GenAI spans: the conversation (session) id

# -- MCP (docs/gen-ai/mcp.md): the client and the server span of one call carry the same request id -----

MCP_METHOD_NAME = "mcp.method.name"  # required on MCP client and server spans
MCP_PROTOCOL_VERSION = "mcp.protocol.version"  # recommended: the MCP protocol version of the call
# recommended "when the MCP request or notification is part of a session": a *protocol* session
# (Mcp-Session-Id), which MCP 2026-07-28 no longer has; read only as a fallback after the conversation keys
MCP_SESSION_ID = "mcp.session.id"
MCP_TOOLS_CALL = "tools/call"  # the mcp.method.name of a tool call
JSONRPC_REQUEST_ID = "jsonrpc.request.id"  # the JSON-RPC id of the request; conditionally required

# -- the early MCP draft, as Sentry's integrations write it (not in the conventions) ----------------------

MCP_SERVER_NAME = "mcp.server.name"  # the server's name from its initialize result
MCP_TOOL_NAME = "mcp.tool.name"  # the tool of a tools/call (gen_ai.tool.name in mcp.md)
MCP_REQUEST_ID = "mcp.request.id"  # the JSON-RPC id (jsonrpc.request.id in mcp.md)
MCP_REQUEST_ARGUMENT_PREFIX = "mcp.request.argument."  # one attribute per argument, values JSON-encoded
MCP_TOOL_RESULT_CONTENT = "mcp.tool.result.content"  # the tool's result content, often JSON text

# -- general attributes (docs/registry/attributes/) ------------------------------------------------------

ERROR_TYPE = "error.type"  # error.md: the class of error an operation ended with
SERVER_ADDRESS = "server.address"  # server.md: the server's domain name or address (MCP client spans)
