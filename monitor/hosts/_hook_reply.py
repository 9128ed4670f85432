"""The reply a Claude Code turn ended with, for the hook's ``Stop`` event (standard library only, imported by the
client at every event): an image in the reply whose URL carries private data leaks when the reply is shown, and
no tool call is there to decide on."""

from __future__ import annotations

import os

from monitor.hosts._hook_json import dumps, loads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_TRANSCRIPT_TAIL = 1 << 20


def _parse(data: bytes) -> Any:
    try:
        return loads(data)
    except (ValueError, RecursionError):
        return None


def with_last_reply(payload: bytes) -> bytes:
    """A ``Stop`` payload with ``last_assistant_message`` (the reply the turn ended with, read from the end of its
    transcript) when Claude Code did not send it: an image in the reply whose URL carries private data leaks when
    shown, with no tool call to decide on. Any other payload as it is; never raises."""
    if b'"Stop"' not in payload or b'"last_assistant_message"' in payload:
        return payload
    try:
        obj = _parse(payload)
        path = obj.get("transcript_path") if isinstance(obj, dict) else None
        if obj.get("hook_event_name") != "Stop" or not isinstance(path, str) or not path.endswith(".jsonl"):
            return payload
        reply = _read_last_reply(path)
        if not reply:
            return payload
        return dumps({**obj, "last_assistant_message": reply}, ensure_ascii=False).encode()
    except Exception:
        return payload


def _read_last_reply(path: str) -> str:
    """The text of the last assistant line of a transcript after the user's last prompt, from its last MiB."""
    with open(path, "rb") as transcript:
        transcript.seek(0, os.SEEK_END)
        size = transcript.tell()
        transcript.seek(max(0, size - _TRANSCRIPT_TAIL))
        lines = transcript.read(_TRANSCRIPT_TAIL).splitlines()
    for raw in reversed(lines):
        line = _parse(raw)
        if not isinstance(line, dict) or line.get("isSidechain") is True:
            continue
        message = line.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if line.get("type") == "user" and isinstance(content, str):
            return ""  # the user's prompt: this turn wrote no text
        if line.get("type") == "assistant" and isinstance(content, list):
            texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
            reply = "\n".join(t for t in texts if isinstance(t, str) and t.strip())
            if reply:
                return reply
    return ""
