"""Ctrl-C during ``analyze --jobs 2``: the command stops, without a traceback, and leaves no worker running."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.scale.helpers import ROOT


def _descendants(pid: int) -> set[int]:
    """The processes below ``pid`` now (read from /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_an_interrupt_stops_the_run_and_its_workers(
    tmp_path: Path, agentdojo_run: Callable[..., dict[str, Any]]
) -> None:
    archive = tmp_path / "runs.tar"
    template = json.dumps(agentdojo_run())
    # Far more than the workers get through before the interrupt, each run's result its own (no evidence memo
    # makes a run cheap: the work does not end before the interrupt however fast the machine).
    words = " ".join(f"item-{n}" for n in range(60))
    with tarfile.open(archive, "w") as tar:
        for i in range(20_000):
            data = template.replace("please review the file.", f"please review file {i}: {words} (ref {i}).").encode()
            info = tarfile.TarInfo(f"runs/user_task_{i}/none/none.json")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    command = [sys.executable, "-m", "monitor", "analyze", str(archive), "--jobs", "2", "-q", "-o", str(tmp_path / "o")]
    with _python_handles_interrupts():  # the command gets the default action even where ours are ignored
        process = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, start_new_session=True)
    workers: set[int] = set()
    for _ in range(600):  # until the workers are up (bounded: 60 s)
        workers = _descendants(process.pid)
        if len(workers) >= 3 or process.poll() is not None:  # the fork server and two workers
            break
        time.sleep(0.1)
    assert process.poll() is None, "the run ended before it could be interrupted"
    time.sleep(1.0)  # the resource tracker may be one of the three: let the second worker finish starting

    os.killpg(process.pid, signal.SIGINT)  # as a terminal does: the whole foreground group
    try:
        _, stderr = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        raise AssertionError("the run did not stop on an interrupt") from None

    assert process.returncode != 0
    assert b"Traceback" not in stderr, stderr.decode(errors="replace")
    for _ in range(100):  # the fork server notices its parent is gone on its own; give it a moment
        if not any(_alive(pid) for pid in workers):
            break
        time.sleep(0.1)
    assert [pid for pid in workers if _alive(pid)] == []


def test_an_interrupt_while_a_worker_starts_waits_until_it_has_started() -> None:
    from monitor.scale._processes import _interrupt_deferred

    finished = []
    with _python_handles_interrupts():
        try:
            with _interrupt_deferred():
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.05)  # the handler runs here: held, not raised
                finished.append(True)
        except KeyboardInterrupt:
            assert finished == [True]  # the block ran to its end, then the interrupt went on
        else:
            raise AssertionError("the held interrupt was not raised after the block")
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_held_interrupt_goes_to_the_hosts_handler_and_an_ignored_one_stays_ignored() -> None:
    from monitor.scale._processes import _interrupt_deferred

    seen: list[int] = []

    def host(signum: int, _frame: object) -> None:
        seen.append(signum)

    previous = signal.signal(signal.SIGINT, host)
    try:
        with _interrupt_deferred():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
            assert seen == []  # held during the block
        assert seen == [signal.SIGINT] and signal.getsignal(signal.SIGINT) is host
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # as under nohup, or a background job of a script
        with _interrupt_deferred():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN  # nothing raised, still ignored
    except KeyboardInterrupt:
        raise AssertionError("an interrupt the host handles, or ignores, was raised instead") from None
    finally:
        signal.signal(signal.SIGINT, previous)


def test_an_interrupt_handler_python_did_not_install_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    from monitor.scale import _processes

    monkeypatch.setattr(_processes.signal, "getsignal", lambda _signum: None)  # as in a host that embeds Python
    installed: list[object] = []
    monkeypatch.setattr(_processes.signal, "signal", lambda *args: installed.append(args))
    with _processes._interrupt_deferred():
        pass
    assert installed == []


@contextlib.contextmanager
def _python_handles_interrupts() -> Iterator[None]:
    """Python's own interrupt handler for the block, whatever this process inherited (a run started in the
    background of a script ignores interrupts); a command started here then gets the default action."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
