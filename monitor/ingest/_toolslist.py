"""The one reader of tool lists: what ``trifecta lint``, ``trifecta clients`` and ``trifecta rules suggest|pin``
read.

A file holds one of:

- a ``tools/list`` result (``{"tools": [...]}``), or a JSON-RPC response holding one (``{"result": {...}}``);
- a bare tools array, or one tool (an object with a string ``name`` and an ``inputSchema``, ``annotations``
  or ``description``);
- our ``mcp-servers`` data files (``server``, ``protocolVersion``, ``tools``) and mcpdesc documents
  (``info.name``, ``protocolVersions``, ``tools``);
- an MCP JSON-RPC log (:mod:`monitor.ingest._jsonrpc`), as one JSON document or as JSON lines: each
  ``tools/list`` result in it, with the protocol version of the server's ``initialize`` result or, for
  2026-07-28 traffic (no ``initialize``), of its requests' ``params._meta``.

The server name, its announced ``serverInfo.name`` and the protocol version are taken when the file says them.
A :class:`ToolList` keeps the raw tools as served and the JSON pointer of each in its document (or log line),
so findings can point into it. It also keeps the :class:`ProtocolNote` values of the version rules the file
breaks (an unknown version; for 2026-07-28 traffic a removed method, a protocol session id, a request without
its ``_meta`` version or capabilities, a result without ``resultType``), for ``trifecta lint`` to report.

:func:`read_tool_lists` never raises: what cannot be read comes back as :class:`ToolListProblem` values.
:func:`read_tool_list` reads the one tool list of a file and raises :class:`~monitor.errors.InputError`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

import orjson
from pydantic import BaseModel, ConfigDict, Field

from monitor.errors import InputError
from monitor.ingest._files import describe_read_error
from monitor.ingest._jsonrpc import (
    LOG_SUFFIXES,
    MESSAGE_KEYS,
    PROTOCOL_SESSION_KEYS,
    SERVER_KEYS,
    SERVER_METHOD_PREFIXES,
    is_log_line,
    is_message,
)
from monitor.jsonrecords import decode_json_record
from monitor.models import (
    CLIENT_CAPABILITIES_META_KEY,
    PROTOCOL_VERSION_META_KEY,
    find_protocol_version,
    infer_protocol_version,
    is_protocol_date,
    is_sessionless_protocol,
    read_announced_identity,
    read_server_info,
)

MAX_TOOL_LIST_BYTES = 64 * 1024 * 1024
"""Larger files are reported as unreadable instead of being loaded."""


class ProtocolNote(BaseModel):
    """A protocol-version rule that a tool list's file breaks: the lint rule id, where (log line, JSON pointer
    into the document or line as served), what is wrong and how to fix it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rule: str
    line: int | None = None
    pointer: str
    message: str
    hint: str
    server: str | None = None
    """The server whose traffic breaks it, when the log names one (it may have no tool list of its own)."""


class ToolList(BaseModel):
    """The raw tools of one ``tools/list`` result (or array, tool, data file), with where they were found.

    ``line`` is the 1-based line of a JSON-lines log (None for a JSON document); ``tool_pointers[i]`` is
    the JSON pointer of ``tools[i]`` in the document (or log line) as served.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    file: str
    line: int | None = None
    server: str | None = None
    protocol_version: str | None = None
    protocol_version_source: str | None = Field(default=None, description="where the version was declared")
    tools: tuple[Any, ...]
    tool_pointers: tuple[str, ...]
    protocol_notes: tuple[ProtocolNote, ...] = ()
    """The version rules the file breaks, kept on the first tool list of each server (see the module)."""
    server_info: str | None = None
    """The ``serverInfo.name`` the server announced (beside the tools, or in the log), read as hostile input."""

    @property
    def server_name(self) -> str:
        """The server name, or the file's name without its suffix when the file does not say."""
        return self.server or Path(self.file).stem


class ToolListProblem(BaseModel):
    """A file (or a line of a log) that holds no readable tool list, and why."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    file: str
    line: int | None = Field(default=None, description="1-based line of a JSON-lines log; None for the file")
    message: str

    @property
    def source(self) -> str:
        """``file`` or ``file:line``."""
        return self.file if self.line is None else f"{self.file}:{self.line}"


# -- many files, never raising ------------------------------------------------------------------------------


def read_tool_lists(paths: Iterable[str | Path]) -> tuple[list[ToolList], list[ToolListProblem]]:
    """Read the tool lists of ``paths``: files as given, folders walked recursively (sorted, hidden entries
    skipped, files ending in one of :data:`~monitor.ingest._jsonrpc.LOG_SUFFIXES`).

    Returns the tool lists and, in input order, a problem for each path or line that could not be read.
    """
    lists: list[ToolList] = []
    problems: list[ToolListProblem] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files = _files_in(path)
            if not files:
                problems.append(
                    ToolListProblem(file=str(path), message=f"no {', '.join(LOG_SUFFIXES)} files in this folder")
                )
        elif path.exists():
            files = [path]
        else:
            problems.append(ToolListProblem(file=str(path), message="no such file or folder"))
            continue
        for file in files:
            found, bad = _word_leniently(_read_file(file))
            lists.extend(found)
            problems.extend(bad)
    return lists, problems


def _files_in(folder: Path) -> list[Path]:
    return sorted(
        p
        for p in folder.rglob("*")
        if p.is_file()
        and p.suffix.lower() in LOG_SUFFIXES
        and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )


def _word_leniently(contents: _Contents) -> tuple[list[ToolList], list[ToolListProblem]]:
    file = contents.file
    if contents.not_json is not None:
        exc = contents.not_json
        message = f"not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        if contents.json_lines:
            message = "JSON lines without any JSON-RPC message: not a tool list or an MCP JSON-RPC log"
        return [], [ToolListProblem(file=file, message=message)]
    if contents.no_tools:
        return [], [ToolListProblem(file=file, message=_describe_missing_tools(contents.doc))]
    return contents.lists, contents.problems


def _describe_missing_tools(doc: Any) -> str:
    if isinstance(doc, dict):
        other = [k for k in ("resources", "resourceTemplates", "prompts") if k in doc]
        if other:
            return f"declares {', '.join(other)} but no tools; only tool annotations are linted"
    return (
        "no tools here: expected a tools/list result, a tools array, a tool object, an MCP JSON-RPC log or an "
        "mcp-servers document"
    )


# -- one file, raising --------------------------------------------------------------------------------------


def read_tool_list(path: Path) -> ToolList:
    """Read the one tool list of a file (a log must hold exactly one ``tools/list`` result).

    Raises :class:`~monitor.errors.InputError` naming the file (``file:line`` where its JSON breaks off, or
    for a bad line of a log) when it cannot be read or does not hold exactly one tool list.
    """
    contents = _read_file(path)
    file = contents.file
    if contents.not_json is not None:
        raise InputError(f"{file}:{contents.not_json.lineno}", f"not JSON: {contents.not_json.msg}")
    if contents.no_tools:
        if isinstance(contents.doc, dict):
            raise InputError(file, "no 'tools' array and not a single tool object")
        raise InputError(file, "expected a tools/list result, a tools array or a tool object")
    if contents.problems:
        problem = contents.problems[0]
        raise InputError(problem.source, problem.message)
    if len(contents.lists) > 1:
        lines = ", ".join(str(x.line) for x in contents.lists if x.line is not None)
        where = f" (lines {lines})" if lines else ""
        raise InputError(file, f"{len(contents.lists)} tools/list results{where}; give a file that holds one")
    return contents.lists[0]


# -- reading one file ---------------------------------------------------------------------------------------


@dataclass
class _Contents:
    """What one file holds: its tool lists and the problems of its lines, or why it holds none at all."""

    file: str
    lists: list[ToolList] = field(default_factory=list)
    problems: list[ToolListProblem] = field(default_factory=list)
    not_json: orjson.JSONDecodeError | None = None
    """Set when the file is neither one JSON document nor a JSON-RPC log in JSON lines."""
    json_lines: bool = False
    """With ``not_json``: the file is JSON lines (none of them a JSON-RPC message)."""
    no_tools: bool = False
    """Set when the file is one JSON document (``doc``) without tools."""
    doc: Any = None


def _read_file(path: Path) -> _Contents:
    file = str(path)
    try:
        if path.stat().st_size > MAX_TOOL_LIST_BYTES:
            message = f"larger than {MAX_TOOL_LIST_BYTES // (1024 * 1024)} MiB; not read"
            return _Contents(file, problems=[ToolListProblem(file=file, message=message)])
        data = path.read_bytes()
    except OSError as exc:
        return _Contents(file, problems=[ToolListProblem(file=file, message=describe_read_error(exc))])
    if not data.strip():
        return _Contents(file, problems=[ToolListProblem(file=file, message="empty file: no tool list in it")])
    try:
        doc, found_problems = decode_json_record(data)
    except orjson.JSONDecodeError as exc:
        records, bad_lines = _split_json_lines(file, data)
        if any(is_log_line(record) for _, record in records):
            lists, problems = _read_log(records, file)
            return _Contents(file, lists, bad_lines + problems)
        return _Contents(file, not_json=exc, json_lines=len(records) > 1 and not bad_lines)
    ambiguous = [ToolListProblem(file=file, message=f"{p.where or 'document'}: {p.message}") for p in found_problems]
    if is_log_line(doc):
        lists, problems = _read_log([(None, doc)], file)
        return _Contents(file, lists, ambiguous + problems)
    found = parse_tool_list(doc, file)
    if found is None:
        return _Contents(file, problems=ambiguous, no_tools=True, doc=doc)
    return _Contents(file, [found], ambiguous)


def _split_json_lines(file: str, data: bytes) -> tuple[list[tuple[int | None, Any]], list[ToolListProblem]]:
    records: list[tuple[int | None, Any]] = []
    problems: list[ToolListProblem] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            value, found = decode_json_record(raw)
        except orjson.JSONDecodeError as exc:
            problems.append(ToolListProblem(file=file, line=number, message=f"not JSON: {exc.msg}"))
            continue
        records.append((number, value))
        problems.extend(
            ToolListProblem(file=file, line=number, message=f"{p.where or 'line'}: {p.message}") for p in found
        )
    return records, problems


# -- documents ----------------------------------------------------------------------------------------------


def parse_tool_list(doc: Any, file: str, line: int | None = None, base: str = "") -> ToolList | None:
    """Find the tools of one decoded document (``base`` is the JSON pointer of ``doc`` within its log line).

    Understands a bare tools array, a ``tools/list`` result, a JSON-RPC response holding one, our
    ``mcp-servers`` files (``server``, ``protocolVersion``, ``tools``), mcpdesc documents (``info.name``,
    ``protocolVersions``, ``tools``) and a single tool. Returns ``None`` when the document holds no tools.
    """
    if isinstance(doc, list):
        return _tool_list(file, line, doc, _pointers(base, doc), None, (None, None))
    if not isinstance(doc, dict):
        return None
    if isinstance(doc.get("result"), dict) and isinstance(doc["result"].get("tools"), list):
        return parse_tool_list(doc["result"], file, line, f"{base}/result")
    server = _server_name(doc)
    version = _protocol_version(doc, base)
    notes = _unknown_version_notes(version, line)
    announced = read_server_info(doc.get("serverInfo"))
    info = announced.name if announced is not None else None
    if isinstance(doc.get("tools"), list):
        tools = doc["tools"]
        return _tool_list(file, line, tools, _pointers(f"{base}/tools", tools), server, version, notes, info)
    if isinstance(doc.get("name"), str) and any(k in doc for k in ("inputSchema", "annotations", "description")):
        return _tool_list(file, line, [doc], [base], server, version, notes, info)
    return None


def _unknown_version_notes(version: tuple[str | None, str | None], line: int | None) -> tuple[ProtocolNote, ...]:
    declared, where = version
    if declared is None or find_protocol_version(declared) is not None:
        return ()
    return (_unknown_version_note(declared, line, where or ""),)


def _unknown_version_note(declared: str, line: int | None, pointer: str) -> ProtocolNote:
    basis = infer_protocol_version(declared)
    checked = f"checked as {basis.version}" if basis is not None else "no version rule could be checked"
    return ProtocolNote(
        rule="protocol-version-unknown",
        line=line,
        pointer=pointer,
        message=f"protocol version {declared!r} is not a known MCP protocol version; {checked}",
        hint="Declare one of the known versions (docs/mcp-protocol.md), or check the value for a typo.",
    )


def _tool_list(
    file: str,
    line: int | None,
    tools: Sequence[Any],
    pointers: Sequence[str],
    server: str | None,
    version: tuple[str | None, str | None],
    notes: Sequence[ProtocolNote] = (),
    server_info: str | None = None,
) -> ToolList:
    return ToolList(
        file=file,
        line=line,
        server=server,
        protocol_version=version[0],
        protocol_version_source=version[1],
        tools=tuple(tools),
        tool_pointers=tuple(pointers),
        protocol_notes=tuple(notes),
        server_info=server_info,
    )


def _pointers(base: str, tools: Sequence[Any]) -> list[str]:
    """The JSON pointer of each item of the array at ``base``."""
    return [f"{base}/{i}" for i in range(len(tools))]


def _server_name(doc: Mapping[str, Any]) -> str | None:
    if isinstance(doc.get("server"), str):
        return str(doc["server"])
    for key in ("serverInfo", "info"):  # a tools/list capture with serverInfo; an mcpdesc document's info
        info = doc.get(key)
        if isinstance(info, dict) and isinstance(info.get("name"), str):
            return str(info["name"])
    return None


def _protocol_version(doc: Mapping[str, Any], base: str) -> tuple[str | None, str | None]:
    version = doc.get("protocolVersion")
    if isinstance(version, str):
        return version, f"{base}/protocolVersion"
    versions = doc.get("protocolVersions")  # mcpdesc: every version the server speaks; the earliest decides
    if isinstance(versions, list):
        known = sorted((v, i) for i, v in enumerate(versions) if isinstance(v, str) and is_protocol_date(v))
        if known:
            earliest, index = known[0]
            return earliest, f"{base}/protocolVersions/{index}"
    return None, None


# -- JSON-RPC logs ------------------------------------------------------------------------------------------


def _messages(doc: Any) -> Iterator[tuple[str, dict[str, Any], str | None, str | None]]:
    """Yield ``(pointer, message, server, protocol session field)`` for each JSON-RPC message of one log line.

    A message given as a JSON string inside a wrapper is not read: a pointer cannot point into it.
    """
    server: str | None = None
    container: Any = doc
    base = ""
    if not isinstance(doc, dict):
        session_key = None
    else:
        session_key = next((k for k in PROTOCOL_SESSION_KEYS if doc.get(k) not in (None, "")), None)
    if isinstance(doc, dict) and not is_message(doc):
        server = next((str(doc[k]) for k in SERVER_KEYS if isinstance(doc.get(k), str)), None)
        key = next((k for k in MESSAGE_KEYS if k in doc), None)
        if key is None:
            return
        container, base = doc[key], f"/{key}"
    if isinstance(container, list):
        for i, item in enumerate(container):
            if isinstance(item, dict) and is_message(item):
                yield f"{base}/{i}", item, server, session_key
    elif isinstance(container, dict) and is_message(container):
        yield base, container, server, session_key


_SERVER_REQUEST_PREFIXES = (*SERVER_METHOD_PREFIXES, "notifications/")


def _read_log(records: Sequence[tuple[int | None, Any]], file: str) -> tuple[list[ToolList], list[ToolListProblem]]:
    """Take every ``tools/list`` result of a log, with the protocol version of the server's ``initialize``
    result, else the one its requests declare in ``params._meta`` (2026-07-28 has no ``initialize``).

    ``records`` are ``(line, value)`` pairs; the line is None for a file that is one JSON document. A result
    is told by its shape (``tools`` array; ``protocolVersion`` with ``serverInfo`` or ``capabilities``).
    Servers are told apart by the wrapper's ``server`` field; without one, the log's only ``initialize``
    result names the server and its version. The version rules the log breaks are kept as
    :class:`ProtocolNote` values on the first tool list of the server they concern.
    """
    messages = [(line, *m) for line, doc in records for m in _messages(doc)]
    meta_versions: dict[str | None, tuple[str, str]] = {}
    for line, pointer, message, server, _ in messages:  # first: a tools/list may come before the first request
        declared = _declared_version(message, pointer, line)
        if declared is not None and "method" in message:
            meta_versions.setdefault(server, declared)
    versions: dict[str | None, tuple[str, str]] = {}
    names: dict[str | None, str] = {}  # the serverInfo names, as read_server_info keeps them
    lists: list[ToolList] = []
    for line, pointer, message, server, _ in messages:
        result = message.get("result")
        if not isinstance(result, dict):
            continue
        initialize = _is_initialize_result(result)
        identity = read_announced_identity(result, initialize=initialize)
        if identity is not None and identity.name is not None:
            names[server] = identity.name
        if initialize:
            declared = _declared_version(message, pointer, line)
            assert declared is not None
            versions[server] = declared
        elif isinstance(result.get("tools"), list):
            version = _only_or_own(versions, server) or _only_or_own(meta_versions, server) or (None, None)
            info = names.get(server) or (next(iter(names.values())) if len(names) == 1 else None)
            name = server or info
            tools = result["tools"]
            pointers = _pointers(f"{pointer}/result/tools", tools)
            lists.append(_tool_list(file, line, tools, pointers, name, version, server_info=info))
    if not lists:
        return [], [ToolListProblem(file=file, message="an MCP JSON-RPC log without any tools/list result")]
    for server, found in _log_notes(messages, meta_versions).items():
        index = next((i for i, x in enumerate(lists) if server is None or x.server == server), 0)
        listing = lists[index]
        named = tuple(note.model_copy(update={"server": server}) for note in found)
        lists[index] = listing.model_copy(update={"protocol_notes": listing.protocol_notes + named})
    return lists, []


def _only_or_own(versions: Mapping[str | None, tuple[str, str]], server: str | None) -> tuple[str, str] | None:
    """The version of ``server``, else the only version the log declares; None otherwise."""
    return versions.get(server) or (next(iter(versions.values())) if len(versions) == 1 else None)


def _is_initialize_result(result: Any) -> TypeGuard[dict[str, Any]]:
    return (
        isinstance(result, dict)
        and isinstance(result.get("protocolVersion"), str)
        and ("serverInfo" in result or "capabilities" in result)
    )


def _declared_version(message: dict[str, Any], pointer: str, line: int | None) -> tuple[str, str] | None:
    """The protocol version a message declares, and where: an ``initialize`` result's ``protocolVersion`` or a
    request's ``params._meta`` version (2026-07-28)."""
    at = "" if line is None else f"line {line}: "
    result = message.get("result")
    if _is_initialize_result(result):
        return result["protocolVersion"], f"{at}{pointer}/result/protocolVersion"
    meta = _request_meta(message)
    if isinstance(meta.get(PROTOCOL_VERSION_META_KEY), str):
        return meta[PROTOCOL_VERSION_META_KEY], f"{at}{pointer}/params/_meta/{_META_VERSION_TOKEN}"
    return None


_META_VERSION_TOKEN = PROTOCOL_VERSION_META_KEY.replace("~", "~0").replace("/", "~1")


def _request_meta(message: dict[str, Any]) -> dict[str, Any]:
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta if isinstance(meta, dict) else {}


def _log_notes(
    messages: Sequence[tuple[int | None, str, dict[str, Any], str | None, str | None]],
    meta_versions: Mapping[str | None, tuple[str, str]],
) -> dict[str | None, list[ProtocolNote]]:
    """The version rules each server's traffic breaks, in log order. A server's traffic is checked against
    the rules of 2026-07-28 when its requests declare that version (or a later date) in ``params._meta``."""
    notes: dict[str | None, list[ProtocolNote]] = {}
    reported: set[tuple[str | None, str]] = set()
    client_requests: set[tuple[str | None, str]] = set()
    for line, pointer, message, server, session_key in messages:
        found = notes.setdefault(server, [])
        declared = _declared_version(message, pointer, line)
        if (
            declared is not None
            and find_protocol_version(declared[0]) is None
            and (server, declared[0]) not in reported
        ):
            reported.add((server, declared[0]))
            found.append(_unknown_version_note(declared[0], line, declared[1].rsplit(": ", 1)[-1]))
        version = _only_or_own(meta_versions, server)
        if version is None or not is_sessionless_protocol(version[0]):
            continue
        found.extend(_sessionless_notes(message, pointer, line, version[0], client_requests, server))
        if session_key is not None and (server, "") not in reported:
            reported.add((server, ""))
            found.append(
                ProtocolNote(
                    rule="session-id-in-sessionless-protocol",
                    line=line,
                    pointer=f"/{session_key}",
                    message=f"a protocol session id ({session_key!r}) under protocol version {version[0]}, "
                    "which has no protocol sessions",
                    hint="Log the host's conversation id (conversation_id) instead of a protocol session id.",
                )
            )
    return {server: found for server, found in notes.items() if found}


def _sessionless_notes(
    message: dict[str, Any],
    pointer: str,
    line: int | None,
    version: str,
    client_requests: set[tuple[str | None, str]],
    server: str | None,
) -> list[ProtocolNote]:
    """The 2026-07-28 rules one message breaks: a removed method, a request without its ``_meta`` version
    or capabilities, a result (to a client request) without ``resultType``."""
    entry = infer_protocol_version(version)
    method = message.get("method")
    if isinstance(method, str):
        if entry is not None and method in entry.removed_methods:
            return [
                ProtocolNote(
                    rule="method-not-in-protocol",
                    line=line,
                    pointer=f"{pointer}/method",
                    message=f"{method!r} under protocol version {version}, which removed it",
                    hint=f"Drop {method!r}: under {version} every request stands alone (SEP-2575).",
                )
            ]
        if "id" in message and not method.startswith(_SERVER_REQUEST_PREFIXES):
            client_requests.add((server, repr(message.get("id"))))
            return _meta_notes(message, pointer, line, version)
        return []
    result = message.get("result")
    if isinstance(result, dict) and (server, repr(message.get("id"))) in client_requests and "resultType" not in result:
        return [
            ProtocolNote(
                rule="result-type-missing",
                line=line,
                pointer=f"{pointer}/result",
                message=f"a result without resultType under protocol version {version}",
                hint='Add "resultType": "complete" (or "input_required" when asking for input).',
            )
        ]
    return []


def _meta_notes(message: dict[str, Any], pointer: str, line: int | None, version: str) -> list[ProtocolNote]:
    meta = _request_meta(message)
    missing = [
        key
        for key, kind in ((PROTOCOL_VERSION_META_KEY, str), (CLIENT_CAPABILITIES_META_KEY, dict))
        if not isinstance(meta.get(key), kind)
    ]
    if not missing:
        return []
    return [
        ProtocolNote(
            rule="request-meta-missing",
            line=line,
            pointer=f"{pointer}/params/_meta",
            message=f"{message['method']} request without {' and '.join(repr(k) for k in missing)} in "
            f"params._meta (required under protocol version {version})",
            hint="Send the protocol version (a string) and the client capabilities (an object) in every "
            "request's params._meta.",
        )
    ]
