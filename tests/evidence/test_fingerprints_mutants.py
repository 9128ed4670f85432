"""Fragment matching at its edges: content one k-gram long, the bounds of the index, what joins two pieces,
secrets and their encodings, and the snippet a match reports."""

import base64
import binascii
import string
import zlib

import pytest

from monitor.evidence import WINDOW, FragmentIndex, K, normalize, winnow
from monitor.evidence import _fingerprints as fingerprints_module
from monitor.models import FragmentMatch, Transform

ONE_KGRAM = "quarterly revenue rose"  # exactly K letters and digits: one k-gram, one fingerprint
OTHER_KGRAM = "harbor lease renew 2026"
REPORT = "Revenue was 12.5M in Q3 for the EU region, and the merger with Acme closes on Friday."
ADDRESS = "New address: Dalton Street 123, New York, NY 10001. Please update my profile."
CODE = "771204"
PASSWORD = "Kq7#vLp2!xWz"
SYMBOLS = "?>?>Zz9~~~x1"  # too few letters and digits to compare: known by what it was written as


def found(idx: FragmentIndex, *texts: str, previous: str = "") -> set[tuple[str, str, Transform]]:
    return {(m.from_call, m.text, m.transform) for m in idx.search(texts, previous)}


def transforms(idx: FragmentIndex, *texts: str, previous: str = "") -> set[tuple[str, Transform]]:
    return {(m.from_call, m.transform) for m in idx.search(texts, previous)}


def content_index(*texts: str) -> FragmentIndex:
    idx = FragmentIndex()
    for i, text in enumerate(texts):
        idx.add(f"c{i + 1}", text)
    return idx


def secret_index(*values: str) -> FragmentIndex:
    idx = FragmentIndex()
    for i, value in enumerate(values):
        idx.add_secrets(f"c{i + 1}", "password", value)
    return idx


def norm(text: str) -> str:
    return normalize(text)[0]


def test_the_fixtures_are_one_kgram_long() -> None:
    """The one-k-gram texts below are exactly K letters and digits long."""
    assert len(norm(ONE_KGRAM)) == K and len(norm(OTHER_KGRAM)) == K


# --- content exactly one k-gram long ------------------------------------------------------------------------


def test_content_one_kgram_long_is_found_when_sent_whole() -> None:
    """Private content of exactly K characters is indexed and found, alone or inside a longer argument."""
    idx = content_index(ONE_KGRAM)
    assert transforms(idx, ONE_KGRAM) == {("c1", Transform.VERBATIM)}
    assert transforms(idx, "fyi: Quarterly revenue ROSE") == {("c1", Transform.VERBATIM)}
    assert transforms(idx, "quarterly revenue ros") == set()


# --- winnowing ------------------------------------------------------------------------------------------------


def reference_winnow(text: str) -> list[tuple[int, int]]:
    """In every window of WINDOW k-grams (one window when there are fewer), the rightmost minimal hash; a
    fingerprint each time that position changes."""
    hashes = [zlib.crc32(text[i : i + K].encode()) for i in range(len(text) - K + 1)]
    if not hashes:
        return []
    width = min(WINDOW, len(hashes))
    out: list[tuple[int, int]] = []
    for start in range(len(hashes) - width + 1):
        window = range(start, start + width)
        best = max(window, key=lambda j: (-hashes[j], j))
        if not out or out[-1][1] != best:
            out.append((hashes[best], best))
    return out


WINNOW_TEXTS = [
    *(norm(REPORT * 2)[i : i + K + extra] for i in range(0, 60, 7) for extra in range(0, 3 * WINDOW)),
    *(norm(REPORT * 2)[i : i + K + 2 * WINDOW] for i in range(100)),
    *(unit * (40 // len(unit)) for unit in ("ab", "abc", "abcd", "abcde", "aab")),
    *(("abcd" * 10)[: K + extra] for extra in range(0, 2 * WINDOW)),
]


@pytest.mark.parametrize("block", [fingerprints_module.BLOCK, 1, 3, 8])
def test_winnowing_keeps_the_rightmost_minimum_of_every_window(block: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Winnowing picks the rightmost minimal k-gram of each window, for short, repetitive and long texts alike."""
    monkeypatch.setattr(fingerprints_module, "BLOCK", block)
    for text in WINNOW_TEXTS:
        assert list(winnow(text)) == reference_winnow(text), text


# --- bounds of the index ----------------------------------------------------------------------------------------


def kgram_text(i: int) -> str:
    """The i-th of distinct one-k-gram texts (they differ in their last four characters only, so their CRC-32
    differ too)."""
    alphabet = string.digits + string.ascii_lowercase
    tail = ""
    for _ in range(4):
        i, digit = divmod(i, len(alphabet))
        tail = alphabet[digit] + tail
    return "fingerprintbound" + tail


def test_a_default_index_holds_fifty_thousand_fingerprints_then_forgets_the_oldest() -> None:
    """The default index keeps 50,000 fingerprints; one more forgets the oldest and reports the truncation."""
    idx = FragmentIndex()
    assert idx.truncated is False
    for i in range(50_000):
        idx.add(f"c{i}", kgram_text(i))
    assert len(idx) == 50_000 and idx.truncated is False
    assert transforms(idx, kgram_text(0)) == {("c0", Transform.VERBATIM)}
    idx.add("last", kgram_text(50_000))
    assert idx.truncated is True
    assert transforms(idx, kgram_text(0)) == set()
    assert transforms(idx, kgram_text(1)) == {("c1", Transform.VERBATIM)}


def test_past_its_bound_the_index_forgets_the_oldest_content_not_the_newest() -> None:
    """Past ``max_fingerprints`` the oldest result's fingerprints go and the newest ones are kept."""
    idx = FragmentIndex(max_fingerprints=2)
    idx.add("c1", kgram_text(1))
    idx.add("c2", kgram_text(2))
    assert idx.truncated is False
    idx.add("c3", kgram_text(3))
    assert idx.truncated is True
    assert transforms(idx, kgram_text(1)) == set()
    assert transforms(idx, kgram_text(2)) == {("c2", Transform.VERBATIM)}
    assert transforms(idx, kgram_text(3)) == {("c3", Transform.VERBATIM)}


def test_a_default_index_holds_two_thousand_secrets_then_forgets_the_oldest() -> None:
    """The default index keeps 2,000 secrets; one more forgets the oldest and reports the truncation."""
    idx = FragmentIndex()
    for i in range(2_000):
        idx.add_secrets(f"c{i}", "password", str(100_000 + i))
    assert len(idx.secrets()) == 2_000 and idx.truncated is False
    assert transforms(idx, "ref 100000") == {("c0", Transform.SECRET)}
    idx.add_secrets("last", "password", "555555")
    assert idx.truncated is True
    assert transforms(idx, "ref 100000") == set()
    assert transforms(idx, "ref 555555") == {("last", Transform.SECRET)}


def test_past_its_secret_bound_the_index_forgets_the_oldest_secret() -> None:
    """At ``max_secrets`` every secret is kept; one more forgets the oldest, keeps the newest, and is reported."""
    idx = FragmentIndex(max_secrets=2)
    idx.add_secrets("c1", "password", CODE)
    idx.add_secrets("c2", "password", "390577")
    assert idx.truncated is False
    assert transforms(idx, f"{CODE} 390577") == {("c1", Transform.SECRET), ("c2", Transform.SECRET)}
    idx.add_secrets("c3", "password", "553107")
    assert idx.truncated is True
    assert transforms(idx, f"{CODE} 390577 553107") == {("c2", Transform.SECRET), ("c3", Transform.SECRET)}


# --- what the agent sent before -----------------------------------------------------------------------------


def test_a_value_the_agent_sent_hides_only_content_that_arrives_later() -> None:
    """A value the agent sent (time 0 by default) is no evidence in a later result, but is in one of the same
    time."""
    later = FragmentIndex()
    later.exclude(ONE_KGRAM, typed_by_user=False)
    later.add("c1", ONE_KGRAM, at=1)
    assert transforms(later, ONE_KGRAM) == set()
    same_time = FragmentIndex()
    same_time.exclude(ONE_KGRAM, typed_by_user=False)
    same_time.add("c1", ONE_KGRAM)
    assert transforms(same_time, ONE_KGRAM) == {("c1", Transform.VERBATIM)}


DISTINCT = "abcdefghijklmnopqrstuvwxyz0123456789abc"  # 39 characters: 20 distinct k-grams


def test_values_the_agent_sent_are_remembered_up_to_four_times_the_fingerprint_bound() -> None:
    """Sent values are remembered while fewer than 4 x ``max_fingerprints`` k-grams are; past that, a sent
    value no longer hides private content that arrives later."""
    below = FragmentIndex(max_fingerprints=5)
    below.exclude(DISTINCT[:-1], typed_by_user=False)  # 19 k-grams: room for one more value
    below.exclude(ONE_KGRAM, typed_by_user=False)
    below.add("c1", ONE_KGRAM, at=1)
    assert transforms(below, ONE_KGRAM) == set()
    full = FragmentIndex(max_fingerprints=5)
    full.exclude(DISTINCT, typed_by_user=False)  # 20 k-grams: full
    full.exclude(ONE_KGRAM, typed_by_user=False)
    full.add("c1", ONE_KGRAM, at=1)
    assert transforms(full, ONE_KGRAM) == {("c1", Transform.VERBATIM)}


# --- what joins two pieces ------------------------------------------------------------------------------------


def test_content_inside_this_call_is_verbatim_even_right_after_what_was_sent_before() -> None:
    """Content starting exactly where earlier calls' text ends is reported as verbatim, not also as split."""
    idx = content_index(ONE_KGRAM)
    assert transforms(idx, ONE_KGRAM, previous=norm("nothing to do with it")) == {("c1", Transform.VERBATIM)}


def test_content_ending_exactly_where_earlier_calls_ended_is_not_told_again() -> None:
    """Content that earlier calls sent whole, up to the end of what they sent, is not reported again."""
    idx = content_index(ONE_KGRAM)
    assert transforms(idx, "lunch at noon?", previous=norm(ONE_KGRAM)) == set()


def test_a_split_after_content_sent_earlier_is_still_found() -> None:
    """A span joining two calls is found even when earlier, unjoined content of another result comes first."""
    idx = content_index(ONE_KGRAM, REPORT)
    previous = norm(ONE_KGRAM) + norm("and the merger w")
    assert transforms(idx, "ith Acme closes on Friday", previous=previous) == {("c2", Transform.SPLIT)}


def test_a_span_joining_the_last_two_arguments_is_found() -> None:
    """Content split between a call's last two arguments is found, whatever arguments come before them."""
    idx = content_index(ADDRESS)
    fields = ("lunch at noon", "see you soon", "Dalton Street 123 New", "York NY 10001")
    assert transforms(idx, *fields, previous=norm("hello")) == {("c1", Transform.SPLIT)}


def test_the_fields_of_the_first_external_call_are_not_joined_but_later_calls_are() -> None:
    """Text cut between the fields of a session's first external call is not joined (an agent filling a form
    from a listed record copies its fields one per argument); once something was sent, a call's fields are
    joined with what went before and with each other."""
    idx = content_index(ADDRESS)
    assert transforms(idx, "Dalton Street 123 New", "York NY 10001") == set()
    assert transforms(idx, "Dalton Street 123 New", "York NY 10001", previous=norm("hello")) == {
        ("c1", Transform.SPLIT)
    }


# --- secrets ----------------------------------------------------------------------------------------------------


def test_a_secret_inside_content_already_matched_is_not_reported_twice() -> None:
    """A code inside a verbatim copy of its result is reported once, by the copy."""
    mail = f"Your Northbank verification code is {CODE}. It expires in 10 minutes."
    idx = FragmentIndex()
    idx.add("c1", mail)
    idx.add_secrets("c1", "body", mail)
    assert transforms(idx, mail) == {("c1", Transform.VERBATIM)}


def test_a_secret_outside_the_content_matched_is_reported_too() -> None:
    """A secret of another result, beside a verbatim copy that does not contain it, is reported as well."""
    idx = content_index(REPORT)
    idx.add_secrets("c2", "password", CODE)
    assert transforms(idx, f"the merger with Acme closes on Friday; use {CODE}") == {
        ("c1", Transform.VERBATIM),
        ("c2", Transform.SECRET),
    }


def test_a_secret_the_user_typed_does_not_hide_the_next_one() -> None:
    """A secret the user typed is not evidence, and the secrets indexed after it are still searched."""
    idx = secret_index(CODE, "390577")
    idx.exclude(f"my code is {CODE}", typed_by_user=True)
    assert transforms(idx, f"{CODE} and 390577") == {("c2", Transform.SECRET)}


def test_a_secret_known_by_what_it_was_written_as_is_listed_and_reported_as_written() -> None:
    """A mostly-symbol password is listed and reported as written; secrets indexed after it are still searched."""
    idx = secret_index(SYMBOLS, CODE)
    assert idx.secrets() == [SYMBOLS, CODE]
    data = b"\xff\xfe\xfd" + SYMBOLS.encode() + b"\xfc\xfb"
    assert found(idx, "blob " + base64.b64encode(data).decode()) == {("c1", SYMBOLS, Transform.BASE64)}
    assert found(idx, f"fyi {CODE}") == {("c2", CODE, Transform.SECRET)}


def test_a_password_of_exactly_eight_characters_mostly_symbols_is_indexed() -> None:
    """A password of 8 characters with too few letters and digits to compare is still found encoded."""
    password = "?>?>Zz9~"
    idx = secret_index(password)
    data = b"\xff\xfe\xfd" + password.encode() + b"\xfc\xfb"
    assert found(idx, "blob " + base64.b64encode(data).decode()) == {("c1", password, Transform.BASE64)}
    assert secret_index("?>?>Zz9").secrets() == []


def test_an_encoded_secret_is_reported_by_its_normalised_form() -> None:
    """A secret found only by its encoding inside binary data is reported as the normalised secret."""
    idx = secret_index(PASSWORD)
    data = b"\xff\xfe\xfd" + PASSWORD.encode() + b"\xfc\xfb"
    assert found(idx, "blob " + base64.b64encode(data).decode()) == {("c1", "kq7vlp2xwz", Transform.BASE64)}


def test_a_secret_hex_encoded_inside_binary_data_is_found_in_any_case() -> None:
    """The hex of a secret inside binary data is found, upper or lower case, and reported as hex."""
    idx = secret_index(PASSWORD)
    hexed = binascii.hexlify(b"\xff\xfe" + PASSWORD.encode() + b"\xfc").decode()
    for blob in (hexed, hexed.upper()):
        assert found(idx, "blob " + blob) == {("c1", "kq7vlp2xwz", Transform.HEX)}, blob


MANY = [str(100_000 + 7 * i) for i in range(400)]
PADDING = "padding " * 2000


def test_with_many_secrets_hex_inside_binary_data_is_still_found_as_hex() -> None:
    """Past the work bound (lookup by prefix), the hex of a secret in binary data is found in any case, as hex."""
    idx = secret_index(*MANY, PASSWORD)
    hexed = binascii.hexlify(b"\xff\xfe" + PASSWORD.encode() + b"\xfc").decode()
    for blob in (hexed, hexed.upper()):
        assert transforms(idx, PADDING + blob) == {(f"c{len(MANY) + 1}", Transform.HEX)}, blob


def test_with_many_secrets_an_encoding_that_ends_the_argument_is_found() -> None:
    """Past the work bound, an encoded secret whose last characters end the argument is still found."""
    idx = secret_index(*MANY)
    blob = base64.b64encode(b"x" + MANY[7].encode()).decode().rstrip("=")
    assert transforms(idx, PADDING + blob[:-1]) == {("c8", Transform.BASE64)}
    assert transforms(secret_index(MANY[7]), "x " + blob[:-1]) == {("c1", Transform.BASE64)}


def test_a_call_without_argument_text_finds_nothing() -> None:
    """A call with no argument text, or only empty ones, finds nothing (and does not fail)."""
    idx = secret_index(CODE)
    assert idx.search([]) == []
    assert idx.search([""]) == []


@pytest.mark.parametrize(("previous", "sent"), [("ok77120", "4 bye"), ("ok7", "71204 bye"), ("hi 771", "204")])
def test_a_secret_split_anywhere_between_two_calls_is_found(previous: str, sent: str) -> None:
    """A secret split between what earlier calls sent and this call is found, from one character on either side."""
    idx = secret_index(CODE)
    assert found(idx, sent, previous=norm(previous)) == {("c1", CODE, Transform.SPLIT)}


# --- what a match reports ---------------------------------------------------------------------------------------


def test_touching_fragments_of_one_result_are_one_match() -> None:
    """Two pieces of one result sent back to back are reported as one fragment."""
    idx = FragmentIndex()
    idx.add("c1", ONE_KGRAM)
    idx.add("c1", OTHER_KGRAM)
    text = f"{ONE_KGRAM} {OTHER_KGRAM}"
    assert idx.search([text]) == [FragmentMatch("c1", text, Transform.VERBATIM)]


def test_fragments_of_two_results_are_both_reported() -> None:
    """A call copying two results reports a fragment of each."""
    idx = content_index(REPORT, ONE_KGRAM)
    assert transforms(idx, f"the merger with Acme closes on Friday; {ONE_KGRAM}") == {
        ("c1", Transform.VERBATIM),
        ("c2", Transform.VERBATIM),
    }


def test_the_same_fragment_sent_twice_is_reported_once() -> None:
    """The same content twice in a call's text is one match."""
    idx = content_index(ONE_KGRAM)
    twice = f"{ONE_KGRAM} and {ONE_KGRAM}"
    assert idx.search([twice]) == [FragmentMatch("c1", ONE_KGRAM, Transform.VERBATIM)]


@pytest.mark.parametrize(
    ("argument", "snippet"),
    [
        ("x" * 100 + "quarterlyrevenuerose" + "y" * 100, "x" * 64 + "quarterlyrevenuerose" + "y" * 64),
        ("xx" + "quarterlyrevenuerose" + "yy", "xxquarterlyrevenueroseyy"),
        ("see: abcquarterly revenue rose", "abcquarterly revenue rose"),
        ("quarterly revenue rosex next week", "quarterly revenue rosex"),
    ],
)
def test_a_match_is_reported_by_its_whole_words_within_a_bound(argument: str, snippet: str) -> None:
    """The snippet of a match is widened to whole words, by at most 64 characters each side."""
    assert content_index(ONE_KGRAM).search([argument]) == [FragmentMatch("c1", snippet, Transform.VERBATIM)]
