"""The peer check of the hook client (``check_peer``), on a connected pair of sockets of this process: the uid it
reads is the one ``SO_PEERCRED`` holds, and another uid is refused. (test_hook_ownership.py runs it against a real
second user's process.)"""

from __future__ import annotations

import os
import socket
import struct
from collections.abc import Iterator

import pytest

from monitor.hosts import _hook_trust
from monitor.hosts._hook_trust import EngineUnavailable, check_peer

pytestmark = pytest.mark.skipif(not hasattr(socket, "SO_PEERCRED"), reason="the platform does not tell the peer")


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    ends = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    yield ends
    for end in ends:
        end.close()


def test_a_peer_of_this_user_is_accepted(pair: tuple[socket.socket, socket.socket]) -> None:
    check_peer(pair[0])


def test_a_peer_of_another_user_is_refused_naming_its_uid(
    pair: tuple[socket.socket, socket.socket], monkeypatch: pytest.MonkeyPatch
) -> None:
    _pid, uid, _gid = struct.unpack("3i", pair[0].getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
    assert uid == os.getuid()
    monkeypatch.setattr(_hook_trust.os, "getuid", lambda: uid + 1)
    with pytest.raises(EngineUnavailable, match=f"served by uid {uid}, not this user"):
        check_peer(pair[0])
