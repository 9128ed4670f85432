"""``monitor.classify._vocabulary``: one vocabulary of tool words, and every reader's set drawn from it."""

from collections import Counter

import pytest

from monitor.classify import _vocabulary as vocabulary
from monitor.classify._effects import EFFECT_SIGNALS
from monitor.classify._heuristics import HEURISTICS, Where
from monitor.classify._vocabulary import (
    DESTROYING,
    DESTRUCTIVE_VERBS,
    IRREVERSIBLE_VERBS,
    LINT_DESTRUCTIVE_WORDS,
    LINT_NETWORK_WORDS,
    LINT_READ_WORDS,
    LINT_UNINFLECTED,
    LINT_WRITE_WORDS,
    PATH_WRITE_VERBS,
    READ_NAME_WORDS,
    SEND_NAME_WORDS,
    TOOL_WORDS,
    WRITE_NAME_VERBS,
    inflect_words,
    pick_words,
    split_words,
)
from monitor.lint import DestructiveNameNotDestructive, NetworkNameClosedWorld, ReadNameNotReadOnly

PARTS = [
    "READ_VERBS",
    "QUERY_VERBS",
    "COMPUTE_VERBS",
    "REPORT_NOUNS",
    "ERASE_VERBS",
    "REMOVE_VERBS",
    "UNDO_VERBS",
    "END_VERBS",
    "CREATE_VERBS",
    "CHANGE_VERBS",
    "MOVE_VERBS",
    "VERSION_VERBS",
    "DEPLOY_VERBS",
    "GRANT_VERBS",
    "SWITCH_VERBS",
    "TASK_VERBS",
    "UI_VERBS",
    "VERB_OR_NOUN",
    "SEND_VERBS",
    "MESSAGE_NOUNS",
    "OPEN_WEB_WORDS",
    "FETCH_VERBS",
    "OUTBOUND_NOUNS",
    "SEND_NAMES",
    "EXECUTE_VERBS",
    "LAUNCH_VERBS",
    "EXECUTE_NOUNS",
]
LINT_SETS = [LINT_DESTRUCTIVE_WORDS, LINT_READ_WORDS, LINT_WRITE_WORDS, LINT_NETWORK_WORDS]
CLASSIFY_SETS = [READ_NAME_WORDS, DESTRUCTIVE_VERBS, IRREVERSIBLE_VERBS, WRITE_NAME_VERBS, PATH_WRITE_VERBS]


def _is_inflection_of_a_tool_word(word: str) -> bool:
    return any(word in inflect_words({base}, ing={base}) for base in TOOL_WORDS)


# -- the inflection function ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("word", "forms"),
    [
        ("delete", {"delete", "deletes", "deleting"}),
        ("drop", {"drop", "drops", "dropping"}),
        ("cancel", {"cancel", "cancels", "canceling", "cancelling"}),
        ("search", {"search", "searches", "searching"}),
        ("push", {"push", "pushes", "pushing"}),
        ("apply", {"apply", "applies", "applying"}),
        ("destroy", {"destroy", "destroys", "destroying"}),
        ("refund", {"refund", "refunds", "refunding"}),
        ("edit", {"edit", "edits", "editing"}),
        ("notify", {"notify", "notifies", "notifying"}),
    ],
)
def test_inflect_adds_the_s_and_ing_forms(word: str, forms: set[str]) -> None:
    assert inflect_words({word}, ing={word}) == forms


def test_inflect_adds_ing_only_where_asked_and_no_s_to_bare_words() -> None:
    assert inflect_words({"delete", "send"}, ing={"delete", "fetch"}) == {
        "delete",
        "deletes",
        "deleting",
        "send",
        "sends",
    }
    assert inflect_words({"rm", "delete"}, bare={"rm"}) == {"rm", "delete", "deletes"}
    assert inflect_words({"url", "webhook"}) == {"url", "urls", "webhook", "webhooks"}


def test_pick_words_never_adds_a_word() -> None:
    assert pick_words(split_words("a b c"), "a c") == {"a", "c"}
    with pytest.raises(ValueError, match="annihilate"):
        pick_words(DESTROYING, "delete annihilate")


# -- one vocabulary -----------------------------------------------------------------------------------------


def test_each_word_is_in_one_part_and_the_parts_make_the_vocabulary() -> None:
    counts = Counter(word for name in PARTS for word in getattr(vocabulary, name))
    assert [word for word, n in counts.items() if n > 1] == []
    assert set(counts) == TOOL_WORDS


def test_every_classify_set_is_drawn_from_the_vocabulary() -> None:
    for words in CLASSIFY_SETS:
        assert words <= TOOL_WORDS
    for signal in EFFECT_SIGNALS:
        assert signal.verbs <= TOOL_WORDS, signal.id
    for h in HEURISTICS:
        # the name words of what a tool does; stores and other people's content are the heuristics' own
        if h.field is Where.NAME and h.id not in {"private-store-name", "untrusted-name"}:
            assert h.words <= TOOL_WORDS, h.id
        for field, words in (*h.also, *h.unless):
            if field is Where.NAME:
                assert words <= TOOL_WORDS, h.id


def test_every_lint_word_is_an_inflection_of_a_vocabulary_word() -> None:
    for words in LINT_SETS:
        assert [w for w in words if not _is_inflection_of_a_tool_word(w)] == []
        assert LINT_UNINFLECTED & words <= TOOL_WORDS


def test_the_lint_checks_read_the_vocabulary() -> None:
    assert DestructiveNameNotDestructive.words is LINT_DESTRUCTIVE_WORDS
    assert ReadNameNotReadOnly.words is LINT_READ_WORDS
    assert NetworkNameClosedWorld.words is LINT_NETWORK_WORDS


# -- what each reader reads ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("words", "present", "absent"),
    [
        (READ_NAME_WORDS, "get list search lookup query check convert summary logs", "delete send commit"),
        (LINT_READ_WORDS, "get gets searches lookup views retrieves", "lookups check summary status"),
        (IRREVERSIBLE_VERBS, "delete destroy drop purge erase wipe truncate overwrite shred rmdir unlink", "remove"),
        (DESTRUCTIVE_VERBS, "delete wipe shred remove rm trash", "cancel refund revoke kill"),
        (
            LINT_DESTRUCTIVE_WORDS,
            "delete deletes deleting wipes remove rm del prune cancels cancelling refunding revokes kills unpublish",
            "shred trash clear revert destroying unpublishes",
        ),
        (WRITE_NAME_VERBS, "create update delete clear cancel rebase approve toggle book click send exec", "commit"),
        (PATH_WRITE_VERBS, "write create edit save upload commit push replace install", "delete move send"),
        (LINT_WRITE_WORDS, "creates updates writes patch dismiss runs commits deletes", "patches copy clone"),
        (SEND_NAME_WORDS, "send publish share pay tweet reply push webhook http create_pull_request", "post fetch"),
        (
            LINT_NETWORK_WORDS,
            "send sending posts posting fetches http url urls webhooks emails downloads browse website sms",
            "share websites crawl",
        ),
    ],
)
def test_each_reader_reads_its_words(words: frozenset[str], present: str, absent: str) -> None:
    assert sorted(split_words(present) - words) == []
    assert sorted(split_words(absent) & words) == []


def test_lint_destructive_words_are_wider_than_the_effects_and_all_are_writes() -> None:
    # lint asks for destructiveHint on any destructive update; effects ask the user before data is lost
    assert {"cancel", "refund", "revoke"} <= LINT_DESTRUCTIVE_WORDS
    assert not {"cancel", "refund", "revoke"} & DESTRUCTIVE_VERBS
    assert IRREVERSIBLE_VERBS <= DESTRUCTIVE_VERBS
    assert LINT_DESTRUCTIVE_WORDS <= LINT_WRITE_WORDS
