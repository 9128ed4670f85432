"""Shortcuts on the hot path give exactly what the plain definitions give: a text without the character a
pattern needs is not scanned for it, white space is folded by ``str.split``, and the places outsiders write to
are found through their values."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator

from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.evidence import ContentIndex, find_addresses, normalize_text
from monitor.evidence import _destinations as destinations
from monitor.models import Destination, DestinationKind

_SPACE = re.compile(r"\s+")


def find_addresses_plainly(text: str) -> Iterator[tuple[DestinationKind, str]]:
    """Every pattern run on every text, as the definition reads."""
    without_userinfo = destinations._USERINFO.sub(lambda m: " " * len(m.group(0)), text)
    for m in destinations._EMAIL.finditer(without_userinfo):
        yield DestinationKind.EMAIL, m.group(0).lower()
    for m in destinations._URL.finditer(text):
        host = destinations._host(m.group(0))
        if host:
            yield DestinationKind.DOMAIN, destinations.registrable_domain(host)
    for m in destinations._BARE_DOMAIN.finditer(destinations._EMAIL.sub(" ", destinations._URL.sub(" ", text))):
        yield DestinationKind.DOMAIN, destinations.registrable_domain(m.group(0))
    for m in destinations._IBAN.finditer(text):
        yield DestinationKind.IBAN, m.group(0).replace(" ", "")
    for m in destinations._PHONE.finditer(text):
        yield DestinationKind.PHONE, re.sub(r"[^\d+]", "", m.group(0))


PIECES = st.sampled_from(
    [
        "a", "Z", "7", " ", "\n", "@", ":", ".", "+", "/", "-", "_", "%", "com", "example", "https://", "www.",
        "eve@evil.example", "http://bank.example@evil.example/x", "GB29 NWBK 6016 1331 9268 19", "+1 (555) 010-9999",
        "DE89370400440532013000", "user:pass@", "ü", "\u00a0", "files.evil.co.uk", "mailto:", "(", ")",
    ]
)  # fmt: skip


@settings(max_examples=600, deadline=None)
@given(st.lists(PIECES, max_size=24).map("".join))
def test_addresses_are_found_as_the_plain_definition_finds_them(text: str) -> None:
    assert list(find_addresses(text)) == list(find_addresses_plainly(text))


def test_each_kind_of_address_is_still_found_alone() -> None:
    text = (
        "mail eve@evil.example, see https://a.example@files.evil.co.uk/x or docs.site.com,"
        " GB29NWBK60161331926819, +44 20 7946 0958"
    )
    assert list(find_addresses(text)) == list(find_addresses_plainly(text))
    # Names, paths and postal addresses are read from the argument that holds them, never found in text.
    assert {kind for kind, _ in find_addresses(text)} == set(DestinationKind) - {
        DestinationKind.NAME,
        DestinationKind.PATH,
        DestinationKind.POSTAL,
    }


def test_white_space_is_folded_as_the_regular_expression_folds_it() -> None:
    spaces = [chr(c) for c in range(sys.maxunicode + 1) if _SPACE.fullmatch(chr(c))]
    assert "\u00a0" in spaces and "\u2028" in spaces and "\x1c" in spaces
    for space in spaces:
        text = f"{space}Re:{space}{space}Quarterly  Report{space}"
        assert normalize_text(text) == _SPACE.sub(" ", text).strip().lower() == "re: quarterly report"
    assert normalize_text("a\u200bb") == "a\u200bb"  # a zero-width space is not white space to either


PLACE_VALUES = st.sampled_from(["acme/site", "acme/infra", "general", "random", "docs", "x" * 12])
KINDS = st.sampled_from([DestinationKind.NAME, DestinationKind.DOMAIN, DestinationKind.PATH, DestinationKind.EMAIL])


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["c1", "c2", "c3", ""]), st.dictionaries(st.sampled_from("abc"), PLACE_VALUES)),
        max_size=8,
    ),
    st.lists(st.tuples(KINDS, PLACE_VALUES, st.booleans()), max_size=3),
)
def test_shared_places_are_found_as_the_plain_definition_finds_them(
    sources: list[tuple[str, dict[str, str]]], named: list[tuple[DestinationKind, str, bool]]
) -> None:
    index = ContentIndex()
    for call_id, arguments in sources:
        index.add_untrusted_source(arguments, call_id)
    destinations = [Destination(kind=kind, value=value, path="/to", keyed=keyed) for kind, value, keyed in named]
    names = {
        d.value
        for d in destinations
        if d.keyed and d.kind in (DestinationKind.NAME, DestinationKind.DOMAIN, DestinationKind.PATH)
    }
    # The definition: every call one of whose places holds all the names (a call may have read several places).
    plain = {call_id for call_id, place in index.untrusted_places if names <= place} if names else set()
    assert index.shared_place_calls(destinations) == plain
