from typing import Any

from monitor.classify._heuristics import HEURISTICS, Heuristic, Where, match_heuristics, tokenize_name
from monitor.models import Leg, ToolDefinition, parse_tool

P, U, X = Leg.PRIVATE_DATA, Leg.UNTRUSTED_CONTENT, Leg.EXTERNAL_COMMUNICATION


def tool(name: str, description: str = "", annotations: dict[str, Any] | None = None, **props: str) -> ToolDefinition:
    """A tool definition; each keyword is an input-schema property and its JSON type."""
    raw: dict[str, Any] = {
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": {k: {"type": v} for k, v in props.items()}},
    }
    if annotations is not None:
        raw["annotations"] = annotations
    parsed, _ = parse_tool(raw)
    assert parsed is not None
    return parsed


def present(t: ToolDefinition) -> dict[Leg, str]:
    return match_heuristics(HEURISTICS, t.name, t)


def absent(t: ToolDefinition) -> dict[Leg, str]:
    return match_heuristics(HEURISTICS, t.name, t, absent=True)


def test_tokenize_splits_snake_kebab_dotted_and_camel_case() -> None:
    assert tokenize_name("send_gmail-Message.v2") == ["send", "gmail", "message", "v2"]
    assert tokenize_name("createPullRequest") == ["create", "pull", "request"]


def test_a_new_detector_is_a_line_of_data() -> None:
    custom = (*HEURISTICS, Heuristic("herbarium-name", Leg.PRIVATE_DATA, Where.NAME, frozenset({"herbarium"})))
    assert match_heuristics(custom, "query_herbarium", None)[Leg.PRIVATE_DATA] == "herbarium-name:herbarium"
    assert Leg.PRIVATE_DATA not in match_heuristics(HEURISTICS, "query_herbarium", None)


def test_also_and_unless_are_data_too() -> None:
    needs = Heuristic("h", P, Where.NAME, frozenset({"herbarium"}), also=((Where.SCHEMA, frozenset({"sheet"})),))
    assert match_heuristics([needs], "herbarium", tool("herbarium", sheet="string")) == {P: "h:herbarium"}
    assert match_heuristics([needs], "herbarium", tool("herbarium")) == {}
    vetoed = Heuristic("h", P, Where.NAME, frozenset({"herbarium"}), unless=((Where.NAME, frozenset({"burn"})),))
    assert match_heuristics([vetoed], "burn_herbarium", None) == {}


def test_matches_name_words_not_substrings() -> None:
    assert Leg.PRIVATE_DATA not in match_heuristics(HEURISTICS, "get_current_day", None)
    assert match_heuristics(HEURISTICS, "send_email", None)[Leg.EXTERNAL_COMMUNICATION] == "external-name:email"


# -- P ------------------------------------------------------------------------------------------------------


def test_reads_of_account_stores_are_private() -> None:
    for name in ("list_projects", "get_mappings", "pods_list", "search_nodes", "list_indices", "read_graph"):
        assert present(tool(name))[P].startswith("private-store-name:"), name


def test_a_write_to_a_store_returns_no_private_data_but_an_edit_does() -> None:
    assert P not in present(tool("write_file", path="string", content="string"))
    assert P not in present(tool("git_commit", repo_path="string", message="string"))
    assert present(tool("edit_file", path="string"))[P] == "private-store-name:file"


def test_a_noun_that_is_also_a_verb_is_read_when_a_read_word_comes_with_it() -> None:
    assert present(tool("get_commit", owner="string", sha="string"))[P] == "private-store-name:commit"
    assert present(tool("currents-get-run-details", runId="string"))[P] == "private-scope-schema:id"
    assert P not in present(tool("stop_search", sessionId="string"))


def test_schema_scope_words_come_from_text_properties_only() -> None:
    assert present(tool("git_status", repo_path="string"))[P] == "private-scope-schema:path"
    assert present(tool("describe", projectId="string"))[P] == "private-scope-schema:id"
    assert P not in present(tool("browser_tabs", index="integer", action="string"))
    assert present(tool("search", index="string"))[P] == "private-scope-schema:index"


def test_a_schema_type_that_is_not_a_string_is_read_as_may_hold_text() -> None:
    for odd in ({"anyOf": ["string"]}, [["string"], "integer"], [{"x": 1}], 7):
        raw = {"name": "describe", "inputSchema": {"type": "object", "properties": {"projectId": {"type": odd}}}}
        parsed, _ = parse_tool(raw)
        assert parsed is not None
        assert present(parsed)[P] == "private-scope-schema:id", odd  # never a crash, and cautious
    assert P not in present(tool("describe", projectId=["integer", "null"]))  # type: ignore[arg-type]


def test_running_code_or_commands_reaches_private_data_and_sends() -> None:
    for t in (tool("execute_sql", query="string"), tool("start_process", command="string")):
        assert P in present(t) and X in present(t), t.name
    assert present(tool("query_logs", sql="string"))[X] == "external-execute-schema:sql"


def test_a_description_of_history_is_private() -> None:
    assert present(tool("recent_calls", "Returns the local tool call history"))[P] == "private-description:history"


# -- X present ----------------------------------------------------------------------------------------------


def test_destination_words_of_schema_properties_send() -> None:
    assert present(tool("register", webhook_url="string"))[X] == "external-schema:url"
    assert present(tool("get_page", url="string"))[X] == "external-schema:url"


def test_contact_properties_are_lookup_keys_for_a_read() -> None:
    assert present(tool("notify_user", to="string"))[X] == "external-name:notify"
    assert present(tool("forward", to="string"))[X] == "external-name:forward"
    assert present(tool("dispatch", to="string"))[X] == "external-schema:to"
    assert X not in present(tool("search_contacts", email="string"))
    assert X not in present(tool("get_metrics", to="string"))


def test_a_message_noun_sends_unless_the_name_reads_or_removes() -> None:
    assert present(tool("post_message"))[X] == "external-name:message"
    assert X not in present(tool("get_message"))
    assert X not in present(tool("delete_email"))


def test_a_search_of_the_open_web_sends_its_query() -> None:
    assert present(tool("web_search", query="string"))[X] == "open-web-name:web"
    assert (
        present(tool("search", "Search the internet for pages", query="string"))[X] == "open-web-description:internet"
    )


# -- X absent -----------------------------------------------------------------------------------------------


def test_a_read_only_name_says_x_is_absent() -> None:
    assert absent(tool("list_issues", owner="string"))[X] == "read-only-name:list"
    assert absent(tool("start_search", path="string"))[X] == "read-only-name:search"


def test_a_write_verb_or_run_vetoes_the_read_only_name() -> None:
    assert X not in absent(tool("get_or_create_issue", owner="string"))
    assert X not in absent(tool("run_query", owner="string"))


def test_hints_that_the_tool_writes_veto_the_read_only_name() -> None:
    assert X not in absent(tool("get_weather", annotations={"readOnlyHint": False}))
    assert X not in absent(tool("get_weather", annotations={"destructiveHint": True}))
    assert X in absent(tool("get_weather", annotations={"readOnlyHint": True}))


def test_a_local_path_write_says_x_is_absent() -> None:
    assert absent(tool("write_file", path="string", content="string"))[X] == "local-path-write:path"
    assert X not in absent(tool("create_or_update_file", owner="string", repo="string", path="string"))
    assert X not in absent(tool("run_script", path="string"))


def test_a_control_only_tool_without_content_says_x_is_absent() -> None:
    assert absent(tool("kill_process", pid="integer"))[X] == "control-only-name:kill"
    assert absent(tool("star_repository", owner="string", repo="string"))[X] == "control-only-name:star"
    assert X not in absent(tool("delete_file", owner="string", message="string"))
    assert X not in absent(tool("delete_and_move_page", id="string"))
