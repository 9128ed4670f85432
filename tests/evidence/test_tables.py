"""Keys added to a table at once end as adding them one by one with ``setdefault`` leaves it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.evidence._tables import add_first

_KEYS = st.lists(st.sampled_from("abcdefgh"), max_size=12)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.dictionaries(st.sampled_from("abcdefgh"), st.integers(0, 3)), _KEYS, _KEYS)
def test_keys_added_at_once_end_as_set_one_by_one(held: dict[str, int], keys: list[str], without: list[str]) -> None:
    at_once, one_by_one = dict(held), dict(held)
    add_first(at_once, keys, 9, without=without)
    for key in keys:
        if key not in without:
            one_by_one.setdefault(key, 9)
    assert list(at_once.items()) == list(one_by_one.items())  # the same values, in the same order
