"""The Claude Code hook's engine processes of a test's state directory: find them and kill them. The
``state_dir`` fixture (tests/hosts/conftest.py offers it to the host tests) is a fresh state directory whose
engines are killed afterwards."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest


def engine_pids(state_dir: Path) -> set[int]:
    """The engines started for ``state_dir``: by their pid files, and by the state directory on their
    command line (an engine that has not written its pid file yet)."""
    pids = set()
    for pid_file in state_dir.glob("engine-*.pid"):
        with contextlib.suppress(OSError, ValueError):
            pids.add(int(pid_file.read_text()))
    wanted = os.fsencode(state_dir)
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"monitor.hosts._engine" in argv and wanted in argv:
            pids.add(int(proc.name))
    return pids


def kill_engines(state_dir: Path) -> set[int]:
    """SIGKILL every engine of ``state_dir`` (only those); return the pids killed."""
    pids = engine_pids(state_dir)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return pids


@pytest.fixture
def state_dir(tmp_path: Path) -> Iterator[Path]:
    """A fresh state directory; the engines started in it are killed afterwards."""
    path = tmp_path / "state"
    yield path
    kill_engines(path)
