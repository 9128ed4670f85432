from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from monitor.classify import read_result_labels
from monitor.classify._engine import Classifier
from monitor.classify._heuristics import HEURISTICS, match_heuristics
from monitor.models import ALL_LEGS, Leg, LegSource, Posture, ToolContext, parse_tool

P, U, X = Leg.PRIVATE_DATA, Leg.UNTRUSTED_CONTENT, Leg.EXTERNAL_COMMUNICATION


def classify(raw: dict[str, Any], *, trusted: bool = False, posture: Posture = Posture.BALANCED, server: str = "srv"):
    tool, _ = parse_tool(raw)
    assert tool is not None
    return Classifier(posture).classify(ToolContext(server, tool.name, tool, trusted)).classification


def test_no_annotations_from_untrusted_server_gives_u_and_x() -> None:
    c = classify({"name": "weather"})
    assert c.legs == {U, X}
    assert c.provenance[U].source is LegSource.DEFAULT
    assert c.provenance[X].rule == "openWorldHint-absent"


def test_open_world_false_from_untrusted_server_removes_nothing() -> None:
    c = classify({"name": "weather", "annotations": {"openWorldHint": False}})
    assert c.legs == {U, X}
    # The explanation names the hint that was given and not taken, not a missing one.
    assert c.provenance[U].rule == c.provenance[X].rule == "openWorldHint-untrusted"


def test_open_world_false_from_trusted_server_removes_u_and_x() -> None:
    c = classify({"name": "get_weather", "annotations": {"openWorldHint": False}}, trusted=True)
    assert c.legs == frozenset()


def test_open_world_true_is_recorded_as_annotation() -> None:
    c = classify({"name": "fetch", "annotations": {"openWorldHint": True}}, trusted=True)
    assert c.provenance[U].source is LegSource.ANNOTATION
    assert c.provenance[X].rule == "openWorldHint=true"


def test_string_false_counts_as_absent_even_from_trusted_server() -> None:
    c = classify({"name": "weather", "annotations": {"openWorldHint": "false"}}, trusted=True)
    assert c.legs == {U, X}


def test_hints_never_grant_or_remove_private_data() -> None:
    assert P in classify({"name": "read_inbox", "annotations": {"openWorldHint": False}}, trusted=True).legs
    assert P not in classify({"name": "get_time", "annotations": {"openWorldHint": True}}).legs


def test_heuristics_add_private_data_with_provenance() -> None:
    c = classify({"name": "search_emails"})
    assert c.provenance[P].source is LegSource.HEURISTIC
    assert c.provenance[P].rule == "private-store-name:emails"


def test_heuristics_read_description_and_schema() -> None:
    by_desc = classify({"name": "lookup", "description": "Returns the account balance and recent transactions"})
    assert P in by_desc.legs
    by_schema = classify({"name": "lookup", "inputSchema": {"properties": {"file_path": {"type": "string"}}}})
    assert by_schema.provenance[P].rule == "private-scope-schema:file"


def test_strict_posture_gives_unknown_tools_all_three_legs() -> None:
    c = classify({"name": "get_time"}, posture=Posture.STRICT)
    assert c.legs == ALL_LEGS
    assert {p.source for p in c.provenance.values()} == {LegSource.DEFAULT}


def test_strict_posture_still_takes_trusted_open_world_false() -> None:
    c = classify({"name": "get_time", "annotations": {"openWorldHint": False}}, trusted=True, posture=Posture.STRICT)
    assert c.legs == {P}


def test_result_hints_only_add() -> None:
    hints = read_result_labels({"content": [], "_meta": {"privateHint": True, "openWorldHint": False}}).added_legs()
    assert set(hints) == {P}
    assert hints[P].source is LegSource.RESULT_HINT
    assert read_result_labels({"annotations": {"maliciousActivityHint": True}}).added_legs().keys() == {U}
    assert read_result_labels("plain text").added_legs() == {}


def test_a_read_only_name_keeps_x_on_a_server_nobody_trusts() -> None:
    for name in ("get_weather", "lookup", "get_current_time", "search", "read_note", "list_articles"):
        assert classify({"name": name}).legs >= {U, X}, name
        claims = {"readOnlyHint": True, "openWorldHint": False}
        assert classify({"name": name, "annotations": claims}).legs >= {U, X}, name


def test_a_read_only_name_drops_the_default_x_of_a_trusted_server_but_not_an_annotated_one() -> None:
    assert classify({"name": "get_weather"}, trusted=True).legs == {U}
    assert X in classify({"name": "get_weather", "annotations": {"openWorldHint": True}}, trusted=True).legs
    assert X in classify({"name": "get_weather"}, trusted=True, posture=Posture.STRICT).legs


def test_hints_that_say_a_tool_writes_keep_x() -> None:
    assert X in classify({"name": "get_weather", "annotations": {"readOnlyHint": False}}, trusted=True).legs
    assert X in classify({"name": "get_weather", "annotations": {"destructiveHint": True}}, trusted=True).legs
    assert X not in classify({"name": "get_weather", "annotations": {"readOnlyHint": True}}, trusted=True).legs


_hint = st.one_of(st.none(), st.booleans(), st.sampled_from(["false", "true", 0, 1]))
_annotations = st.fixed_dictionaries(
    {},
    optional={
        "readOnlyHint": _hint,
        "destructiveHint": _hint,
        "idempotentHint": _hint,
        "openWorldHint": _hint,
        "title": st.text(max_size=10),
        "privateHint": _hint,
    },
)
_words = st.sampled_from(
    [
        "get", "list", "read", "search", "send", "delete", "kill", "run", "create", "write", "time", "weather",
        "safe", "local", "only", "offline", "x", "path", "url", "owner", "body", "recipient", "to", "inbox",
        "files", "command", "web", "commit", "start",
    ]
)  # fmt: skip


def _raw_tool(name: str, description: str, props: list[str], annotations: dict[str, Any] | None) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": {p: {"type": "string"} for p in props}},
    }
    if annotations is not None:
        raw["annotations"] = annotations
    return raw


@given(
    name=st.lists(_words, min_size=1, max_size=4).map("_".join),
    description=st.lists(_words, max_size=12).map(" ".join),
    annotations=_annotations,
    props=st.lists(_words, max_size=4),
    posture=st.sampled_from(list(Posture)),
)
def test_untrusted_hints_never_remove_a_leg(
    name: str, description: str, annotations: dict[str, Any], props: list[str], posture: Posture
) -> None:
    """The security invariant (docs/design.md, "The security invariant"): an untrusted server's hints can only add legs
    to what the same tool (same name, description and schema) gets with no hints at all; that holds through every
    heuristic, including the ones that say X is absent."""
    bare = classify(_raw_tool(name, description, props, None), posture=posture)
    hinted = classify(_raw_tool(name, description, props, annotations), posture=posture)
    assert bare.legs <= hinted.legs
    assert hinted.legs >= ({U, X} if posture is Posture.BALANCED else ALL_LEGS)


@given(
    name=st.lists(_words, min_size=1, max_size=4).map("_".join),
    description=st.lists(_words, max_size=12).map(" ".join),
    props=st.lists(_words, max_size=4),
)
def test_only_the_absence_heuristics_take_a_default_leg_away(name: str, description: str, props: list[str]) -> None:
    """A tool of a server nobody trusts keeps the balanced default's U and X whatever its name, description and
    schema say (docs/design.md, "The security invariant"); a trusted server's tool loses X only where an absence
    heuristic says so, in the heuristics' own words; strict posture keeps all three legs."""
    raw = _raw_tool(name, description, props, None)
    tool, _ = parse_tool(raw)
    assert classify(raw).legs >= {U, X}
    c = classify(raw, trusted=True)
    assert U in c.legs
    absent = match_heuristics(HEURISTICS, name, tool, absent=True)
    assert (X in c.legs) == (X not in absent or X in match_heuristics(HEURISTICS, name, tool))
    assert classify(raw, posture=Posture.STRICT).legs == ALL_LEGS


@given(
    name=st.lists(_words, min_size=1, max_size=4).map("_".join),
    props=st.lists(_words, max_size=4),
)
def test_open_world_true_always_gives_u_and_x(name: str, props: list[str]) -> None:
    c = classify(_raw_tool(name, "", props, {"openWorldHint": True, "readOnlyHint": True}))
    assert {U, X} <= c.legs
