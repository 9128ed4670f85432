"""Who the hook client talks to: only an engine of the user running it (standard library only, imported by the
client at every event).

The payloads hold what the agent reads and writes, and the engine's answer decides whether a call runs: a
folder another local user made first, or may write to, a link in place of the socket, or a socket served by
another user's process is refused before a byte is sent (docs/hosts.md, "Who the hook talks to").
"""

from __future__ import annotations

# ``_socket``, the C module under ``socket``: the client needs its calls only, and ``socket`` costs milliseconds
import _socket
import os
import stat
import sys

from monitor.errors import TrifectaError

_UCRED_SIZE = 12  # struct ucred: pid, uid and gid, three C ints


class EngineUnavailable(TrifectaError):
    """The engine could not be reached, or gave no usable answer (answered, never raised out of
    :func:`run_hook`)."""


def check_private_dir(path: str) -> None:
    """Raise :class:`EngineUnavailable` unless ``path`` is a directory (not a link) of this user that no one else
    may write to: another user who made it first could put their own engine there, and read every event."""
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o022:
        kind = "a link" if stat.S_ISLNK(info.st_mode) else "a folder" if stat.S_ISDIR(info.st_mode) else "a file"
        raise EngineUnavailable(
            f"{path} is not a private folder of this user ({kind} of uid {info.st_uid}, mode"
            f" {stat.S_IMODE(info.st_mode):o}); the hook does not talk to an engine there"
        )


def check_engine_place(state_dir: str, socket_path: str) -> None:
    """Raise :class:`EngineUnavailable` unless the state directory and the socket's folder, where they exist, are
    private folders of this user, and the socket, where it exists, is a socket of this user."""
    for folder in dict.fromkeys([state_dir, os.path.dirname(socket_path)]):
        if folder and os.path.lexists(folder):
            check_private_dir(folder)
    try:
        info = os.lstat(socket_path)
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(info.st_mode) or info.st_uid != os.getuid():
        raise EngineUnavailable(f"{socket_path} is not a socket of this user; the hook does not talk to it")


def check_peer(conn: _socket.socket) -> None:
    """Raise :class:`EngineUnavailable` unless the process at the other end runs as this user (where the platform
    tells: ``SO_PEERCRED``)."""
    option = getattr(_socket, "SO_PEERCRED", None)
    if option is None:
        return
    cred = conn.getsockopt(_socket.SOL_SOCKET, option, _UCRED_SIZE)
    if len(cred) != _UCRED_SIZE:
        raise EngineUnavailable("the engine's socket did not say which user serves it; not used")
    uid = int.from_bytes(cred[4:8], sys.byteorder, signed=True)  # the second C int, as struct.unpack("3i") reads it
    if uid != os.getuid():
        raise EngineUnavailable(f"the engine's socket is served by uid {uid}, not this user; not used")
