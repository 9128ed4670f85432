"""The store's schema: its version, the ordered migrations that reach it, and the SQL of its summaries.

Each migration is a list of SQL statements that takes a store from the version before it to its own; a store
is brought up to :data:`SCHEMA_VERSION` by running every migration it lacks, all in one transaction, and
``PRAGMA user_version`` names the version reached. A migration once released is never edited: a change of
the format is a new migration appended to :data:`MIGRATIONS`.
"""

from __future__ import annotations

# ``PRAGMA application_id``: "TRIF". A SQLite file carrying another application's id is not a store.
APPLICATION_ID = 0x54524946

_ACTION_RANKS = (("allow", 1), ("confirm", 2), ("deny", 3))
ACTIONS = frozenset(action for action, _ in _ACTION_RANKS)


def rank_sql(expression: str) -> str:
    """Return SQL ranking an action: allow 1, confirm 2, deny 3, anything else (``''``) 0."""
    cases = " ".join(f"WHEN '{action}' THEN {rank}" for action, rank in _ACTION_RANKS)
    return f"(CASE {expression} {cases} ELSE 0 END)"


def _unrank_sql(expression: str) -> str:
    cases = " ".join(f"WHEN {rank} THEN '{action}'" for action, rank in _ACTION_RANKS)
    return f"(CASE {expression} {cases} ELSE '' END)"


def cwd_sql(payload: str) -> str:
    """Return SQL for the ``cwd`` text of a JSON-object payload, NULL when there is none (or no JSON)."""
    return (
        f"(CASE WHEN json_valid({payload}) THEN "
        f"CASE WHEN json_type({payload}, '$.cwd') = 'text' THEN json_extract({payload}, '$.cwd') END END)"
    )


# The session summaries as the events and decisions give them (used by migration 2 to fill ``sessions``,
# and to read a version-1 store that is opened read-only and so cannot be migrated).
SESSIONS_FROM_EVENTS = f"""
SELECT
    e.session_id AS session_id,
    MIN(e.received) AS first_seen,
    MAX(e.received) AS last_seen,
    COUNT(*) AS events,
    (SELECT COUNT(*) FROM decisions d WHERE d.session_id = e.session_id) AS calls,
    COALESCE(
        (SELECT d.level FROM decisions d WHERE d.session_id = e.session_id ORDER BY d.seq DESC LIMIT 1), ''
    ) AS level,
    {_unrank_sql(f"(SELECT MAX({rank_sql('d.action')}) FROM decisions d WHERE d.session_id = e.session_id)")}
        AS worst_action,
    COALESCE(
        (SELECT x.event = 'SessionEnd' FROM events x WHERE x.session_id = e.session_id ORDER BY x.seq DESC LIMIT 1),
        0
    ) AS ended,
    (
        SELECT {cwd_sql("x.payload")} FROM events x
        WHERE x.session_id = e.session_id AND {cwd_sql("x.payload")} IS NOT NULL
        ORDER BY x.seq DESC LIMIT 1
    ) AS cwd
FROM events e
GROUP BY e.session_id
"""

_VERSION_1 = [
    """
    CREATE TABLE events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        event TEXT NOT NULL,
        received REAL NOT NULL,
        payload TEXT NOT NULL
    )
    """,
    "CREATE INDEX events_by_session ON events (session_id, seq)",
    """
    CREATE TABLE decisions (
        seq INTEGER PRIMARY KEY REFERENCES events (seq),
        session_id TEXT NOT NULL,
        call_id TEXT NOT NULL,
        tool TEXT NOT NULL,
        action TEXT NOT NULL CHECK (action IN ('allow', 'confirm', 'deny')),
        level TEXT NOT NULL,
        reasons TEXT NOT NULL,
        message TEXT NOT NULL
    )
    """,
    "CREATE INDEX decisions_by_session ON decisions (session_id, seq)",
    f"PRAGMA application_id = {APPLICATION_ID}",
]

_VERSION_2 = [
    "ALTER TABLE events ADD COLUMN processed INTEGER NOT NULL DEFAULT 1 CHECK (processed IN (0, 1))",
    "CREATE INDEX events_unprocessed ON events (session_id, seq) WHERE processed = 0",
    """
    CREATE TABLE sessions (
        session_id TEXT PRIMARY KEY,
        first_seen REAL NOT NULL,
        last_seen REAL NOT NULL,
        events INTEGER NOT NULL,
        calls INTEGER NOT NULL,
        level TEXT NOT NULL,
        worst_action TEXT NOT NULL,
        ended INTEGER NOT NULL,
        cwd TEXT
    )
    """,
    "CREATE INDEX sessions_by_last_seen ON sessions (last_seen)",
    f"INSERT INTO sessions (session_id, first_seen, last_seen, events, calls, level, worst_action, ended, cwd) "
    f"{SESSIONS_FROM_EVENTS}",
]

# Files a session wrote with private data, by project (the sessions' working folder): a later session of the
# project that sends one is told.
_VERSION_3 = [
    """
    CREATE TABLE private_writes (
        project TEXT NOT NULL,
        path TEXT NOT NULL,
        session_id TEXT NOT NULL,
        call_id TEXT NOT NULL,
        detail TEXT NOT NULL,
        written REAL NOT NULL,
        PRIMARY KEY (project, path)
    )
    """,
]

# MIGRATIONS[n] takes a store from version n to version n + 1.
MIGRATIONS: tuple[list[str], ...] = (_VERSION_1, _VERSION_2, _VERSION_3)
SCHEMA_VERSION = len(MIGRATIONS)
