"""Files that carry private data from one Claude Code session to a later one of the same project.

A session that writes private data to a file (``Write``, ``Edit``, ``MultiEdit``, ``NotebookEdit``) leaves it
where any later session of the project can send it, and that session's own evidence cannot see it: the data
came into another session. The engine records such files in the store (``private_writes``, by the payload's
``cwd``), and a later session's shell command that sends one (``git push`` of the folder that holds it,
``curl -F @file``, ``scp file host:``) raises an ``exfiltration`` alert on that call, also written to the
engine's log: it is the engine's knowledge, not the session's, so a replay of that session alone cannot give it.
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any

import orjson

from monitor.evidence import UNEXAMINED, parse_shell_command
from monitor.session import SessionMonitor
from monitor.store import HookStore

logger = logging.getLogger("monitor.hook")

_WRITE_TOOLS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}
_SHELL_TOOLS = frozenset({"Bash"})
_MAX_DETAIL = 80


def follow_private_files(monitor: SessionMonitor, store: HookStore, session_id: str, payload: bytes) -> None:
    """Record a ``PreToolUse`` write that keeps the session's private data in a file, or tell the session when its
    shell command sends a file another session of the project wrote with private data. Never raises."""
    try:
        obj = orjson.loads(payload)
        if not isinstance(obj, dict) or obj.get("hook_event_name") != "PreToolUse":
            return
        tool, arguments, cwd = obj.get("tool_name"), obj.get("tool_input"), obj.get("cwd")
        call_id = obj.get("tool_use_id") if isinstance(obj.get("tool_use_id"), str) else None
        if not isinstance(arguments, dict) or not isinstance(cwd, str) or not os.path.isabs(cwd):
            return
        if tool in _WRITE_TOOLS:
            _record_write(monitor, store, session_id, call_id or "", cwd, arguments, _WRITE_TOOLS[tool])
        elif tool in _SHELL_TOOLS and isinstance(arguments.get("command"), str):
            _check_sends(monitor, store, session_id, call_id, cwd, arguments["command"])
    except Exception:
        logger.exception("session %r: files kept with private data could not be followed", session_id)


def _record_write(
    monitor: SessionMonitor,
    store: HookStore,
    session_id: str,
    call_id: str,
    cwd: str,
    arguments: dict[str, Any],
    path_key: str,
) -> None:
    path = arguments.get(path_key)
    if not isinstance(path, str) or not path:
        return
    content = {key: value for key, value in arguments.items() if key != path_key}
    found = monitor.find_private_content(session_id, content)
    if found:
        detail = found[0].text[:_MAX_DETAIL]
        target = os.path.normpath(os.path.join(cwd, path))
        store.record_private_write(cwd, target, session_id, call_id, detail, written=time.time())


def _check_sends(
    monitor: SessionMonitor, store: HookStore, session_id: str, call_id: str | None, cwd: str, command: str
) -> None:
    sent = [
        os.path.normpath(os.path.join(cwd, upload))
        for upload in parse_shell_command(command).uploads
        if upload not in ("-", UNEXAMINED) and not upload.startswith(("$", "<"))
    ]
    if not sent:
        return
    for write in store.private_writes(cwd):
        if write.session_id == session_id:
            continue  # the session's own evidence sees what it wrote
        if any(write.path == target or write.path.startswith(target.rstrip(os.sep) + os.sep) for target in sent):
            message = (
                f"this command sends {write.path}, which session {write.session_id} wrote with private data"
                f" ({write.detail}); this session never saw that data"
            )
            monitor.report_cross_session_flow(session_id, call_id, message)
            logger.warning("session %r, call %r: exfiltration alert: %s", session_id, call_id, message)
            return
