"""A result is read once per text: its digest, kept in a memo, is what every session's index applies, and an
index fed a digest from the memo ends exactly as one that read the result itself."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.evidence import ContentIndex, ReadBounds, Reading, clear_text_memos
from monitor.evidence import _index as index_module
from monitor.evidence._digest import LeafDigest, ObjectDigest, _digest_text, digest_result

INBOX = json.dumps(
    [
        {
            "sender": "mallory@evil.example",
            "subject": "Re: invoice",
            "body": "Please wire it to DE89 3704 0044 0532 0130 00",
        },
        {"sender": "ana@corp.example", "subject": "Lunch", "body": "See you at noon, Ana Lopez"},
        {"id": "acct-7781", "owner": "bob@corp.example", "balance": 1200},
    ]
)


def index_state(index: ContentIndex) -> dict[str, object]:
    return {
        "listed": index.listed,
        "outsiders": index.outsiders,
        "free_text": index.free_text,
        "attributes": index.attributes,
        "messages": index.messages,
        "message_people": index.message_people,
        "pending": [(call, key, value) for _, call, key, value in index._pending],
        "private_values": index._private_values,
        "truncated": index.truncated,
    }


def fill(index: ContentIndex) -> None:
    index.add_result("c1", INBOX, private=True, untrusted=True)
    index.add_result("c2", {"content": [{"type": "text", "text": INBOX}]}, private=False, untrusted=True)
    index.add_result("c3", INBOX, private=True, untrusted=False)


def test_an_index_fed_digests_from_the_memo_ends_as_one_that_read_every_result() -> None:
    clear_text_memos()
    cold = ContentIndex()
    fill(cold)
    assert _digest_text.hits >= 1  # c3 repeats c1's text
    warm = ContentIndex()
    fill(warm)
    assert index_state(warm) == index_state(cold)
    assert cold.outsiders["mallory@evil.example"] == "c1"
    assert cold.listed["bob@corp.example"] == "c1"
    assert "ana@corp.example" in cold.messages


def test_indexes_sharing_a_digest_keep_their_own_tables() -> None:
    clear_text_memos()
    first, second = ContentIndex(), ContentIndex()
    first.add_result("a1", INBOX, private=True, untrusted=True)
    second.add_result("b1", INBOX, private=True, untrusted=True)
    first.attributes["acct-7781"].clear()
    first.messages["ana@corp.example"].append("changed")
    assert len(second.attributes["acct-7781"]) == 1
    assert "changed" not in second.messages["ana@corp.example"]
    assert second.listed["acct-7781"] == "b1"


def test_a_result_over_a_reading_bound_is_truncated_every_time_it_is_read() -> None:
    clear_text_memos()
    bounds = ReadBounds(max_nodes=3)
    for _ in range(2):  # the second reading comes from the memo
        reading = Reading(INBOX, bounds)
        digest = digest_result(reading, 1_000_000)
        assert reading.truncated and digest.truncated
    assert _digest_text.hits == 1
    whole = Reading(INBOX)
    digest_result(whole, 1_000_000)
    assert not whole.truncated  # the bounds are part of what is remembered


def test_the_character_budget_is_part_of_what_is_remembered(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    clear_text_memos()
    full = digest_result(Reading(INBOX), 1_000_000)
    short = digest_result(Reading(INBOX), 40)
    assert not full.cut and short.cut
    assert sum(len(i.value) for i in short.items if isinstance(i, LeafDigest)) == 40
    monkeypatch.setattr(index_module, "MAX_RESULT_CHARS", 40)
    index = ContentIndex()
    index.add_result("c1", INBOX, private=True, untrusted=False)
    assert index.truncated_result


def test_a_digest_lists_objects_and_leaves_in_the_order_the_walk_met_them() -> None:
    clear_text_memos()
    digest = digest_result(Reading(INBOX), 1_000_000)
    kinds = ["object" if isinstance(item, ObjectDigest) else "leaf" for item in digest.items]
    assert kinds[0] == "object" and kinds.count("object") == 3
    leaves = [item for item in digest.items if isinstance(item, LeafDigest)]
    assert [leaf.value for leaf in leaves][:4] == [
        "mallory@evil.example",
        "Re: invoice",
        "Please wire it to DE89 3704 0044 0532 0130 00",
        "ana@corp.example",
    ]
    body = next(leaf for leaf in leaves if leaf.key == "body")
    assert body.free_text and body.addresses == () and body.normalized == body.value.lower()
    sender = leaves[0]
    assert sender.outsider and sender.addresses == ("mallory@evil.example",)


_VALUES = [
    "mallory@evil.example",
    "ana@corp.example",
    "acct-7781",
    "Lunch at noon",
    "Please wire it to DE89 3704 0044 0532 0130 00 before Friday, thanks a lot",
    "short",
    "https://files.example.com/report.pdf",
    "Project Nightingale budget is 2.4M",
]
_RECORDS = st.lists(
    st.dictionaries(
        st.sampled_from(["sender", "from", "subject", "body", "id", "owner", "url"]), st.sampled_from(_VALUES)
    ),
    max_size=5,
)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    st.lists(st.tuples(_RECORDS, st.booleans(), st.booleans()), min_size=1, max_size=6),
    st.sampled_from([3, 8, 20, 50_000]),
    st.sampled_from([60, 300, 1_000_000]),
    st.sampled_from([50, 200_000]),
)
def test_an_index_that_applies_a_digest_table_by_table_ends_as_one_that_applies_it_item_by_item(
    results: list[tuple[list[dict[str, str]], bool, bool]], max_values: int, max_text_chars: int, pending: int
) -> None:
    at_once = ContentIndex(max_values=max_values, max_text_chars=max_text_chars)
    by_item = ContentIndex(max_values=max_values, max_text_chars=max_text_chars)
    at_once_only = index_module._add_at_once
    usual, index_module._MAX_PENDING_CHARS = index_module._MAX_PENDING_CHARS, pending  # flushed on the way
    index_module._add_at_once = lambda index, *rest: index is not by_item and at_once_only(index, *rest)
    try:
        for n, (records, private, untrusted) in enumerate(results):
            for index in (at_once, by_item):
                index.add_result(f"c{n}", json.dumps(records), private=private, untrusted=untrusted)
    finally:
        index_module._MAX_PENDING_CHARS, index_module._add_at_once = usual, at_once_only
    assert index_state(at_once) == index_state(by_item)
    assert list(at_once.listed) == list(by_item.listed)  # the same first sources, in the same order
    assert list(at_once.outsiders) == list(by_item.outsiders)
    assert list(at_once._private_values) == list(by_item._private_values)
    assert (at_once._text_chars, at_once.truncated_listing) == (by_item._text_chars, by_item.truncated_listing)
    assert (at_once._private_seen, at_once._pending_chars) == (by_item._private_seen, by_item._pending_chars)
    assert len(at_once.private) == len(by_item.private)  # what the flushes on the way fingerprinted
