"""``monitor.lint._words``: the lead of a description, and the word lists."""

from __future__ import annotations

from monitor.lint import DESTRUCTIVE_WORDS, WRITE_WORDS, lead_words


def test_lead_words_are_the_first_sentence() -> None:
    assert lead_words("Delete the file. Then read it.") == ["delete", "the", "file"]


def test_destructive_words_are_write_words() -> None:
    assert DESTRUCTIVE_WORDS <= WRITE_WORDS
