from monitor.classify._heuristics import HEURISTICS, Heuristic, Where, match_heuristics, tokenize_name
from monitor.models._legs import Leg


def test_tokenize_splits_snake_kebab_dotted_and_camel_case() -> None:
    assert tokenize_name("send_gmail-Message.v2") == ["send", "gmail", "message", "v2"]
    assert tokenize_name("createPullRequest") == ["create", "pull", "request"]


def test_a_new_detector_is_a_line_of_data() -> None:
    custom = (*HEURISTICS, Heuristic("crm-name", Leg.PRIVATE_DATA, Where.NAME, frozenset({"crm"})))
    assert match_heuristics(custom, "query_crm", None)[Leg.PRIVATE_DATA] == "crm-name:crm"
    assert Leg.PRIVATE_DATA not in match_heuristics(HEURISTICS, "query_crm", None)


def test_matches_name_words_not_substrings() -> None:
    assert Leg.PRIVATE_DATA not in match_heuristics(HEURISTICS, "get_current_day", None)
    assert match_heuristics(HEURISTICS, "send_email", None)[Leg.EXTERNAL_COMMUNICATION] == "external-name:email"
