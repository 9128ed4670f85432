import pytest

from monitor.evidence import find_lookalike, skeleton

USER = ["john.smith@gmail.com"]


@pytest.mark.parametrize(
    ("candidate", "why"),
    [
        ("smith@gmail.com", "suffix of the user's address"),
        ("john.smith@gmail.com.evil.example", "the user's address with more after it"),
        ("john.smith@gm\u0430il.com", "Cyrillic a"),
        ("john.smith\u200b@gmail.com", "zero-width space"),
        ("jhon.smith@gmail.com", "two edits"),
        ("john.smyth@gmail.com", "one edit"),
        ("JOHN.SMITH@GMAIL.COM\u200d", "case and a zero-width joiner"),
    ],
)
def test_near_misses_of_a_sanctioned_address_are_lookalikes(candidate: str, why: str) -> None:
    assert find_lookalike(candidate, USER) == "john.smith@gmail.com", why


@pytest.mark.parametrize(
    "candidate",
    ["john.smith@gmail.com", "John.Smith@Gmail.com", "mary.jones@outlook.com", "bob@corp.example", "js@gmail.com"],
)
def test_the_same_address_or_a_different_one_is_not_a_lookalike(candidate: str) -> None:
    assert find_lookalike(candidate, USER) is None


def test_three_edits_apart_is_a_different_address() -> None:
    assert find_lookalike("anna.berg@corp.example", ["emma.borg@corp.example"]) is None
    assert find_lookalike("anna.berg@corp.example", ["enna.berg@corp.example"]) is not None


def test_short_affixes_do_not_make_lookalikes() -> None:
    # "a.io" inside "data.io": too short to tell an imitation from another name
    assert find_lookalike("data.io", ["a.io"]) is None


def test_skeleton_folds_homoglyphs_width_and_hidden_characters() -> None:
    assert skeleton("\uff50\uff41\uff59\uff50\uff41\uff4c.com") == "paypal.com"
    assert skeleton("p\u0430yp\u0430l.com") == "paypal.com"
    assert skeleton("pay\u200bpal.com") == "paypal.com"
