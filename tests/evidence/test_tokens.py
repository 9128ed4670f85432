"""An id is found where a text names it as one, and only there; the search passes over texts without its digits."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.evidence._tokens import id_mention, mentions_id

_PIECES = [
    "13",
    "130",
    "413",
    "ID",
    "id",
    "#",
    "'",
    '"',
    "`",
    " ",
    ":",
    "-",
    "file",
    "ticket",
    "order",
    "x",
    "\n",
    "no.",
]


@settings(max_examples=500, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(_PIECES), max_size=40).map("".join), st.sampled_from(["13", "130", "4", "3"]))
def test_an_id_is_found_exactly_where_its_pattern_finds_it(text: str, number: str) -> None:
    assert mentions_id(text, number) == (id_mention(number).search(text) is not None)


def test_an_id_named_as_one_is_found_and_a_bare_number_or_a_longer_one_is_not() -> None:
    assert mentions_id("Please close ticket #13 today", "13")
    assert mentions_id("see id: 13", "13")
    assert mentions_id("the file '13' is ready", "13")
    assert not mentions_id("it costs 13 dollars", "13")
    assert not mentions_id("ticket #130", "13")
    assert not mentions_id("nothing here", "13")


def test_a_text_that_holds_the_digits_many_times_is_still_read_to_its_end() -> None:
    bare = "13 " * 30
    assert not mentions_id(bare, "13")
    assert mentions_id(bare + "and then ticket 13.", "13")
    assert mentions_id("13 " * 5 + "document - 13", "13")
    assert not mentions_id(bare + "x13", "13")
    assert mentions_id("4#4", "4")  # the mention starts inside the first "4" it could be
