from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from monitor.classify._engine import Classifier, classify_result_hints
from monitor.models import ToolContext
from monitor.models._legs import ALL_LEGS, Leg, LegSource, Posture
from monitor.models._tools import parse_tool

P, U, X = Leg.PRIVATE_DATA, Leg.UNTRUSTED_CONTENT, Leg.EXTERNAL_COMMUNICATION


def classify(raw: dict[str, Any], *, trusted: bool = False, posture: Posture = Posture.BALANCED, server: str = "srv"):
    tool, _ = parse_tool(raw)
    assert tool is not None
    return Classifier(posture).classify(ToolContext(server, tool.name, tool, trusted)).classification


def test_no_annotations_from_untrusted_server_gives_u_and_x() -> None:
    c = classify({"name": "get_weather"})
    assert c.legs == {U, X}
    assert c.provenance[U].source is LegSource.DEFAULT
    assert c.provenance[X].rule == "openWorldHint-absent"


def test_open_world_false_from_untrusted_server_removes_nothing() -> None:
    c = classify({"name": "get_weather", "annotations": {"openWorldHint": False}})
    assert c.legs == {U, X}


def test_open_world_false_from_trusted_server_removes_u_and_x() -> None:
    c = classify({"name": "get_weather", "annotations": {"openWorldHint": False}}, trusted=True)
    assert c.legs == frozenset()


def test_open_world_true_is_recorded_as_annotation() -> None:
    c = classify({"name": "fetch", "annotations": {"openWorldHint": True}}, trusted=True)
    assert c.provenance[U].source is LegSource.ANNOTATION
    assert c.provenance[X].rule == "openWorldHint=true"


def test_string_false_counts_as_absent_even_from_trusted_server() -> None:
    c = classify({"name": "get_weather", "annotations": {"openWorldHint": "false"}}, trusted=True)
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
    assert by_schema.provenance[P].rule == "private-path-schema:file_path"


def test_strict_posture_gives_unknown_tools_all_three_legs() -> None:
    c = classify({"name": "get_time"}, posture=Posture.STRICT)
    assert c.legs == ALL_LEGS
    assert {p.source for p in c.provenance.values()} == {LegSource.DEFAULT}


def test_strict_posture_still_takes_trusted_open_world_false() -> None:
    c = classify({"name": "get_time", "annotations": {"openWorldHint": False}}, trusted=True, posture=Posture.STRICT)
    assert c.legs == {P}


def test_result_hints_only_add() -> None:
    hints = classify_result_hints({"content": [], "_meta": {"privateHint": True, "openWorldHint": False}})
    assert set(hints) == {P}
    assert hints[P].source is LegSource.RESULT_HINT
    assert classify_result_hints({"annotations": {"maliciousActivityHint": True}}).keys() == {U}
    assert classify_result_hints("plain text") == {}


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
_words = st.sampled_from(["get", "list", "send", "time", "weather", "safe", "local", "read", "only", "offline", "x"])


@given(
    name=st.lists(_words, min_size=1, max_size=4).map("_".join),
    description=st.lists(_words, max_size=12).map(" ".join),
    annotations=_annotations,
    props=st.lists(_words, max_size=4),
    posture=st.sampled_from(list(Posture)),
)
def test_untrusted_hints_and_heuristics_never_remove_a_leg(
    name: str, description: str, annotations: dict[str, Any], props: list[str], posture: Posture
) -> None:
    """DESIGN §3 security invariant: what an untrusted server says can only add legs."""
    raw = {
        "name": name,
        "description": description,
        "annotations": annotations,
        "inputSchema": {"type": "object", "properties": {p: {"type": "string"} for p in props}},
    }
    bare = classify({"name": "tool"}, posture=posture)
    hinted = classify(raw, posture=posture)
    assert bare.legs <= hinted.legs
