"""Print what the Claude Code hook stored: each session, then the decisions it took and any events still
waiting for the engine.

    python hook_store_report.py [STORE]

STORE defaults to the hook's own store (``$TRIFECTA_STATE_DIR/hooks.sqlite3``, else the user's state
directory). The store is opened read-only: it may be read while hooks write it.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from monitor.errors import InputError
from monitor.store import HookStore, default_store_path


def main() -> int:
    """Print the report; exit 2 when the store cannot be read."""
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else default_store_path()
    try:
        with HookStore(path, read_only=True) as store:
            for session in store.sessions():
                seen = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(session.last_seen))
                state = "ended" if session.ended else "open"
                print(
                    f"{session.session_id}  last seen {seen} UTC  {state}  level={session.level or '-'}  "
                    f"worst={session.worst_action or '-'}  calls={session.calls}  events={session.events}  "
                    f"cwd={session.cwd or '-'}"
                )
                for decision in store.decisions(session.session_id):
                    print(f"  #{decision.seq} {decision.action:<7} {decision.tool}: {decision.message}")
                waiting = store.unprocessed(session.session_id)
                if waiting:
                    print(f"  {len(waiting)} event(s) not yet processed by the engine")
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
