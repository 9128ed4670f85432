"""The Claude Code hook client: ``trifecta hook claude-code`` (standard library and :mod:`monitor.store` only).

Claude Code runs the hook once per event and waits for it, so the client does as little as it can: it reads
one payload from stdin, hands it to the hook engine (:mod:`monitor.hosts._engine`, a long-lived process
holding every session's state) over a Unix domain socket, and prints the engine's answer in Claude Code's
format. When no engine listens, it starts one (detached, its stderr to ``engine.log`` in the state
directory) and retries until its deadline. One engine runs per state directory and set of options.

The client never fails open and never crashes: if the engine cannot be reached or answers nothing usable,
the event is still appended to the store, marked unprocessed (the engine processes it on its next event of
that session), and a ``PreToolUse`` is answered ``ask`` with the reason; any other event gets ``{}``. The
exit status is always 0, and nothing but the answer is written.
"""

from __future__ import annotations

# ``_socket`` and ``_hook_json`` rather than ``socket`` and ``json``: what those add (``enum``, ``re``, ``selectors``)
# the client never uses, and importing them is a third of its start (tests/hosts/test_hook_imports.py)
import _socket
import os
import sys
import time

from monitor.errors import TrifectaError
from monitor.hosts._hook_json import dumps, loads
from monitor.hosts._hook_reply import with_last_reply
from monitor.hosts._hook_trust import EngineUnavailable, check_engine_place, check_peer, check_private_dir

TYPE_CHECKING = False  # ``typing`` is not imported at run time: the client starts without it
if TYPE_CHECKING:
    from typing import Any

PROTOCOL = 1
DEFAULT_TIMEOUT = 10.0
DEFAULT_IDLE_EXIT = 900.0
MAX_PAYLOAD = 64 * 1024 * 1024
MAX_ANSWER = 1024 * 1024
STATE_DIR_ENV = "TRIFECTA_STATE_DIR"
LOG_NAME = "engine.log"
SPOOL_NAME = "spool"
_STORE_GRACE = 2.0  # past the engine's timeout, what storing the event ourselves may take
_MIN_STORE_WAIT = 0.05
_SUN_PATH_MAX = 107  # sockaddr_un.sun_path holds 108 bytes, the last one a NUL
_RESPAWN_EVERY = 0.5
_POSTURES = ("balanced", "strict")
_ON_ALLOW = ("pass", "allow")
_POLICIES = ("default", "reviewed-only")
_VALUED = ("--state-dir", "--rules", "--posture", "--policy", "--scope", "--on-allow", "--timeout", "--idle-exit")

USAGE = """\
usage: trifecta hook claude-code [options] < payload.json

Answer one Claude Code hook event (read from stdin) on stdout.

options:
  --state-dir DIR        where sessions, the engine's socket and its log live
                         (default: $TRIFECTA_STATE_DIR or the user's state directory)
  --rules DIR            a folder of rule packs (repeatable)
  --no-builtin-rules     leave out the built-in rule packs
  --posture P            balanced (default) or strict
  --policy P             default, or reviewed-only: unreviewed tools and writes are asked about
  --scope FILE           with --policy reviewed-only: the servers, tools and destinations allowed (YAML/JSON)
  --on-allow A           pass (default): an allowed call gets {} and Claude Code's own permission
                         rules decide; allow: answer "allow", which skips Claude Code's prompt
  --timeout SECONDS      how long to wait for the engine (default 10)
  --idle-exit SECONDS    an engine started now exits after this long without events (default 900)
  --stop                 stop the engine of these options, if one runs, and exit
  -h, --help             show this message
"""


class UsageError(TrifectaError):
    """A command-line option the client cannot use (answered, never raised out of :func:`run_hook`)."""


class HookOptions:
    """The client's options; the engine is shared by every client with the same state directory, rules,
    built-in rules and posture. (Plain attributes: the client imports neither ``dataclasses`` nor ``pathlib``,
    to start fast.)"""

    def __init__(self) -> None:
        self.state_dir: str | None = None
        self.rules: list[str] = []
        self.builtin_rules = True
        self.posture = "balanced"
        self.policy = "default"
        self.scope: str | None = None
        self.on_allow = "pass"
        self.timeout = DEFAULT_TIMEOUT
        self.idle_exit = DEFAULT_IDLE_EXIT
        self.stop = False
        self.help = False

    def resolved_state_dir(self) -> str:
        """The state directory: the option, else ``$TRIFECTA_STATE_DIR``, else the store's default."""
        given = self.state_dir or os.environ.get(STATE_DIR_ENV)
        if not given:
            from monitor.store import default_state_dir

            given = os.fspath(default_state_dir())
        return _absolute(given)

    def rule_dirs(self) -> list[str]:
        """The rule folders, as absolute paths."""
        return [_absolute(p) for p in self.rules]

    def engine_key(self, state_dir: str) -> str:
        """A short key naming the engine of these options in this state directory."""
        import zlib

        named = [state_dir, sorted(self.rule_dirs()), self.builtin_rules, self.posture]
        if self.policy != "default" or self.scope is not None:
            named += [self.policy, self.scope and _absolute(self.scope)]
        text = dumps(named).encode()
        return f"{zlib.crc32(text):08x}{zlib.adler32(text):08x}"


class EnginePaths:
    """Where one engine keeps its socket, lock, pid and log."""

    __slots__ = ("key", "lock", "log", "pid", "socket", "socket_dir_file", "state_dir")

    def __init__(self, state_dir: str, key: str) -> None:
        self.state_dir = state_dir
        self.key = key
        self.socket = os.path.join(state_dir, f"engine-{key}.sock")
        # Where the socket lives when its path in the state directory is too long: a private folder made for it
        # under the system's temporary directory (its name, chosen at random, is kept in the state directory).
        self.socket_dir_file = os.path.join(state_dir, f"engine-{key}.sockdir")
        if len(os.fsencode(self.socket)) > _SUN_PATH_MAX:
            self.socket = ""
            try:
                with open(self.socket_dir_file, encoding="utf-8") as kept:
                    self.socket = os.path.join(kept.read(4096).strip(), f"{key}.sock")
            except (OSError, UnicodeDecodeError):
                pass  # no folder made yet: the client makes one when it starts the engine
        self.lock = os.path.join(state_dir, f"engine-{key}.lock")
        self.pid = os.path.join(state_dir, f"engine-{key}.pid")
        self.log = os.path.join(state_dir, LOG_NAME)

    def make_socket_dir(self) -> None:
        """Make the private folder the socket lives in when its path in the state directory is too long, and
        keep its name in the state directory (``mkdtemp``: a new name, owner-only, that no one made first)."""
        import tempfile

        folder = tempfile.mkdtemp(prefix=f"trifecta-{os.getuid()}-")
        temporary = f"{self.socket_dir_file}.{os.getpid()}"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, folder.encode())
        finally:
            os.close(fd)
        os.replace(temporary, self.socket_dir_file)
        self.socket = os.path.join(folder, f"{self.key}.sock")


def _absolute(path: str) -> str:
    return os.path.abspath(os.path.expanduser(path))


def parse_options(argv: list[str]) -> HookOptions:
    """Read the client's options; raise :class:`UsageError` naming a bad one."""
    options = HookOptions()
    args = list(argv)
    while args:
        arg = args.pop(0)
        name, has_value, inline = arg.partition("=")
        if name in ("-h", "--help"):
            options.help = True
        elif name == "--no-builtin-rules":
            options.builtin_rules = False
        elif name == "--stop":
            options.stop = True
        elif name in _VALUED:
            if has_value:
                value = inline
            elif args:
                value = args.pop(0)
            else:
                raise UsageError(f"{name} needs a value")
            _set_option(options, name, value)
        else:
            raise UsageError(f"unknown option {arg!r}")
    if options.scope is not None and options.policy != "reviewed-only":
        raise UsageError("--scope applies with --policy reviewed-only")
    return options


def _set_option(options: HookOptions, name: str, value: str) -> None:
    if name == "--state-dir":
        options.state_dir = value
    elif name == "--rules":
        options.rules.append(value)
    elif name == "--posture":
        if value not in _POSTURES:
            raise UsageError(f"--posture must be one of {', '.join(_POSTURES)}, not {value!r}")
        options.posture = value
    elif name == "--policy":
        if value not in _POLICIES:
            raise UsageError(f"--policy must be one of {', '.join(_POLICIES)}, not {value!r}")
        options.policy = value
    elif name == "--scope":
        options.scope = value
    elif name == "--on-allow":
        if value not in _ON_ALLOW:
            raise UsageError(f"--on-allow must be one of {', '.join(_ON_ALLOW)}, not {value!r}")
        options.on_allow = value
    else:
        try:
            seconds = float(value)
        except ValueError:
            raise UsageError(f"{name} takes a number of seconds, not {value!r}") from None
        if not seconds > 0:
            raise UsageError(f"{name} must be more than 0 seconds")
        if name == "--timeout":
            options.timeout = seconds
        else:
            options.idle_exit = seconds


def locate_engine(options: HookOptions) -> EnginePaths:
    """The engine's files for these options (the socket moves to a short private folder under the system's
    temporary directory when its path in the state directory is too long for a Unix socket)."""
    state_dir = options.resolved_state_dir()
    return EnginePaths(state_dir, options.engine_key(state_dir))


def ensure_private_dir(path: str) -> None:
    """Make ``path`` (owner-only when new) and check that it is a private folder of this user."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    check_private_dir(path)


# -- the hook ------------------------------------------------------------------------------------------------


def run_hook(argv: list[str]) -> None:
    """Answer one Claude Code hook event read from stdin; always exits normally, printing one JSON answer
    (``--help`` and ``--stop`` read no stdin and print no answer)."""
    payload = b""
    try:
        try:
            options: HookOptions | None = parse_options(argv)
            problem = None
        except UsageError as exc:
            options, problem = None, str(exc)
            sys.stderr.write(f"trifecta hook claude-code: {exc}\n")
        if options is not None and options.help:
            sys.stdout.write(USAGE)
            return
        if options is not None and options.stop:
            _stop_engine(locate_engine(options), options.timeout)
            return
        payload = _read_stdin()
        if options is None:
            answer = _fallback_answer(payload, f"the hook is misconfigured: {problem}")
        else:
            answer = _answer(options, payload)
    except Exception as exc:  # the last guard: never a traceback, never allow
        reason = f"internal error in the hook client ({type(exc).__name__}: {exc})"
        answer = _fallback_answer(payload, reason)
        try:  # noqa: SIM105 - not contextlib.suppress: the client starts without contextlib
            report_unrecorded(locate_engine(options) if options is not None else None, payload, reason)
        except Exception:
            pass  # the answer is given whatever happens to the log
    _write(dumps(answer, ensure_ascii=False))


def report_unrecorded(paths: EnginePaths | None, payload: bytes, reason: str) -> None:
    """Say in the engine's log that an event is in no store: the answer to an event other than ``PreToolUse``
    carries no reason (and the hook writes nothing on stderr), and an event must not go missing unsaid. Never
    raises."""
    if paths is None:
        return
    try:  # the last word on a failure: nothing may escape it
        obj = _parse(payload)
        sid = obj.get("session_id") if isinstance(obj, dict) else None
        event = obj.get("hook_event_name") if isinstance(obj, dict) else None
        line = " ".join(f"an event ({event!r}) of session {sid!r} was not recorded: {reason}".split())
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        check_private_dir(paths.state_dir)  # nothing is written where others may read or replace it
        fd = os.open(paths.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, f"{stamp} hook[{os.getpid()}] ERROR {line}\n".encode("utf-8", "backslashreplace"))
        finally:
            os.close(fd)
    except Exception:
        pass


def _read_stdin() -> bytes:
    stream = sys.stdin.buffer if sys.stdin is not None else None
    if stream is None:
        return b""
    data = stream.read(MAX_PAYLOAD + 1)
    return data if isinstance(data, bytes) else b""


def _write(text: str) -> None:
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except (OSError, ValueError):
        pass  # Claude Code went away: nobody is left to answer


def _answer(options: HookOptions, payload: bytes) -> dict[str, Any]:
    paths = locate_engine(options)
    if len(payload) > MAX_PAYLOAD:
        return _fallback_answer(payload, f"the payload is larger than {MAX_PAYLOAD // (1024 * 1024)} MiB; not read")
    received = time.time()
    payload = with_last_reply(payload)
    # Every answer comes within the timeout (the host's own is longer: ``install`` writes it so), whatever
    # holds the store: storing the event ourselves gets what is left of it.
    deadline = time.monotonic() + options.timeout + _STORE_GRACE
    try:
        reply = exchange(paths, options, {"op": "event", "received": received}, payload)
    except EngineUnavailable as exc:
        reason = f"{exc} (see {paths.log})"
        stored = _store_unprocessed(paths, payload, received, deadline)
        if stored is not None:
            report_unrecorded(paths, payload, f"{exc}; {stored}")
        return _fallback_answer(payload, reason if stored is None else f"{reason}; {stored}")
    if not reply.get("committed"):
        stored = _store_unprocessed(paths, payload, received, deadline)
        if stored is not None:
            report_unrecorded(paths, payload, f"{reply.get('message', '')}; {stored}")
            reply["message"] = f"{reply.get('message', '')}; {stored}"
    return to_claude_code(reply.get("action"), str(reply.get("message") or ""), options.on_allow)


def to_claude_code(action: Any, message: str, on_allow: str) -> dict[str, Any]:
    """The answer Claude Code reads: ``{}`` for events other than ``PreToolUse`` (action None) and, with
    ``on_allow`` ``pass``, for an allowed call; else a ``permissionDecision`` with its one-line reason."""
    if action is None or (action == "allow" and on_allow == "pass"):
        return {}
    decision = {"allow": "allow", "deny": "deny"}.get(str(action), "ask")
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": " ".join(message.split()),
        }
    }


def _fallback_answer(payload: bytes, reason: str) -> dict[str, Any]:
    """What the client answers by itself: ``ask`` for what looks like a ``PreToolUse``, ``{}`` otherwise."""
    if not _looks_like_pre_tool_use(payload):
        return {}
    return to_claude_code("confirm", f"trifecta-monitor could not check this call: {reason}", "pass")


def _looks_like_pre_tool_use(payload: bytes) -> bool:
    obj = _parse(payload)
    if isinstance(obj, dict) and isinstance(obj.get("hook_event_name"), str):
        return bool(obj["hook_event_name"] == "PreToolUse")
    return b"PreToolUse" in payload


def _parse(payload: bytes) -> Any:
    try:
        return loads(payload)
    except (ValueError, RecursionError):
        return None


# -- talking to the engine -----------------------------------------------------------------------------------


def exchange(paths: EnginePaths, options: HookOptions, header: dict[str, Any], payload: bytes) -> dict[str, Any]:
    """Send one request to the engine (starting it if none listens) and return its reply."""
    deadline = time.monotonic() + options.timeout
    conn = _connect(paths, options, deadline)
    try:
        conn.settimeout(max(0.001, deadline - time.monotonic()))
        conn.sendall(dumps({"v": PROTOCOL, **header}).encode() + b"\n" + payload)
        conn.shutdown(_socket.SHUT_WR)
        chunks: list[bytes] = []
        size = 0
        while True:
            conn.settimeout(max(0.001, deadline - time.monotonic()))
            chunk = conn.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_ANSWER:
                raise EngineUnavailable("the engine's answer was too long")
    except TimeoutError:
        raise EngineUnavailable(f"the engine did not answer within {options.timeout:g} s") from None
    except OSError as exc:
        raise EngineUnavailable(f"the connection to the engine failed ({exc.strerror or exc})") from None
    finally:
        conn.close()
    return _check_reply(b"".join(chunks))


def _check_reply(data: bytes) -> dict[str, Any]:
    if not data:
        raise EngineUnavailable("the engine closed the connection without an answer")
    reply = _parse(data)
    if not isinstance(reply, dict) or reply.get("action") not in (None, "allow", "confirm", "deny"):
        raise EngineUnavailable("the engine's answer was not understood")
    if not isinstance(reply.get("message", ""), str):
        raise EngineUnavailable("the engine's answer was not understood")
    return reply


def _connect(paths: EnginePaths, options: HookOptions, deadline: float) -> _socket.socket:
    started_at: float | None = None
    delay = 0.002
    while True:
        try:
            conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        except OSError as exc:  # out of descriptors, say
            raise EngineUnavailable(f"cannot reach the engine ({exc.strerror or exc})") from None
        try:
            if not paths.socket:
                raise FileNotFoundError
            check_engine_place(paths.state_dir, paths.socket)
            conn.settimeout(max(0.001, deadline - time.monotonic()))
            conn.connect(paths.socket)
            check_peer(conn)
            return conn
        except EngineUnavailable:
            conn.close()
            raise
        except (FileNotFoundError, ConnectionRefusedError):
            conn.close()
        except TimeoutError:
            conn.close()
            raise EngineUnavailable(f"the engine did not answer within {options.timeout:g} s") from None
        except OSError as exc:
            conn.close()
            raise EngineUnavailable(f"cannot reach the engine at {paths.socket} ({exc.strerror or exc})") from None
        now = time.monotonic()
        if started_at is None or now - started_at >= _RESPAWN_EVERY:
            start_engine(paths, options)
            started_at = now
        if now >= deadline:
            raise EngineUnavailable(f"the engine did not start within {options.timeout:g} s")
        time.sleep(min(delay, max(0.0, deadline - now)))
        delay = min(delay * 2, 0.05)


def engine_command(paths: EnginePaths, options: HookOptions) -> list[str]:
    """The command line that runs the engine for these options."""
    command = [sys.executable, "-m", "monitor.hosts._engine", "--state-dir", paths.state_dir]
    command += ["--socket", paths.socket, "--key", paths.key, "--posture", options.posture]
    command += ["--idle-exit", repr(options.idle_exit)]
    if options.policy != "default":
        command += ["--policy", options.policy]
    if options.scope is not None:
        command += ["--scope", _absolute(options.scope)]
    for rules in options.rule_dirs():
        command += ["--rules", rules]
    if not options.builtin_rules:
        command.append("--no-builtin-rules")
    return command


def start_engine(paths: EnginePaths, options: HookOptions) -> None:
    """Start the engine, detached: its own session, no terminal, stdin and stdout closed (Claude Code waits
    for the hook's stdout to close), stderr to the log."""
    import subprocess

    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))  # holds ``monitor``
    env["PYTHONPATH"] = os.pathsep.join([root, *filter(None, [env.get("PYTHONPATH")])])
    try:  # a failure here is the engine's absence: the client then stores the event itself
        ensure_private_dir(paths.state_dir)
        if not paths.socket:
            paths.make_socket_dir()
        ensure_private_dir(os.path.dirname(paths.socket))
        fd = os.open(paths.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    except OSError as exc:
        raise EngineUnavailable(f"cannot start the engine ({exc.strerror or exc})") from None
    try:
        subprocess.Popen(
            engine_command(paths, options),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=fd,
            start_new_session=True,
            close_fds=True,
            env=env,
            cwd=paths.state_dir,
        )
    except OSError as exc:
        raise EngineUnavailable(f"cannot start the engine ({exc.strerror or exc})") from None
    finally:
        os.close(fd)


def _stop_engine(paths: EnginePaths, timeout: float) -> None:
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        if not paths.socket:
            return
        check_engine_place(paths.state_dir, paths.socket)
        conn.settimeout(timeout)
        conn.connect(paths.socket)
        check_peer(conn)
        conn.sendall(dumps({"v": PROTOCOL, "op": "stop"}).encode() + b"\n")
        conn.shutdown(_socket.SHUT_WR)
        conn.recv(1024)
    except EngineUnavailable as exc:
        sys.stderr.write(f"trifecta hook claude-code: {exc}\n")
    except OSError:
        pass  # no engine runs
    finally:
        conn.close()


def _store_unprocessed(paths: EnginePaths, payload: bytes, received: float, deadline: float) -> str | None:
    """Append the event to the store, unprocessed, waiting for it until ``deadline``; when the store cannot take
    it by then, keep it in the spool folder, which the engine empties into the store before its next event.
    Return what went wrong, or None once the event is stored."""
    obj = _parse(payload)
    if not isinstance(obj, dict) or not isinstance(obj.get("session_id"), str) or not obj["session_id"]:
        return "the event names no session and was not stored"
    event = obj.get("hook_event_name")
    try:
        from pathlib import Path

        from monitor.store import HookStore, default_store_path

        ensure_private_dir(paths.state_dir)
        left = deadline - time.monotonic()
        if left < _MIN_STORE_WAIT:
            return _spool(paths, payload, received, "the store could not be waited for")
        store = HookStore(default_store_path(Path(paths.state_dir)), busy_timeout=left)
        try:
            store.append(
                obj["session_id"],
                event if isinstance(event, str) else "",
                payload.decode("utf-8", "replace"),
                received=received,
                processed=False,
            )
        finally:
            store.close()
    except Exception as exc:
        return _spool(paths, payload, received, f"the store could not take it ({type(exc).__name__}: {exc})")
    return None


def spool_dir(state_dir: str) -> str:
    """The folder of events the hook could not store in time (one file each, named by when it came)."""
    return os.path.join(state_dir, SPOOL_NAME)


def _spool(paths: EnginePaths, payload: bytes, received: float, why: str) -> str:
    """Keep the event in the spool folder (no lock to wait for); say where it is, or that it is lost."""
    try:
        folder = spool_dir(paths.state_dir)
        check_private_dir(paths.state_dir)  # never beside a store others may read or replace
        ensure_private_dir(folder)
        name = os.path.join(folder, f"{received:017.6f}-{os.getpid()}.event")
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, payload)
        finally:
            os.close(fd)
    except Exception as exc:
        return f"{why}; the event could not be kept either ({type(exc).__name__}: {exc})"
    return f"{why}; the event is kept in {folder} until the store takes it"
