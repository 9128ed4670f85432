"""AgentDojo run files: one run (session) per JSON file, in a file, a folder tree or a ``.tar.gz``.

:func:`read_agentdojo` streams the records ``analyze`` reads. :func:`read_agentdojo_runs` gives the same
records run by run, each with what its file says about the run (:class:`AgentDojoRun`), for the evaluation.
Either way each file is read and decoded once.
"""

from __future__ import annotations

import os
import tarfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Any

import orjson

from monitor.errors import InputError
from monitor.jsonrecords import decode_json_record, flatten_json_text
from monitor.models import Record, RecordError, RecordStream, SessionEnd, ToolCall, ToolResult, UserMessage

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar")
_BLOCK = 1 << 20


@dataclass(frozen=True, slots=True)
class AgentDojoRun:
    """One AgentDojo run file: what it says about the run, and the records ``analyze`` reads from it.

    ``records`` are the run's events, the errors of its messages and its :class:`SessionEnd` (none when the
    file holds no ``messages`` list: then only that error). ``source`` names the file in errors (``path`` or
    ``archive!entry``); ``entry`` is the file as found: its path (the input path joined with the path below
    it) or its name in the archive. A field the file leaves out or empty is None.
    """

    session_id: str
    source: str
    entry: str
    suite: str | None
    injection_task_id: str | None
    error: str | None
    security: bool | None
    records: tuple[Record, ...]

    @property
    def attack(self) -> str:
        """Return the attack folder the file is in (AgentDojo writes ``<user task>/<attack>/<injection>.json``);
        ``none`` when the entry has no folder."""
        parts = PurePosixPath(self.entry).parts
        return parts[-2] if len(parts) >= 2 else "none"

    @property
    def user_task(self) -> str:
        """Return the user task folder above the attack folder (``user_task_N``, or ``injection_task_N`` for a
        run that gives the attacker's goal as the user's task); empty when the entry has no such folder."""
        parts = PurePosixPath(self.entry).parts
        return parts[-3] if len(parts) >= 3 else ""


@dataclass(frozen=True, slots=True)
class _RunFile:
    session_id: str
    source: str
    entry: str
    data: bytearray


def server_for_suite(suite: Any) -> str:
    """Return the server name AgentDojo tools are reported under: ``agentdojo-<suite>``."""
    return f"agentdojo-{suite}" if isinstance(suite, str) and suite else "agentdojo"


def is_archive(path: Path) -> bool:
    """Return True for the archive forms AgentDojo runs are shipped in."""
    return path.name.endswith(ARCHIVE_SUFFIXES)


def read_agentdojo(path: Path, root: Path | None = None) -> RecordStream:
    """Stream the records of the runs under ``path``: a run file, a folder tree of them, or an archive.

    The session id is the file's path below ``root`` (the input path given by the user; for a single
    file, its folder), without ``.json``. What cannot be read is a :class:`RecordError`; nothing is raised.
    """
    for run in read_agentdojo_runs(path, root):
        if isinstance(run, AgentDojoRun):
            yield from run.records
        else:
            yield run


def read_agentdojo_runs(path: Path, root: Path | None = None) -> Iterator[AgentDojoRun | RecordError]:
    """Stream the runs under ``path`` as :func:`read_agentdojo` reads them, one :class:`AgentDojoRun` a file.

    A file, archive or archive entry that cannot be read, or is not a JSON object, is a :class:`RecordError`
    (naming it, and the line for bad JSON) in place of its run; nothing is raised.
    """
    for item in _run_files(path, root):
        yield item if isinstance(item, RecordError) else _parse_run(item)


def iter_run_files(path: Path) -> Iterator[tuple[str, bytes]]:
    """Yield ``(entry, bytes)`` of every run file under ``path`` (file, folder or archive), for benchmarks.

    Raises :class:`~monitor.errors.InputError` at the first file or archive that cannot be read.
    """
    for item in _run_files(path, None):
        if isinstance(item, RecordError):
            raise InputError(item.source, item.message)
        yield item.entry, bytes(item.data)


def _run_files(path: Path, root: Path | None) -> Iterator[_RunFile | RecordError]:
    """Every run file under ``path`` once, read whole, in order; archives are walked as a stream."""
    if is_archive(path):
        yield from _archive_files(path)
    elif path.is_dir():
        for file in sorted(p for p in path.rglob("*") if p.is_file() and (p.suffix == ".json" or is_archive(p))):
            yield from _run_files(file, root or path)
    else:
        base = root or path.parent
        session_id = str(PurePosixPath(*path.relative_to(base).parts)).removesuffix(".json")
        try:
            with path.open("rb") as fh:
                run_file = _RunFile(session_id, str(path), str(path), _read_whole(fh, os.fstat(fh.fileno()).st_size))
        except OSError as exc:
            yield RecordError(source=str(path), message=f"cannot read: {exc.strerror or exc}")
            return
        yield run_file


def _archive_files(path: Path) -> Iterator[_RunFile | RecordError]:
    try:
        tar = tarfile.open(path, mode="r|*")  # noqa: SIM115 - closed by the with below, after errors are reported
    except (OSError, tarfile.TarError) as exc:
        yield RecordError(source=str(path), message=f"cannot open archive: {exc}")
        return
    with tar:
        try:
            for member in tar:
                if not member.isfile() or not member.name.endswith(".json"):
                    continue
                name = member.name.removeprefix("./")
                source = f"{path}!{name}"
                extracted = tar.extractfile(member)
                if extracted is None:
                    yield RecordError(source=source, message="archive entry has no data")
                    continue
                yield _RunFile(name.removesuffix(".json"), source, member.name, _read_whole(extracted, member.size))
        except (OSError, tarfile.TarError, EOFError) as exc:
            yield RecordError(source=str(path), message=f"archive is damaged; stopped reading: {exc}")


def _read_whole(fh: IO[bytes], size: int) -> bytearray:
    """All of ``fh`` in one buffer, sized once by ``size`` (the length expected) and filled a block at a time."""
    data = bytearray(size)
    got = 0
    while got < size and (block := fh.read(min(_BLOCK, size - got))):
        data[got : got + len(block)] = block
        got += len(block)
    del data[got:]
    while block := fh.read(_BLOCK):  # grown since it was sized
        data += block
    return data


def _parse_run(file: _RunFile) -> AgentDojoRun | RecordError:
    """Turn one run file into its run, or a :class:`RecordError` naming the file (and line) when it is not one.

    A run whose messages hold no message of a known role (an all-null run) is an error, never a clean
    session (a run with an empty list of messages, as AgentDojo writes when a run never started, is an empty
    session); keys repeated in the file are errors too, and the run is read with every value.
    """
    if not file.data or file.data.isspace():
        return RecordError(source=file.source, message="empty file: no AgentDojo run in it")
    try:  # the file's bytes are given away: decoded, they are let go before the records are made
        run, problems = decode_json_record(file.data)
    except orjson.JSONDecodeError as exc:
        return RecordError(source=f"{file.source}:{exc.lineno}", message=f"not JSON: {exc.msg}")
    if not isinstance(run, dict):
        return RecordError(source=file.source, message="not an AgentDojo run: no 'messages' list")
    errors = tuple(
        RecordError(source=f"{file.source}#{p.where.removeprefix('/')}", message=p.message) for p in problems
    )
    records: tuple[Record, ...]
    messages = run.get("messages")
    if not isinstance(messages, list):
        records = (*errors, RecordError(source=file.source, message="not an AgentDojo run: no 'messages' list"))
    elif messages and not any(
        isinstance(m, dict) and isinstance(m.get("role"), str) and m["role"] in _ROLES for m in messages
    ):
        what = f"none of its {len(messages)} messages has a known role"
        records = (*errors, RecordError(source=file.source, message=f"not an AgentDojo run: {what}; nothing read"))
    else:
        records = (
            *errors,
            *_events(run, file.session_id, file.source),
            SessionEnd(session_id=file.session_id, source=file.source),
        )
    security = run.get("security")
    return AgentDojoRun(
        session_id=file.session_id,
        source=file.source,
        entry=file.entry,
        suite=_field_text(run.get("suite_name")),
        injection_task_id=_field_text(run.get("injection_task_id")),
        error=_field_text(run.get("error")),
        security=security if isinstance(security, bool) else None,
        records=records,
    )


def _field_text(value: Any) -> str | None:
    """A run field as text; None when it is absent, null or empty."""
    return str(value) if value else None


_ROLES = frozenset({"system", "user", "assistant", "tool"})


def _tool_calls(message: dict[str, Any]) -> list[Any]:
    """An assistant message's tool calls; what is not a list holds none."""
    calls = message.get("tool_calls")
    return calls if isinstance(calls, list) else []


def _events(run: dict[str, Any], session_id: str, source: str) -> RecordStream:
    server = server_for_suite(run.get("suite_name"))
    id_counts = Counter(
        tc["id"]
        for m in run["messages"]
        if isinstance(m, dict) and m.get("role") == "assistant"
        for tc in _tool_calls(m)
        if isinstance(tc, dict) and isinstance(tc.get("id"), str)
    )
    seen_user = False
    position = 0
    unpaired: list[str] = []
    by_given_id: dict[str, str] = {}
    used: set[str] = set()
    for i, message in enumerate(run["messages"]):
        if not isinstance(message, dict):
            yield RecordError(source=f"{source}#messages/{i}", message="message is not an object; skipped")
            continue
        role = message.get("role")
        if not isinstance(role, str) or role not in _ROLES:
            yield RecordError(source=f"{source}#messages/{i}", message=f"message role {role!r} is unknown; skipped")
        elif role == "user" and not seen_user:
            seen_user = True
            yield UserMessage(
                session_id=session_id, text=_text(message.get("content")), source=f"{source}#messages/{i}"
            )
        elif role == "assistant":
            if message.get("tool_calls") is not None and not isinstance(message.get("tool_calls"), list):
                yield RecordError(source=f"{source}#messages/{i}", message="'tool_calls' is not a list; skipped")
            for tc in _tool_calls(message):
                if not isinstance(tc, dict) or not isinstance(tc.get("function"), str):
                    yield RecordError(source=f"{source}#messages/{i}", message="tool call without a function name")
                    continue
                given = tc.get("id") if isinstance(tc.get("id"), str) and tc.get("id") else None
                call_id = given if given and given not in used else f"{given or 'call'}#{position}"
                used.add(call_id)
                if given and id_counts[given] == 1:
                    by_given_id[given] = call_id
                unpaired.append(call_id)
                args = tc.get("args")
                yield ToolCall(
                    session_id=session_id,
                    call_id=call_id,
                    server=server,
                    tool=tc["function"],
                    arguments=args if isinstance(args, dict) else None,
                    source=f"{source}#messages/{i}",
                )
                position += 1
        elif role == "tool":
            call_id = _pair(message, by_given_id, unpaired)
            if call_id is None:
                yield RecordError(source=f"{source}#messages/{i}", message="tool result with no call to pair with")
                continue
            error = message.get("error")
            content = _text(message.get("content"))
            yield ToolResult(
                session_id=session_id,
                call_id=call_id,
                result=content or _text(error),
                is_error=error is not None,
                source=f"{source}#messages/{i}",
            )


def _pair(message: dict[str, Any], by_given_id: dict[str, str], unpaired: list[str]) -> str | None:
    """Pair a tool message with its call by id when that id is unique in the run, else by order."""
    given = message.get("tool_call_id")
    call_id = by_given_id.get(given) if isinstance(given, str) else None
    if call_id is not None and call_id in unpaired:
        unpaired.remove(call_id)
        return call_id
    return unpaired.pop(0) if unpaired else None


def _text(content: Any) -> str:
    """A message's content as text: a string as it is, text blocks joined by lines (an iterative walk)."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    stack: list[Any] = [content]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(reversed([b.get("content", b.get("text")) if isinstance(b, dict) else b for b in node]))
        elif isinstance(node, str):
            parts.append(node)
        elif isinstance(node, dict):
            parts.append(flatten_json_text(node))
        elif node is not None:
            parts.append(str(node))
        else:
            parts.append("")
    return "\n".join(parts) if isinstance(content, list) else (parts[0] if parts else "")
