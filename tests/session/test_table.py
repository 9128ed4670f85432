"""The table of sessions: one lock per session, a session taken out is never worked on again, and a busy session
never holds up another."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from monitor.session import SessionTable


def make_table() -> SessionTable[list[str]]:
    return SessionTable(lambda session_id: [session_id])


def test_a_session_is_made_once_on_first_use_and_found_afterwards() -> None:
    table = make_table()
    assert table.find("s") is None and "s" not in table and len(table) == 0
    with table.hold("s") as slot:
        slot.value.append("first")
    with table.hold("s") as again:
        assert again is slot and again.value == ["s", "first"]
    assert table.find("s") is slot and "s" in table and table.ids() == ["s"] and table.slots() == [slot]


def test_a_session_taken_out_is_ended_and_the_id_then_names_a_new_one() -> None:
    table = make_table()
    with table.hold("s") as old:
        old.value.append("old")
    assert table.take("s") is old and old.ended and table.find("s") is None
    assert table.take("s") is None
    with table.hold("s") as new:
        assert new is not old and new.value == ["s"]


def test_an_operation_that_found_a_session_just_before_it_ended_works_on_the_new_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The race, made deterministic: the look-up returns the old slot, which was ended before its lock was got."""
    table = make_table()
    with table.hold("s") as stale:
        pass
    table.take("s")
    lookups = iter([stale])
    real = table._slot
    monkeypatch.setattr(table, "_slot", lambda session_id: next(lookups, None) or real(session_id))
    with table.hold("s") as slot:
        slot.value.append("work")
    assert slot is not stale and stale.value == ["s"] and table.find("s") is slot


def test_discard_takes_out_only_the_slot_still_held_for_its_session() -> None:
    table = make_table()
    with table.hold("s") as old:
        pass
    table.take("s")
    with table.hold("s") as new:
        pass
    table.discard(old)  # already replaced: the new session stays
    assert table.find("s") is new and not new.ended
    with new.lock:
        table.discard(new)
    assert new.ended and table.find("s") is None


def test_a_busy_session_does_not_hold_up_another() -> None:
    table = make_table()
    busy, release = threading.Event(), threading.Event()
    done: list[Any] = []

    def work_long() -> None:
        with table.hold("slow"):
            busy.set()
            release.wait(10)

    worker = threading.Thread(target=work_long)
    worker.start()
    assert busy.wait(10)
    with table.hold("fast") as slot:  # would block forever if the table's lock were held while "slow" works
        done.append(slot.session_id)
    release.set()
    worker.join(10)
    assert done == ["fast"] and not worker.is_alive()


def test_work_on_one_session_is_serialised() -> None:
    table: SessionTable[list[int]] = SessionTable(lambda session_id: [0])

    def add() -> None:
        for _ in range(2000):
            with table.hold("s") as slot:
                value = slot.value[0]
                slot.value[0] = value + 1

    threads = [threading.Thread(target=add) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    slot = table.find("s")
    assert slot is not None and slot.value == [8000]
