"""Many keys into one of a session's tables at once: one step in C per table, not one step in Python per key."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

_K = TypeVar("_K")
_V = TypeVar("_V")


def add_first(table: dict[_K, _V], keys: Iterable[_K], value: _V, without: Iterable[_K] = ()) -> None:
    """``table.setdefault(key, value)`` for each key in order, but those ``without``: the new keys go in at once,
    in the order they first appear, and a key already held keeps its value and its place."""
    added = dict.fromkeys(keys, value)
    for key in added.keys() & table.keys():
        del added[key]
    for key in without:
        added.pop(key, None)
    table.update(added)
