"""The SQLite store of hook events and decisions (standard library only).

The Claude Code hook keeps each session's events in one SQLite file, ``hooks.sqlite3`` in the state
directory (:func:`default_state_dir`: ``$TRIFECTA_STATE_DIR`` when set, else the user's state directory),
and :class:`HookStore` is the one way the package writes and reads it. Importing this package loads the
standard library and :mod:`monitor.errors` only, each name when first used, so a short-lived hook process
starts fast (:func:`default_state_dir` does not load SQLite).

**The file.** A SQLite 3 database in WAL mode, written with ``synchronous=FULL``; each hook event is one
``BEGIN IMMEDIATE`` transaction (the event, its decision and the session's summary together), so writers of
several processes take turns, and a commit that returned survives a ``kill -9``. ``PRAGMA application_id``
is ``0x54524946`` ("TRIF"); ``PRAGMA user_version`` is the schema version (:data:`SCHEMA_VERSION`). The
folder is created with mode 0700 and the file with mode 0600: payloads hold what the agent read and wrote.

**Tables** (schema version 2):

``events``: one row per hook event, in the order the store received them.

- ``seq INTEGER PRIMARY KEY AUTOINCREMENT``: the event's place, unique and increasing, never reused;
- ``session_id TEXT``: the payload's ``session_id``;
- ``event TEXT``: the payload's ``hook_event_name`` (``SessionStart``, ``UserPromptSubmit``, ``PreToolUse``,
  ``PostToolUse``, ``SessionEnd``, …);
- ``received REAL``: when the hook received it, in seconds since the Unix epoch;
- ``payload TEXT``: the JSON the hook read on its standard input, exactly as it came;
- ``processed INTEGER`` (0 or 1): 0 for an event the hook stored without the engine's decision (the engine
  was unreachable), until the engine processes it.

``decisions``: one row per decided tool call (a ``PreToolUse``).

- ``seq INTEGER PRIMARY KEY REFERENCES events(seq)``: the event the decision was taken on;
- ``session_id TEXT``, ``call_id TEXT`` (the payload's ``tool_use_id``), ``tool TEXT`` (the tool's name);
- ``action TEXT``: ``allow``, ``confirm`` (Claude Code's ``ask``) or ``deny``;
- ``level TEXT``: the session's level after the call (``clean``, ``partial``, ``armed``, ``trifecta``,
  ``exfiltration``);
- ``reasons TEXT``: the reason codes, a JSON array of strings;
- ``message TEXT``: the one line a person reads (Claude Code's ``permissionDecisionReason``).

``sessions``: one summary row per session, kept up to date by each event's transaction.

- ``session_id TEXT PRIMARY KEY``; ``first_seen REAL``, ``last_seen REAL`` (the earliest and latest
  ``received``); ``events INTEGER``, ``calls INTEGER`` (events and decisions stored);
- ``level TEXT``: the latest level given (``''`` before any); ``worst_action TEXT``: the strictest action
  taken (``''`` before any decision);
- ``ended INTEGER``: 1 when the session's latest event ended it (a ``SessionEnd``);
- ``cwd TEXT``: the latest ``cwd`` a payload named, else NULL.

``private_writes``, one row per file a session wrote private data to, by project (the payload's ``cwd``):
``project TEXT``, ``path TEXT`` (absolute; the key with ``project``), ``session_id TEXT``, ``call_id TEXT``,
``detail TEXT`` (what private data it holds), ``written REAL``. A later session of the project that sends the
file (``git push`` of the folder that holds it, ``curl -F @file``, ``scp file``) gets an alert.

**Versions.** Version 1 held ``events`` (without ``processed``) and ``decisions``; version 2 added
``events.processed`` (1 for every older event) and ``sessions``, filled from the events and decisions;
version 3 added ``private_writes``.
Opening a store writable brings it to the current version in one transaction; opening it read-only reads
an older version as it is. A store of a newer version than this one reads, a file that is not a SQLite
database, a damaged one and one of another application are refused with
:class:`~monitor.errors.InputError` naming the file, and are left as they were.

**Reading it.** ``trifecta analyze hooks.sqlite3`` reports its sessions as it would the same payloads in a
JSON Lines file; ``sqlite3 -readonly hooks.sqlite3 'SELECT * FROM sessions ORDER BY last_seen DESC'``
lists them while hooks write.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not imported from typing: the hook client must not pay for importing it
if TYPE_CHECKING:
    from typing import Any

    from monitor.store._paths import default_state_dir, default_store_path
    from monitor.store._schema import SCHEMA_VERSION
    from monitor.store._store import HookStore, PrivateWrite, StoredDecision, StoredEvent, StoredSession

# Each name is imported when first used (PEP 562): the hook client asks for the default state directory at every
# event and must not load SQLite and the store's classes for it. The loader has the shape of ``monitor``'s and
# ``monitor.otel``'s; each package keeps its own, so the client's path reads no module it does not need.
_HOMES = {
    "HookStore": "monitor.store._store",
    "PrivateWrite": "monitor.store._store",
    "SCHEMA_VERSION": "monitor.store._schema",
    "StoredDecision": "monitor.store._store",
    "StoredEvent": "monitor.store._store",
    "StoredSession": "monitor.store._store",
    "default_state_dir": "monitor.store._paths",
    "default_store_path": "monitor.store._paths",
}


def __getattr__(name: str) -> Any:
    """Import a public name on first use."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "HookStore",
    "PrivateWrite",
    "SCHEMA_VERSION",
    "StoredDecision",
    "StoredEvent",
    "StoredSession",
    "default_state_dir",
    "default_store_path",
]
