"""AgentDojo run files: one run (session) per JSON file, in a file, a folder tree or a ``.tar.gz``."""

from __future__ import annotations

import tarfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import orjson

from monitor.models._events import ToolCall, ToolResult, UserMessage
from monitor.models._records import RecordError, RecordStream, SessionEnd

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar")


def server_for_suite(suite: Any) -> str:
    """The server name AgentDojo tools are reported under: ``agentdojo-<suite>``."""
    return f"agentdojo-{suite}" if isinstance(suite, str) and suite else "agentdojo"


def is_archive(path: Path) -> bool:
    """True for the archive forms AgentDojo runs are shipped in."""
    return path.name.endswith(ARCHIVE_SUFFIXES)


def read_agentdojo(path: Path, root: Path | None = None) -> RecordStream:
    """Stream the runs under ``path``: a run file, a folder tree of them, or an archive.

    The session id is the file's path below ``root`` (the input path given by the user; for a single
    file, its folder), without ``.json``.
    """
    if is_archive(path):
        yield from _read_archive(path)
    elif path.is_dir():
        for file in sorted(p for p in path.rglob("*") if p.is_file() and (p.suffix == ".json" or is_archive(p))):
            yield from read_agentdojo(file, root or path)
    else:
        base = root or path.parent
        session_id = str(PurePosixPath(*path.relative_to(base).parts)).removesuffix(".json")
        try:
            data = path.read_bytes()
        except OSError as exc:
            yield RecordError(source=str(path), message=f"cannot read: {exc.strerror or exc}")
            return
        yield from parse_run(data, session_id, str(path))


def _read_archive(path: Path) -> RecordStream:
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
                yield from parse_run(extracted.read(), name.removesuffix(".json"), source)
        except (OSError, tarfile.TarError, EOFError) as exc:
            yield RecordError(source=str(path), message=f"archive is damaged; stopped reading: {exc}")


def parse_run(data: bytes, session_id: str, source: str) -> RecordStream:
    """Turn one run file's bytes into events, or a :class:`RecordError` naming the file and line."""
    try:
        run = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        yield RecordError(source=f"{source}:{exc.lineno}", message=f"not JSON: {exc.msg}")
        return
    if not isinstance(run, dict) or not isinstance(run.get("messages"), list):
        yield RecordError(source=source, message="not an AgentDojo run: no 'messages' list")
        return
    yield from _events(run, session_id, source)
    yield SessionEnd(session_id=session_id)


def _events(run: dict[str, Any], session_id: str, source: str) -> RecordStream:
    server = server_for_suite(run.get("suite_name"))
    calls = [
        tc
        for m in run["messages"]
        if isinstance(m, dict) and m.get("role") == "assistant"
        for tc in (m.get("tool_calls") or [])
        if isinstance(tc, dict)
    ]
    id_counts = Counter(tc.get("id") for tc in calls)
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
        if role == "user" and not seen_user:
            seen_user = True
            yield UserMessage(session_id=session_id, text=_text(message.get("content")))
        elif role == "assistant":
            for tc in message.get("tool_calls") or []:
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
                session_id=session_id, call_id=call_id, result=content or _text(error), is_error=error is not None
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
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            _text(block.get("content", block.get("text")) if isinstance(block, dict) else block) for block in content
        )
    return "" if content is None else str(content)


def iter_run_files(path: Path) -> Iterator[tuple[str, bytes]]:
    """Yield ``(name, bytes)`` of every run file under ``path`` (file, folder or archive), for benchmarks."""
    if is_archive(path):
        with tarfile.open(path, mode="r|*") as tar:
            for member in tar:
                if member.isfile() and member.name.endswith(".json"):
                    extracted = tar.extractfile(member)
                    if extracted is not None:
                        yield member.name, extracted.read()
    elif path.is_dir():
        for file in sorted(path.rglob("*.json")):
            yield str(file), file.read_bytes()
    else:
        yield str(path), path.read_bytes()
