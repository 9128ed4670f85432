"""Input adapters: every format becomes the same stream of events, rejected records and session ends.

One reader per format (native JSONL, OTLP JSON, MCP JSON-RPC logs, Claude Code transcripts and hooks,
the Claude Code hook store, AgentDojo runs), :func:`read_inputs` over files and folders with the format
told from the content, the AgentDojo runs with what each run file says about itself (for the evaluation),
and the one reader of tool lists.

The readers are the boundary where attacker-controlled text comes in, and hold to these rules:

- Nothing raises out of a reader: whatever a record holds, a bad record is a :class:`RecordError` naming it
  (``file:line``, ``archive!entry`` or ``file#pointer``) and every other record is still read. Shapes are
  checked before they are used; walks are iterative; integers and times are checked against their ranges (an
  OTLP time out of range is an error, and its span is still read without it).
- Nothing is taken in silence: an empty file is an error naming it; a key repeated within one JSON object is
  an error naming the record and the key, and the record is read with every value of that key (see
  :func:`monitor.jsonrecords.decode_json_record`), so no value hides another; an AgentDojo run without any
  message of a known role (an all-null run) is an error, never a clean session.
- Nesting beyond :data:`monitor.jsonrecords.MAX_JSON_DEPTH` levels is an error, and the deeper part is read as the
  text of its leaves: later steps never walk an unbounded depth, and no leaf is dropped.
"""

from monitor.ingest._agentdojo import AgentDojoRun, iter_run_files, read_agentdojo, read_agentdojo_runs
from monitor.ingest._claude_code import read_claude_code, read_claude_code_stream
from monitor.ingest._hook_store import read_hook_store
from monitor.ingest._inputs import InputFormat, InputStream, detect_format, read_inputs
from monitor.ingest._jsonl import read_jsonl, read_jsonl_stream
from monitor.ingest._mcp import read_mcp, read_mcp_stream
from monitor.ingest._otlp import read_otlp, read_otlp_stream
from monitor.ingest._parts import InputPart, partition_inputs, read_part
from monitor.ingest._toolslist import (
    ProtocolNote,
    ToolList,
    ToolListProblem,
    parse_tool_list,
    read_tool_list,
    read_tool_lists,
)
from monitor.ingest._yaml import find_duplicate_key, find_yaml_line
from monitor.models import Record, RecordError, RecordStream, SessionEnd

__all__ = [
    "AgentDojoRun",
    "InputFormat",
    "InputPart",
    "InputStream",
    "ProtocolNote",
    "Record",
    "RecordError",
    "RecordStream",
    "SessionEnd",
    "ToolList",
    "ToolListProblem",
    "detect_format",
    "find_duplicate_key",
    "find_yaml_line",
    "iter_run_files",
    "parse_tool_list",
    "partition_inputs",
    "read_agentdojo",
    "read_agentdojo_runs",
    "read_claude_code",
    "read_claude_code_stream",
    "read_hook_store",
    "read_inputs",
    "read_jsonl",
    "read_jsonl_stream",
    "read_mcp",
    "read_mcp_stream",
    "read_otlp",
    "read_otlp_stream",
    "read_part",
    "read_tool_list",
    "read_tool_lists",
]
