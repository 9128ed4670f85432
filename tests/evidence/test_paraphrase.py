"""Paraphrase evidence: private content restated in other words, found by its salient tokens."""

from __future__ import annotations

import tracemalloc
from urllib.parse import quote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.evidence import SalientIndex, SalientKind, extract_salient_tokens
from monitor.models import Transform

SALARY = "Q3 salary bands: engineering 180-240k, design 150-190k (confidential)"
NOTE = "Meeting with Acme Corp about Project Nightingale, budget $2.4M, contact ref ACC-88412"
LUNCH = "Hi all, team lunch this Friday at noon at Luigi's Trattoria. Please RSVP by Wednesday. Cheers, Dana"


def indexed(**sources: str) -> SalientIndex:
    idx = SalientIndex()
    for call_id, text in sources.items():
        idx.add(call_id, text)
    return idx


def found(idx: SalientIndex, *texts: str) -> set[str]:
    return {m.from_call for m in idx.search(texts)}


def keys(text: str) -> dict[str, tuple[SalientKind, int]]:
    return {t.key: (t.kind, t.weight) for t in extract_salient_tokens(text)}


# The scenarios the score must get right.


def test_salary_bands_restated_in_a_pull_request_are_found() -> None:
    idx = indexed(c1=SALARY)
    assert found(idx, "This documents the salary bands 180-240k for engineering") == {"c1"}
    assert found(idx, "Fixes a typo in the README") == set()


def test_a_note_restated_with_its_budget_and_reference_is_found() -> None:
    idx = indexed(c1=NOTE)
    [match] = idx.search(["Heads up: Nightingale budget is 2.4M (ref ACC-88412)"])
    assert match.from_call == "c1" and match.transform is Transform.PARAPHRASE
    assert match.text == "Nightingale, 2.4M, ACC-88412"
    assert found(idx, "Let's meet on Tuesday") == set()


def test_common_numbers_alone_are_not_evidence() -> None:
    idx = indexed(c1="In 2024 we shipped 10 releases to 100 customers.")
    assert found(idx, "Our 2024 roadmap") == set()
    assert found(idx, "2024: 10 releases, 100 customers") == set()
    idx = indexed(c1="The Fernhollow audit closed in 2024")
    assert found(idx, "Fernhollow audit, 2024") == set()  # a year is weak


def test_what_the_user_typed_is_never_evidence() -> None:
    idx = indexed(c1=NOTE)
    idx.exclude("Can you look up ACC-88412 for me?")
    assert found(idx, "ref ACC-88412, budget 2.4M") == set()
    assert found(indexed(c1=NOTE), "ref ACC-88412, budget 2.4M") == {"c1"}
    idx = indexed(c1=SALARY)
    idx.exclude("what are our salary bands?")
    assert found(idx, "salary bands 180-240k") == set()


def test_an_amount_restated_without_thousands_separators_counts() -> None:
    idx = indexed(c1="Checking account 4471-0098-3321: available balance 1,250.75 USD")
    [match] = idx.search(["her balance is 1250.75 (account 447100983321)"])
    assert match.text == "1250.75, 447100983321"
    assert found(idx, "her balance is 1250.75") == set()


def test_a_benign_summary_of_weak_words_is_not_evidence() -> None:
    idx = indexed(c1=LUNCH)
    assert found(idx, "Summary: team lunch on Friday at noon at Luigi's Trattoria, RSVP by Wednesday.") == set()


# Each scoring rule, pinned.


def test_one_strong_token_alone_is_not_enough() -> None:
    idx = indexed(c1=NOTE)
    assert found(idx, "see ACC-88412") == set()
    assert found(idx, "see ACC-88412 re Nightingale") == {"c1"}


def test_weak_tokens_never_pass_however_many() -> None:
    idx = indexed(c1="Zephyrine and Quillfeather met the Marrowby trustees at Lakeside Pavilion near Thornbury.")
    restated = "Zephyrine, Quillfeather, Marrowby, Thornbury: trustees at Lakeside Pavilion"
    assert found(idx, restated) == set()


def test_a_medium_token_needs_more_than_one_weak_token() -> None:
    idx = indexed(c1="Surgery for Ms Okonkwo-Bassey booked 2026-03-14 at the Harrowgate clinic, deposit $45.")
    assert found(idx, "Harrowgate on 2026-03-14") == set()  # date (2) + rare word (1)
    assert found(idx, "Harrowgate on 2026-03-14, $45 paid") == {"c1"}  # date (2) + amount (2)
    assert found(idx, "on 2026-03-14 at Harrowgate, for Okonkwo") == {"c1"}  # date (2) + two rare words (1 + 1)


def test_identifiers_weigh_more_than_words_and_a_single_digit_does_not_make_one_strong() -> None:
    assert keys("ticket INV-20931")["inv20931"] == (SalientKind.IDENTIFIER, 3)
    assert keys("runs on python3")["python3"] == (SalientKind.IDENTIFIER, 1)
    assert keys("code X9Y8") == {} and "x9y8z" in keys("code X9Y8Z")
    idx = indexed(c1="The Brackenridge build of python3 for INV-20931")
    assert found(idx, "Brackenridge INV-20931") == {"c1"}
    assert found(idx, "Brackenridge python3") == set()


def test_numbers_weigh_by_significant_digits_and_marks() -> None:
    got = keys("paid $1,234.56, up 4.5% to 45 units; 180k budget; 2024; 100 people; 0.05 margin; 1500 units")
    assert got["1234.56"] == (SalientKind.NUMBER, 3)
    assert got["4.5"] == (SalientKind.NUMBER, 2)
    assert got["180000"] == (SalientKind.NUMBER, 2)
    assert got["45"] == (SalientKind.NUMBER, 1)
    assert got["1500"] == (SalientKind.NUMBER, 1)
    assert got["2024"] == (SalientKind.NUMBER, 1)
    assert "100" not in got and "0.05" not in got
    assert keys("255 units") == {"255": (SalientKind.NUMBER, 3)}
    assert keys("account 0012345") == {"0012345": (SalientKind.NUMBER, 3)}  # leading zeros are kept
    assert keys("in 2019-2024")["2019-2024"] == (SalientKind.NUMBER, 1)
    assert keys("45-50 people") == {"45": (SalientKind.NUMBER, 1)}  # a range needs two tokens
    assert keys("from 12:00 - 15:00, or 9:30am to 11:45") == {}  # times of day


def test_a_token_weighs_what_its_weaker_form_weighs() -> None:
    idx = indexed(c1="Retreat deposit: $45, due 2026-05-02")
    assert found(idx, "deposit 45, due 2026-05-02") == set()  # a bare 45 is weak: 1 + 2
    assert found(idx, "deposit $45, due 2026-05-02") == {"c1"}  # 2 + 2


def test_a_fact_counts_once() -> None:
    idx = indexed(c1="Ref ACC-88412 is open.")
    assert found(idx, "ACC-88412 (that is, account 88412)") == set()
    idx = indexed(c1="Project Nightingale kicks off 2026-03-14 in Thornbury")
    assert found(idx, "Project Nightingale on 2026-03-14") == set()  # the phrase and its word are one fact
    assert found(idx, "Project Nightingale, Thornbury, 2026-03-14") == {"c1"}
    idx = indexed(c1="Salaries: 180-240k")
    assert found(idx, "Range 180-240k, i.e. 180k to 240k") == set()
    idx = indexed(c1="Visits on 2026-03-04 and 2026-04-03")
    assert found(idx, "visit on 03/04/2026") == set()  # one date, however it reads


def test_range_endpoints_and_identifier_numbers_are_found_when_restated_apart() -> None:
    assert found(indexed(c1=SALARY), "engineering pays between 180k and 240k") == {"c1"}
    assert found(indexed(c1=NOTE), "account 88412 and the Nightingale budget") == {"c1"}
    assert found(indexed(c1=NOTE), "Nightingale, ref ACCT-88412") == {"c1"}
    assert found(indexed(c1=SALARY), "offers of 180-250k and 240-300k") == {"c1"}


def test_score_is_per_source() -> None:
    idx = indexed(c1="Ref ACC-88412", c2="Codename Nightingale")
    assert found(idx, "ACC-88412 Nightingale") == set()
    idx.add("c3", "Nightingale: ACC-88412")
    [match] = idx.search(["ACC-88412 Nightingale"])
    assert match.from_call == "c3"


def test_what_the_agent_sent_before_the_result_arrived_is_not_evidence_against_it() -> None:
    idx = SalientIndex()
    idx.exclude("lookup ACC-88412", at=1)
    idx.add("c1", NOTE, at=2)
    assert found(idx, "ref ACC-88412, budget 2.4M") == set()
    later = SalientIndex()
    later.add("c1", NOTE, at=2)
    later.exclude("lookup ACC-88412", at=3)
    assert found(later, "ref ACC-88412, budget 2.4M") == {"c1"}


# Token kinds and normalisation.


def test_token_kinds() -> None:
    got = keys(
        "Project Nightingale: salary bands 180-240k from 2026-03-14, ref a1b2c3d4 and DE89 3704 0044 0532 0130 00"
    )
    assert got["project nightingale"] == (SalientKind.PHRASE, 1)
    assert got["salary bands"] == (SalientKind.PHRASE, 1)
    assert got["nightingale"] == (SalientKind.WORD, 1)
    assert got["180000-240000"] == (SalientKind.NUMBER, 3)
    assert got["2026-03-14"] == (SalientKind.DATE, 2)
    assert got["a1b2c3d4"] == (SalientKind.IDENTIFIER, 3)
    assert got["de89370400440532013000"] == (SalientKind.IDENTIFIER, 3)
    assert "salary" not in got and "q3" not in got and "project" not in got
    assert keys("version 3.11.7 at 10.0.0.12") == {
        "3.11.7": (SalientKind.NUMBER, 1),
        "10.0.0.12": (SalientKind.NUMBER, 1),
    }
    assert keys("sort code 12-34-56, box 1-2-3") == {
        "123456": (SalientKind.IDENTIFIER, 3),
        "123": (SalientKind.IDENTIFIER, 1),
    }
    assert keys("the New York office") == {"new york": (SalientKind.PHRASE, 1)}
    assert keys("the team meeting with Acme about salary, bands") == {}


def test_common_and_short_words_are_not_rare() -> None:
    got = keys("The engineering document was confidential, says Zorg of Quillfeather")
    assert [k for k, (kind, _) in got.items() if kind is SalientKind.WORD] == ["quillfeather"]
    assert keys("Nightingale-related, cross-functional") == {"nightingale": (SalientKind.WORD, 1)}


def test_email_addresses_give_no_tokens() -> None:
    assert keys("write to jonathan.quillfeather2024@brackenridge-mail.example") == {}


def test_numbers_and_identifiers_normalise() -> None:
    assert set(keys("180k")) == set(keys("180,000")) == set(keys("180 thousand")) == {"180000"}
    assert set(keys("$2.4M")) == set(keys("2.4 million")) == set(keys("2,400,000")) == {"2400000"}
    assert set(keys("4111 1111 1111 1111")) == set(keys("4111-1111-1111-1111")) == {"4111111111111111"}
    assert (
        set(keys("\uff21\uff23\uff23\uff0d\uff18\uff18\uff14\uff11\uff12"))
        == set(keys("acc-88412"))
        == set(keys("ACC-88\u200b412"))
    )
    assert set(keys("2026-03-14")) == set(keys("March 14, 2026")) == set(keys("14/03/2026")) == {"2026-03-14"}
    assert set(keys("03/04/2026")) == {"2026-03-04", "2026-04-03"}


def test_a_url_encoded_argument_is_searched() -> None:
    idx = indexed(c1=NOTE)
    encoded = "".join(f"%{b:02X}" for b in b"Nightingale budget 2.4M ref ACC-88412")
    assert found(idx, "https://collect.example/?q=" + encoded) == {"c1"}
    assert found(idx, "https://collect.example/?q=" + quote("budget 2.4M, ref ACC-88412")) == {"c1"}


# Bounds.


def test_a_huge_private_text_is_capped_and_marked_truncated() -> None:
    huge = "".join(f"Ticket INV-{i:05d} for Brackenridge, total ${i}.{i % 100:02d}. " for i in range(10_000))
    huge = (huge * (50_000_000 // len(huge) + 1))[:50_000_000]
    idx = SalientIndex(max_tokens=5_000)
    tracemalloc.start()
    try:
        idx.add("c1", huge)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert idx.truncated
    assert len(idx) <= 5_000
    assert peak < 20_000_000
    idx.add("c2", NOTE)
    assert found(idx, "Nightingale, ref ACC-88412") == {"c2"}


def test_text_past_the_examined_prefix_is_not_indexed_and_says_so() -> None:
    tail = " Nightingale budget $2.4M, ref ACC-88412"
    idx = indexed(c1="the " * 60_000 + tail)
    assert idx.truncated
    assert found(idx, tail) == set()
    assert found(indexed(c1="the " * 1_000 + tail), tail) == {"c1"}


def test_the_token_bound_drops_the_oldest_and_reports_truncation() -> None:
    idx = SalientIndex(max_tokens=10)
    idx.add("c1", " ".join(f"INV-{i:05d}" for i in range(30)))
    assert len(idx) == 10 and idx.truncated
    assert found(idx, "INV-00028 INV-00029") == {"c1"}
    assert found(idx, "INV-00000 INV-00001") == set()
    assert not indexed(c1=NOTE).truncated


def test_a_megabyte_argument_is_searched_to_its_end() -> None:
    # How the search time grows with the argument is measured by bench/bench_paraphrase.py.
    idx = indexed(c1=NOTE, c2=SALARY)
    chunk = "Nothing here but words like Nightingale, 42 apples, ref XYZ-12345 and 2026-01-02. "
    big = chunk * (1_000_000 // len(chunk))
    assert found(idx, big) == set()
    assert found(idx, big + "ACC-88412") == {"c1"}


ADVERSARIAL = [
    "1",
    "a",
    "1-",
    "a-",
    "1.",
    "1,",
    "a.",
    "A1",
    "1 ",
    "$1",
    "1k",
    "a@",
    "a.b@",
    "DE89 ",
    "1/",
    "Mar 1 ",
    "Ab ",
    "1,000,",
    "1-1 ",
    "\u200b",
    "\uff41\uff11",
]


@pytest.mark.parametrize("atom", ADVERSARIAL)
def test_adversarial_arguments_neither_raise_nor_match(atom: str) -> None:
    # Runs of one short atom are where a backtracking tokenizer would stall; bench/bench_paraphrase.py times them.
    idx = indexed(c1=NOTE)
    text = atom * (100_000 // len(atom))
    assert found(idx, text + "x") == set()
    idx.add("c2", text)
    assert found(idx, "Heads up: Nightingale budget is 2.4M (ref ACC-88412)") == {"c1"}


@settings(max_examples=300, deadline=None)
@given(st.text(), st.text())
def test_add_and_search_never_raise(private: str, argument: str) -> None:
    idx = SalientIndex(max_tokens=50)
    idx.add("c1", private)
    idx.exclude(argument[:3])
    for match in idx.search([argument, private]):
        assert match.from_call == "c1" and match.transform is Transform.PARAPHRASE


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789,.-$%kKmM /@:AaZzéß\u200b\n", max_size=80))
def test_add_and_search_never_raise_on_token_shaped_text(text: str) -> None:
    idx = SalientIndex()
    idx.add("c1", text)
    assert {m.from_call for m in idx.search([text])} <= {"c1"}
