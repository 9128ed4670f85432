"""The hook store: one SQLite file of hook events, the decisions taken on them and a summary per session."""

from __future__ import annotations

import json
import math
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from monitor.errors import InputError
from monitor.store._schema import (
    ACTIONS,
    APPLICATION_ID,
    MIGRATIONS,
    SCHEMA_VERSION,
    SESSIONS_FROM_EVENTS,
    cwd_sql,
    rank_sql,
)

_T = TypeVar("_T")

# Rows read per query by the iterators: the store's lock is held for one page at a time, never while a
# caller works on a row.
_MAX_DETAIL = 200
_PAGE = 128
# Waiting for the write lock: the first and the longest pause between two tries, in seconds.
_FIRST_RETRY = 0.0002
_LAST_RETRY = 0.002
_SESSION_END_EVENT = "SessionEnd"
_SESSION_COLUMNS = "session_id, first_seen, last_seen, events, calls, level, worst_action, ended, cwd"
_DECISION_COLUMNS = "seq, session_id, call_id, tool, action, level, reasons, message"

_INSERT_EVENT = "INSERT INTO events (session_id, event, received, payload, processed) VALUES (?, ?, ?, ?, ?)"
_INSERT_DECISION = (
    f"INSERT INTO decisions ({_DECISION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (seq) DO NOTHING"
)
_WORSE_ACTION = f"CASE WHEN {rank_sql(':action')} > {rank_sql('worst_action')} THEN :action ELSE worst_action END"
_UPSERT_SESSION = f"""
INSERT INTO sessions ({_SESSION_COLUMNS})
VALUES (:session_id, :received, :received, 1, :calls, COALESCE(:level, ''), COALESCE(:action, ''), :ended,
        {cwd_sql(":payload")})
ON CONFLICT (session_id) DO UPDATE SET
    first_seen = MIN(first_seen, excluded.first_seen),
    last_seen = MAX(last_seen, excluded.last_seen),
    events = events + 1,
    calls = calls + excluded.calls,
    level = COALESCE(:level, level),
    worst_action = {_WORSE_ACTION},
    ended = excluded.ended,
    cwd = COALESCE(excluded.cwd, cwd)
"""
_ADD_CALL = (
    f"UPDATE sessions SET calls = calls + 1, level = :level, worst_action = {_WORSE_ACTION} WHERE session_id = :sid"
)


@dataclass(frozen=True)
class StoredEvent:
    """One hook event as stored: ``seq`` (its place in the store, unique and increasing), the session, the
    hook event name, when it was received (unix time), the payload text exactly as received, and whether
    the engine has processed it."""

    seq: int
    session_id: str
    event: str
    received: float
    payload: str
    processed: bool


@dataclass(frozen=True)
class PrivateWrite:
    """A file a session wrote private data to: the later sessions of its project that send it are told."""

    path: str
    session_id: str
    call_id: str
    detail: str
    """What private data it holds (the first characters of the matched text)."""
    written: float


@dataclass(frozen=True)
class StoredDecision:
    """The decision taken on one tool call: the ``seq`` of the event that asked for it (0 when handed to
    :meth:`HookStore.append`, which gives the new event's), the session, the call id and tool, the action
    (``allow``, ``confirm`` or ``deny``), the session's level after it, its reason codes and the one line a
    person reads."""

    seq: int
    session_id: str
    call_id: str
    tool: str
    action: str
    level: str
    reasons: tuple[str, ...]
    message: str


@dataclass(frozen=True)
class StoredSession:
    """A session's summary: when it was first and last seen (unix time), how many events and calls it has,
    its level (``''`` until one is given), its worst action (``''`` before its first decision), whether its
    latest event ended it, and its working directory (the latest ``cwd`` a payload gave)."""

    session_id: str
    first_seen: float
    last_seen: float
    events: int
    calls: int
    level: str
    worst_action: str
    ended: bool
    cwd: str | None


class HookStore:
    """The SQLite store of hook events and decisions (see :mod:`monitor.store` for its format).

    Opening creates the parent folder (mode 0700) and the file (mode 0600) when they are missing, and
    brings the file to :data:`SCHEMA_VERSION` in one transaction. With ``read_only`` nothing is created
    or changed: the file is opened through a ``mode=ro`` URI, may be written by others at the same time,
    and an older schema is read as it is.

    Every write is one ``BEGIN IMMEDIATE`` transaction: writers of several processes take turns on the file,
    waiting up to ``busy_timeout`` seconds. Commits are synchronous (``synchronous=FULL``): a commit that
    returned survives a killed process, a crash of the system and a power loss. ``durable=False`` uses
    ``synchronous=NORMAL``, which still survives a killed process but may lose the latest commits to a
    power loss. One store may be used by several threads.

    Problems with the file (missing, not a store, corrupt, of a newer schema, locked beyond the timeout,
    a failing disk) raise :class:`~monitor.errors.InputError` naming it; wrong arguments raise
    :class:`ValueError`; a closed store raises :class:`ValueError`.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout: float = 30.0,
        read_only: bool = False,
        durable: bool = True,
    ) -> None:
        self.path = Path(path)
        self.read_only = read_only
        self._busy_timeout = busy_timeout
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._conn = self._open(durable)

    # -- opening ----------------------------------------------------------------------------------------

    def _open(self, durable: bool) -> sqlite3.Connection:
        if self.read_only:
            if not self.path.is_file():
                raise InputError(str(self.path), "no such store file" if not self.path.exists() else "not a file")
            target = self.path.resolve().as_uri() + "?mode=ro"
        else:
            _create_file(self.path)
            target = str(self.path)
        with self._translated():
            conn = sqlite3.connect(
                target, uri=self.read_only, timeout=self._busy_timeout, check_same_thread=False, isolation_level=None
            )
        # Text that is not UTF-8 (written by another program) is read with U+FFFD in place of its bad bytes.
        conn.text_factory = _decode_text
        try:
            with self._translated():
                conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout * 1000)}")
                _check_version(self.path, conn)  # before anything is written: a file we refuse stays as it was
                if self.read_only:
                    conn.execute("PRAGMA query_only = ON")
                else:
                    # A new file turns to WAL once; the switch needs the file alone, and SQLite does not wait for
                    # that (a busy error at once when several processes open a new store together).
                    _execute_when_free(conn, "PRAGMA journal_mode = WAL", self._busy_timeout)
                    conn.execute(f"PRAGMA synchronous = {'FULL' if durable else 'NORMAL'}")
                    conn.execute("PRAGMA foreign_keys = ON")
                    if _user_version(conn) < SCHEMA_VERSION:
                        self._transact(conn, partial(_migrate, self.path))
        except BaseException:
            conn.close()
            raise
        return conn

    # -- plumbing ---------------------------------------------------------------------------------------

    @contextmanager
    def _translated(self) -> Iterator[None]:
        """Turn a ``sqlite3`` error into an :class:`InputError` naming the file."""
        try:
            yield
        except sqlite3.Error as exc:
            raise InputError(str(self.path), _describe(exc, self._busy_timeout)) from exc

    def _begin(self, conn: sqlite3.Connection) -> None:
        """``BEGIN IMMEDIATE``, trying again every millisecond or two while another connection writes, until
        ``busy_timeout`` has passed. SQLite's own waiting sleeps up to 100 ms between tries, and a waiter
        can miss many turns: with four busy writers one write waited over a second."""
        _execute_when_free(conn, "BEGIN IMMEDIATE", self._busy_timeout)

    def _transact(self, conn: sqlite3.Connection, work: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run ``work`` in one ``BEGIN IMMEDIATE`` transaction: committed when it returns, else rolled back."""
        self._begin(conn)
        try:
            result = work(conn)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                # When even that fails, the error that got us here is the one to report.
                with suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
            raise
        return result

    def _run(self, work: Callable[[sqlite3.Connection], _T], *, write: bool = False) -> _T:
        with self._lock:
            conn = self._conn
            if conn is None:
                raise ValueError(f"{self.path}: the hook store is closed")
            if write and self.read_only:
                raise InputError(str(self.path), "the hook store is open read-only")
            with self._translated():
                try:
                    return self._transact(conn, work) if write else work(conn)
                except UnicodeEncodeError as exc:
                    raise ValueError(f"{self.path}: text that is not valid Unicode cannot be stored: {exc}") from exc

    def _version(self, conn: sqlite3.Connection) -> int:
        """The schema version of the file now: always the current one when writable; read each time when
        read-only (a writer may create or migrate the file while it is open)."""
        if not self.read_only:
            return SCHEMA_VERSION
        return _check_version(self.path, conn)

    # -- writing ----------------------------------------------------------------------------------------

    def append(
        self,
        session_id: str,
        event: str,
        payload: str,
        *,
        received: float,
        processed: bool = True,
        decision: StoredDecision | None = None,
        level: str | None = None,
        ended: bool = False,
    ) -> int:
        """Store one hook event, in one transaction, and return its ``seq``.

        The transaction inserts the event (``payload`` is kept exactly as given), the ``decision`` when
        given (stored under the new event's seq and session, whatever its own ``seq`` and ``session_id``
        say), and updates the session's summary: one event more, one call more with a decision, the
        ``level`` given (else the decision's, else unchanged), the worse of its worst action and the
        decision's, ``ended`` when ``ended`` is true or the event is ``SessionEnd`` (any other event clears
        it), the payload's ``cwd`` when it is a JSON object naming one, first and last seen.
        ``processed=False`` marks an event the engine has yet to process (see :meth:`mark_processed`).
        """
        _check_received(received)
        if decision is not None:
            _check_decision(decision)
        new_level = level if level is not None else (decision.level if decision is not None else None)

        def write(conn: sqlite3.Connection) -> int:
            cursor = conn.execute(_INSERT_EVENT, (session_id, event, received, payload, int(processed)))
            seq = cursor.lastrowid
            assert seq is not None
            if decision is not None:
                conn.execute(_INSERT_DECISION, _decision_row(decision, seq, session_id))
            conn.execute(
                _UPSERT_SESSION,
                {
                    "session_id": session_id,
                    "received": received,
                    "calls": int(decision is not None),
                    "level": new_level,
                    "action": decision.action if decision is not None else None,
                    "ended": int(ended or event == _SESSION_END_EVENT),
                    "payload": payload,
                },
            )
            return seq

        return self._run(write, write=True)

    def mark_processed(
        self, seqs: Iterable[int], decisions: Iterable[StoredDecision] = (), level: str | None = None
    ) -> None:
        """Mark events processed, in one transaction, with the decisions taken on them.

        For events stored with ``processed=False`` (the hook client stores those when the engine cannot be
        reached) once the engine has processed them. Each decision is stored under its ``seq`` (the event
        it was taken on, which is marked processed too) and that event's session, and counts as one call of
        it; a decision for an event that has one already is ignored, so marking twice changes nothing.
        ``level``, when given, becomes the level of every session these events belong to (else each
        decision's level does). A seq the store does not hold is a :class:`ValueError`, and nothing is
        changed.
        """
        seq_list = [int(seq) for seq in seqs]
        decision_list = list(decisions)
        for decision in decision_list:
            _check_decision(decision)

        def write(conn: sqlite3.Connection) -> None:
            owners: dict[int, str] = {}
            for seq in [*seq_list, *(d.seq for d in decision_list)]:
                row = conn.execute("SELECT session_id FROM events WHERE seq = ?", (seq,)).fetchone()
                if row is None:
                    raise ValueError(f"{self.path}: no event of seq {seq} to mark processed")
                owners[seq] = row[0]
                conn.execute("UPDATE events SET processed = 1 WHERE seq = ? AND processed = 0", (seq,))
            for decision in decision_list:
                sid = owners[decision.seq]
                if conn.execute(_INSERT_DECISION, _decision_row(decision, decision.seq, sid)).rowcount:
                    conn.execute(_ADD_CALL, {"level": decision.level, "action": decision.action, "sid": sid})
            if level is not None:
                for sid in dict.fromkeys(owners.values()):
                    conn.execute("UPDATE sessions SET level = ? WHERE session_id = ?", (level, sid))

        self._run(write, write=True)

    # -- reading ----------------------------------------------------------------------------------------

    @property
    def schema_version(self) -> int:
        """The schema version of the file (``PRAGMA user_version``): :data:`SCHEMA_VERSION` once opened
        writable; a read-only store may be older, and 0 when the file holds nothing yet."""
        return self._run(lambda conn: self._version(conn) if self.read_only else _user_version(conn))

    def events(self, session_id: str | None = None, *, after_seq: int = 0) -> Iterator[StoredEvent]:
        """Yield the stored events (of one session, when given) with a seq above ``after_seq``, in seq order.

        Rows are read a page at a time: events stored while the iteration runs may show up in it."""
        where = "seq > ?" + (" AND session_id = ?" if session_id is not None else "")
        extra: tuple[str, ...] = (session_id,) if session_id is not None else ()

        def page(last: int, conn: sqlite3.Connection) -> list[Any]:
            version = self._version(conn)
            if version == 0:
                return []
            processed = "processed" if version >= 2 else "1"
            sql = (
                f"SELECT seq, session_id, event, received, payload, {processed} FROM events "
                f"WHERE {where} ORDER BY seq LIMIT {_PAGE}"
            )
            return conn.execute(sql, (last, *extra)).fetchall()

        for row in self._pages(page, after_seq):
            yield StoredEvent(row[0], row[1], row[2], row[3], row[4], bool(row[5]))

    def record_private_write(
        self, project: str, path: str, session_id: str, call_id: str, detail: str, *, written: float
    ) -> None:
        """Remember that a session wrote private data to ``path`` (absolute) in ``project`` (the sessions'
        working folder); a later write of the same file replaces the record."""

        def write(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT OR REPLACE INTO private_writes (project, path, session_id, call_id, detail, written) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (project, path, session_id, call_id, detail[:_MAX_DETAIL], written),
            )

        self._run(write, write=True)

    def private_writes(self, project: str) -> list[PrivateWrite]:
        """The files of ``project`` that a session wrote private data to, newest first (at most 1,000)."""

        def read(conn: sqlite3.Connection) -> list[Any]:
            if self._version(conn) < 3:
                return []
            sql = (
                "SELECT path, session_id, call_id, detail, written FROM private_writes WHERE project = ? "
                "ORDER BY written DESC LIMIT 1000"
            )
            return conn.execute(sql, (project,)).fetchall()

        return [PrivateWrite(*row) for row in self._run(read)]

    def unprocessed(self, session_id: str) -> list[StoredEvent]:
        """Return the events of ``session_id`` stored with ``processed=False`` and not marked processed since,
        in seq order."""

        def read(conn: sqlite3.Connection) -> list[Any]:
            if self._version(conn) < 2:
                return []
            sql = (
                "SELECT seq, session_id, event, received, payload FROM events "
                "WHERE session_id = ? AND processed = 0 ORDER BY seq"
            )
            return conn.execute(sql, (session_id,)).fetchall()

        return [StoredEvent(r[0], r[1], r[2], r[3], r[4], False) for r in self._run(read)]

    def decisions(self, session_id: str | None = None) -> Iterator[StoredDecision]:
        """Yield the stored decisions (of one session, when given) in seq order."""
        where = "seq > ?" + (" AND session_id = ?" if session_id is not None else "")
        extra: tuple[str, ...] = (session_id,) if session_id is not None else ()

        def page(last: int, conn: sqlite3.Connection) -> list[Any]:
            if self._version(conn) == 0:
                return []
            sql = f"SELECT {_DECISION_COLUMNS} FROM decisions WHERE {where} ORDER BY seq LIMIT {_PAGE}"
            return conn.execute(sql, (last, *extra)).fetchall()

        for row in self._pages(page, 0):
            seq, sid, call_id, tool, action, level, reasons, message = row
            yield StoredDecision(
                seq, sid, call_id, tool, action, level, _read_reasons(self.path, seq, reasons), message
            )

    def sessions(self) -> list[StoredSession]:
        """Return every session's summary, the most recently seen first."""
        return [_session(row) for row in self._run(lambda conn: self._session_rows(conn, None))]

    def session(self, session_id: str) -> StoredSession | None:
        """Return one session's summary, or None when the store holds no event of it."""
        rows = self._run(lambda conn: self._session_rows(conn, session_id))
        return _session(rows[0]) if rows else None

    def session_ids(self) -> list[str]:
        """Return the id of every stored session, the most recently seen first."""
        return [session.session_id for session in self.sessions()]

    def _session_rows(self, conn: sqlite3.Connection, session_id: str | None) -> list[Any]:
        version = self._version(conn)
        if version == 0:
            return []
        table = "sessions" if version >= 2 else f"({SESSIONS_FROM_EVENTS})"
        where = "" if session_id is None else "WHERE session_id = ?"
        sql = f"SELECT {_SESSION_COLUMNS} FROM {table} {where} ORDER BY last_seen DESC, session_id"
        return conn.execute(sql, () if session_id is None else (session_id,)).fetchall()

    def _pages(self, page: Callable[[int, sqlite3.Connection], list[Any]], after: int) -> Iterator[Any]:
        """Yield the rows ``page(last seq, conn)`` gives, a page at a time, each read under the lock."""
        last = after
        while True:
            rows = self._run(partial(page, last))
            yield from rows
            if len(rows) < _PAGE:
                return
            last = rows[-1][0]

    # -- closing ----------------------------------------------------------------------------------------

    def close(self) -> None:
        """Close the store (again does nothing). Every committed write is in the file already."""
        with self._lock:
            conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    def __enter__(self) -> HookStore:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()


def _create_file(path: Path) -> None:
    """Create the store's file (mode 0600) and its folder (mode 0700) unless the file exists."""
    try:
        if not path.parent.exists():
            os.makedirs(path.parent, mode=0o700, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    except OSError as exc:
        raise InputError(str(path), f"cannot create the store: {exc.strerror or exc}") from exc
    os.close(fd)


def _check_version(path: Path, conn: sqlite3.Connection) -> int:
    """The file's schema version, refused when it is newer than this one or the file is not a hook store."""
    # One statement, so one snapshot: read apart, another process's migration could commit in between and
    # show its tables with the version read before it (a new store taken for another program's file).
    row = conn.execute(
        "SELECT (SELECT user_version FROM pragma_user_version), (SELECT application_id FROM "
        "pragma_application_id), (SELECT count(*) FROM sqlite_master)"
    ).fetchone()
    version, application, tables = int(row[0]), int(row[1]), int(row[2])
    if application not in (0, APPLICATION_ID):
        raise InputError(
            str(path), f"not a trifecta-monitor hook store (a SQLite file of application id {application:#x})"
        )
    if version > SCHEMA_VERSION:
        raise InputError(
            str(path),
            f"a hook store of schema {version}, this version reads up to {SCHEMA_VERSION}: "
            "read it with a newer trifecta-monitor",
        )
    if version == 0 and tables:
        raise InputError(str(path), "not a trifecta-monitor hook store (a SQLite file of other tables)")
    return version


def _migrate(path: Path, conn: sqlite3.Connection) -> None:
    version = _check_version(path, conn)  # again, under the write lock: another process may have migrated
    for statements in MIGRATIONS[version:]:
        for statement in statements:
            conn.execute(statement)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def _execute_when_free(conn: sqlite3.Connection, statement: str, busy_timeout: float) -> None:
    """Run ``statement``, trying again while the file is busy, until ``busy_timeout`` has passed."""
    deadline = time.monotonic() + busy_timeout
    delay = _FIRST_RETRY
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        while True:
            try:
                conn.execute(statement)
                return
            except sqlite3.OperationalError as exc:
                if exc.sqlite_errorcode & 0xFF != sqlite3.SQLITE_BUSY or time.monotonic() >= deadline:
                    raise
            time.sleep(delay)
            delay = min(delay * 2, _LAST_RETRY)
    finally:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")


def _read_reasons(path: Path, seq: int, text: str) -> tuple[str, ...]:
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        value = None
    if not isinstance(value, list):
        raise InputError(str(path), f"decision of seq {seq}: its reasons are not a JSON list")
    return tuple(str(reason) for reason in value)


def _decode_text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _user_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def _describe(exc: sqlite3.Error, busy_timeout: float) -> str:
    text = str(exc)
    if "locked" in text or "busy" in text:
        return f"the store is locked: another process held it for more than {busy_timeout:g} s ({text})"
    if "not a database" in text:
        return f"not a SQLite database, or a damaged one ({text})"
    if "malformed" in text or "corrupt" in text:
        return f"the store is damaged ({text}); `sqlite3 FILE .recover` may save what it holds"
    if "unable to open" in text:
        return f"cannot open the store ({text})"
    return f"cannot use the store ({text})"


def _check_received(received: float) -> None:
    if not isinstance(received, int | float) or not math.isfinite(received):
        raise ValueError(f"received must be a finite unix time, not {received!r}")


def _check_decision(decision: StoredDecision) -> None:
    if decision.action not in ACTIONS:
        raise ValueError(f"a decision's action is one of {sorted(ACTIONS)}, not {decision.action!r}")


def _decision_row(decision: StoredDecision, seq: int, session_id: str) -> tuple[Any, ...]:
    reasons = json.dumps([str(reason) for reason in decision.reasons], ensure_ascii=False)
    return (
        seq,
        session_id,
        decision.call_id,
        decision.tool,
        decision.action,
        decision.level,
        reasons,
        decision.message,
    )


def _session(row: Any) -> StoredSession:
    return StoredSession(row[0], row[1], row[2], row[3], row[4], row[5], row[6], bool(row[7]), row[8])
