"""The Claude Code hook engine: ``python -m monitor.hosts._engine``, started by the hook client.

A Unix-socket server holding every Claude Code session's state (see :mod:`monitor.hosts._engine_sessions`),
so that a hook answers in milliseconds whatever the length of the session. One engine runs per socket: it
takes an exclusive lock on ``engine-<key>.lock`` in the state directory before it binds, and an engine that
finds the lock taken exits at once, quietly. It writes its pid to ``engine-<key>.pid``, logs to its stderr
(``engine.log`` in the state directory, as the client starts it), and exits after ``--idle-exit`` seconds
without events, or when asked (``trifecta hook claude-code --stop``).

A request is one line of JSON (``{"v": 1, "op": "event", "received": <time>}`` or ``{"op": "stop"}``) followed
by the payload, up to the end of the client's half of the connection; the reply is one JSON object
(``{"action": …, "message": …, "committed": …}``). The engine never dies on what a request holds: a failure
is logged and answered ``confirm`` (the client says ``ask``).

Imports are lazy: the lock is taken before the engine itself is loaded, so that an engine started in vain
costs only a Python start.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import logging
import os
import queue
import socket
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from monitor.hosts._engine_sessions import HookSessions
    from monitor.store import HookStore

logger = logging.getLogger("monitor.hook")

WORKERS = 8
_ACCEPT_POLL = 0.5
_MAX_LOG_BYTES = 10 * 1024 * 1024
_MAX_REQUEST = 64 * 1024 * 1024 + 4096


def parse_engine_args(argv: list[str] | None) -> argparse.Namespace:
    """The engine's options (the client passes them)."""
    parser = argparse.ArgumentParser(prog="python -m monitor.hosts._engine")
    parser.add_argument("--state-dir", type=Path, required=True)
    parser.add_argument("--socket", type=Path, required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--rules", type=Path, action="append", default=[])
    parser.add_argument("--no-builtin-rules", action="store_true")
    parser.add_argument("--posture", choices=("balanced", "strict"), default="balanced")
    parser.add_argument("--policy", choices=("default", "reviewed-only"), default="default")
    parser.add_argument("--scope", type=Path, default=None)
    parser.add_argument("--idle-exit", type=float, default=900.0)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run the engine until it is idle or stopped; 0 also when another engine holds the lock."""
    args = parse_engine_args(argv)
    os.umask(0o077)
    state_dir: Path = args.state_dir
    lock_fd = os.open(state_dir / f"engine-{args.key}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0  # another engine serves this socket
    _rotate_log(state_dir / "engine.log")
    logging.basicConfig(
        level=logging.INFO, format=f"%(asctime)s engine[{os.getpid()}] %(levelname)s %(message)s", stream=sys.stderr
    )
    logging.captureWarnings(True)
    pid_file = state_dir / f"engine-{args.key}.pid"
    pid_file.write_text(f"{os.getpid()}\n")
    listener = _bind(args.socket)
    logger.info("listening on %s", args.socket)
    try:
        Engine(args, listener).serve()
    finally:
        _remove(args.socket)
        _remove(pid_file)
        logger.info("stopped")
    return 0


def _bind(path: Path) -> socket.socket:
    """Bind the socket (the lock is held: a file left at ``path`` is a dead engine's)."""
    _remove(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(os.fspath(path))
    os.chmod(path, 0o600)
    listener.listen(128)
    return listener


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()


def _rotate_log(path: Path) -> None:
    try:
        if path.stat().st_size > _MAX_LOG_BYTES:
            os.replace(path, path.with_name(path.name + ".1"))
    except OSError:
        pass


class Engine:
    """The server: accepts connections on its thread and answers them on a pool of workers, each with its own
    connection to the store."""

    def __init__(self, args: argparse.Namespace, listener: socket.socket) -> None:
        self.args = args
        self.listener = listener
        self.idle_exit: float = args.idle_exit
        self.last_activity = time.monotonic()
        self.stopping = threading.Event()
        self.jobs: queue.Queue[socket.socket | None] = queue.Queue()
        self.busy = 0
        self.busy_lock = threading.Lock()
        self.sessions: HookSessions | None = None
        self.load_error: str | None = None

    def serve(self) -> None:
        """Load the engine, then accept until idle or stopped; answer what was accepted before returning."""
        self._load()
        workers = [threading.Thread(target=self._work, name=f"hook-{i}", daemon=True) for i in range(WORKERS)]
        for worker in workers:
            worker.start()
        self.listener.settimeout(_ACCEPT_POLL)
        while not self.stopping.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                if self._idle():
                    logger.info("idle for %.0f s: exiting", self.idle_exit)
                    break
                continue
            except OSError:
                logger.exception("accept failed")
                time.sleep(_ACCEPT_POLL)
                continue
            self._submit(conn)
        _remove(self.args.socket)  # new clients start a new engine from now on; take what is already queued
        self.listener.setblocking(False)
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                break
            self._submit(conn)
        self.listener.close()
        for _ in workers:
            self.jobs.put(None)
        for worker in workers:
            worker.join()

    def _load(self) -> None:
        try:
            from monitor.classify import load_rules
            from monitor.decide import Policy, PolicyMode, load_scope
            from monitor.hosts._engine_sessions import HookSessions

            rules = load_rules(self.args.rules, builtin=not self.args.no_builtin_rules)
            scope = load_scope(self.args.scope) if self.args.scope is not None else None
            policy = Policy(mode=PolicyMode(self.args.policy), scope=scope)
            from monitor.session import MonitorConfig

            self.sessions = HookSessions.create(MonitorConfig(posture=self.args.posture, policy=policy, rules=rules))
        except Exception as exc:
            logger.exception("the engine could not load its rules")
            self.load_error = " ".join(str(exc).split())[:300]

    def _idle(self) -> bool:
        with self.busy_lock:
            busy = self.busy or not self.jobs.empty()
        return not busy and time.monotonic() - self.last_activity > self.idle_exit

    def _submit(self, conn: socket.socket) -> None:
        with self.busy_lock:
            self.busy += 1
            self.last_activity = time.monotonic()
        self.jobs.put(conn)

    def _work(self) -> None:
        store: HookStore | None = None
        while True:
            conn = self.jobs.get()
            if conn is None:
                break
            try:
                store = self._serve_one(conn, store)
            except Exception:
                logger.exception("a request failed")
            finally:
                conn.close()
                with self.busy_lock:
                    self.busy -= 1
                    self.last_activity = time.monotonic()
        if store is not None:
            store.close()

    def _serve_one(self, conn: socket.socket, store: HookStore | None) -> HookStore | None:
        """Read one request and answer it; return the worker's store connection (opened on first use)."""
        import orjson

        from monitor.hosts._engine_sessions import Answer, looks_like_pre_tool_use, payload_fields

        conn.settimeout(30.0)
        header, payload = _read_request(conn)
        op = header.get("op") if isinstance(header, dict) else None
        if op == "stop":
            self.stopping.set()
            conn.sendall(orjson.dumps({"action": None, "message": "stopping", "committed": True}))
            return store
        received = header.get("received") if isinstance(header, dict) else None
        if not isinstance(received, (int, float)):
            received = time.time()
        _, event = payload_fields(payload)
        asks = looks_like_pre_tool_use(payload, event)
        try:
            if self.sessions is None or self.load_error is not None:
                reason = f"trifecta-monitor could not load its rules: {self.load_error}"
                answer = Answer("confirm" if asks else None, reason, committed=False)
            else:
                if store is None:
                    store = self._open_store()
                take_spool(store, os.fspath(self.args.state_dir))
                answer = self.sessions.handle(store, payload, float(received))
        except Exception as exc:
            logger.exception("an event could not be processed")
            reason = " ".join(f"trifecta-monitor could not check this call: {type(exc).__name__}: {exc}".split())
            answer = Answer("confirm" if asks else None, reason, committed=False)
        conn.sendall(answer.to_json())
        return store

    def _open_store(self) -> HookStore:
        from monitor.store import HookStore, default_store_path

        return HookStore(default_store_path(self.args.state_dir))


def take_spool(store: HookStore, state_dir: str) -> int:
    """Move the events a hook kept in the spool folder (the store was locked past its timeout) into the store,
    unprocessed, oldest first, so that the next event of their session processes them; return how many. An
    event the store cannot take yet stays where it is."""
    from monitor.hosts._engine_sessions import payload_fields
    from monitor.hosts._hook import spool_dir

    folder = spool_dir(state_dir)
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".event"))
    except FileNotFoundError:
        return 0
    taken = 0
    for name in names:
        path = os.path.join(folder, name)
        try:
            with open(path, "rb") as spooled:
                payload = spooled.read()
            received = float(name.split("-", 1)[0])
        except (OSError, ValueError):
            logger.warning("a spooled event could not be read, set aside as %s.unreadable", path)
            with contextlib.suppress(OSError):
                os.replace(path, f"{path}.unreadable")  # once: not warned about again at every event
            continue
        sid, event = payload_fields(payload)
        if sid is not None:
            store.append(sid, event, payload.decode("utf-8", "replace"), received=received, processed=False)
        else:
            logger.warning("a spooled event names no session and was dropped: %s", path)
        os.unlink(path)
        taken += 1
    if taken:
        logger.info("%d events kept by hooks while the store was locked are now in it", taken)
    return taken


def _read_request(conn: socket.socket) -> tuple[object, bytes]:
    """The request's header (a JSON object, else None) and its payload."""
    import orjson

    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = conn.recv(1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if size > _MAX_REQUEST:
            raise ValueError(f"a request over {_MAX_REQUEST} bytes")
    data = b"".join(chunks)
    head, _, payload = data.partition(b"\n")
    try:
        header = orjson.loads(head)
    except orjson.JSONDecodeError:
        header = None
    return header, payload


if __name__ == "__main__":
    sys.exit(main())
