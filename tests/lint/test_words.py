"""``monitor.lint._words``: the lead of a description (its words: tests/classify/test_vocabulary.py)."""

from __future__ import annotations

from monitor.lint import lead_words


def test_lead_words_are_the_first_sentence() -> None:
    assert lead_words("Delete the file. Then read it.") == ["delete", "the", "file"]
