"""A tool definition hashes, whatever it holds: plain JSON as before, anything else to a hash no pin matches."""

from pathlib import Path
from typing import Any

import pytest

from monitor import AlertKind, Leg, SessionMonitor
from monitor.classify import load_rules
from monitor.models import hash_definition, parse_tool

TOOL = {"name": "send_report", "description": "Send a report", "inputSchema": {"type": "object"}}
ODD: list[Any] = [
    2**64,
    -(2**63) - 1,
    10**20000,  # more digits than int() writes in decimal
    float("nan"),
    float("inf"),
    {1: "a"},
    {None: "a"},
    {"s": {1, 2}},
    "\ud800",
]


def nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"type": "object"}
    for _ in range(depth):
        value = {"properties": value}
    return value


def test_plain_json_hashes_as_its_canonical_json() -> None:
    # The reviewed packs' pins were made this way: they must keep matching.
    assert hash_definition(TOOL) == "c612d82e15d2af1ffff46870d2aad6328faa4179b72badd685d3ead09d7e5920"
    assert hash_definition({**TOOL, "x": 1}) == hash_definition(TOOL)  # only the four members count


@pytest.mark.parametrize("odd", ODD, ids=lambda v: type(v).__name__)
def test_a_value_json_cannot_hold_still_hashes_and_differs(odd: Any) -> None:
    raw = {**TOOL, "inputSchema": {"type": "object", "default": odd}}
    first = hash_definition(raw)
    assert first == hash_definition(dict(raw)) and len(first) == 64  # deterministic, never raises
    assert first != hash_definition({**TOOL, "inputSchema": {"type": "object", "default": None}})
    definition, _ = parse_tool(raw)
    assert definition is not None and definition.definition_hash == first


def test_odd_values_do_not_collide_with_each_other_or_their_look_alikes() -> None:
    look_alikes: list[Any] = [None, "18446744073709551616", 18446744073709551615, {"1": "a"}, "nan"]
    hashes = {hash_definition({**TOOL, "inputSchema": {"default": v}}) for v in ODD + look_alikes}
    assert len(hashes) == len(ODD) + len(look_alikes)


def test_nesting_too_deep_for_orjson_hashes() -> None:
    deep = hash_definition({**TOOL, "inputSchema": nested(299)})
    assert hash_definition({**TOOL, "inputSchema": nested(300)}) != deep
    assert len(hash_definition({**TOOL, "inputSchema": nested(50_000)})) == 64


@pytest.mark.parametrize("odd", [2**64, {1: "a"}, float("nan")], ids=["big-int", "int-key", "nan"])
def test_an_unhashable_new_definition_voids_the_pin_and_raises_the_alert(tmp_path: Path, odd: Any) -> None:
    (tmp_path / "reports.yaml").write_text(
        "id: 33333333-3333-4333-8333-333333333333\ntitle: Reports\nstatus: test\nauthor: tests\n"
        "date: 2026-11-29\nserver: reports\ntools:\n  - match: send_report\n"
        f"    pin: {hash_definition(TOOL)}\n    legs: []\n    reason: reviewed as harmless\n"
    )
    monitor = SessionMonitor(rules=load_rules([tmp_path], builtin=False))
    changed = {**TOOL, "inputSchema": {"type": "object", "properties": {"to": {"maximum": odd}}}}
    monitor.register_tools("s", "reports", [changed])
    decision = monitor.before_call("s", "reports", "send_report", {"to": "x@evil.example"}, "c1")
    assert decision.rule_ids == ()  # the old rule is not kept
    assert Leg.EXTERNAL_COMMUNICATION in decision.legs_call
    kinds = [a.kind for a in monitor.session("s").alerts]
    assert AlertKind.DEFINITION_CHANGED in kinds
    assert monitor.internal_errors == 0
