"""A writer process for the store's crash tests: ``python store_writer.py STORE WRITER COUNT``.

Appends COUNT hook events to the store, one transaction each, and prints ``<seq> <index>`` (flushed) after
each commit returns: a line on its output is a commit the store must keep, whenever the process dies.
Every other event carries a decision. The payloads are valid Claude Code ``PreToolUse`` payloads whose
content is a function of (writer, index), so a reader can tell exactly what each should hold.
"""

from __future__ import annotations

import json
import sys
import time

from monitor.store import HookStore, StoredDecision

ACTIONS = ("allow", "confirm", "deny")


def session_of(writer: int) -> str:
    """The session a writer's events belong to: two writers share each session."""
    return f"session-{writer % 2}"


def make_payload(writer: int, index: int) -> str:
    """The exact payload text of a writer's index-th event (its size varies from one to the next)."""
    return json.dumps(
        {
            "session_id": session_of(writer),
            "hook_event_name": "PreToolUse",
            "cwd": f"/work/writer-{writer}",
            "tool_name": "Bash",
            "tool_input": {"command": f"echo {writer}-{index}", "pad": "é✓" * (97 * (index % 11))},
            "tool_use_id": f"toolu-{writer}-{index}",
        },
        ensure_ascii=False,
    )


def make_decision(writer: int, index: int) -> StoredDecision | None:
    """The decision stored with a writer's index-th event: one every other event."""
    if index % 2:
        return None
    action = ACTIONS[(index // 2) % 3]
    return StoredDecision(0, "", f"toolu-{writer}-{index}", "Bash", action, "armed", ("r1", "r2"), f"{action} it")


def main() -> None:
    """Append the events and print each committed seq."""
    path, writer, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    with HookStore(path) as store:
        for index in range(count):
            seq = store.append(
                session_of(writer),
                "PreToolUse",
                make_payload(writer, index),
                received=time.time(),
                decision=make_decision(writer, index),
            )
            sys.stdout.write(f"{seq} {index}\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
