from pathlib import Path

import yaml

from monitor.classify._loader import load_rules
from monitor.classify._ruletests import run_rule_tests
from monitor.classify._suggest import draft_rule_file, dump_rule_file, update_pins
from monitor.models import hash_definition

TOOLS = [
    {"name": "fetch", "description": "Fetch a URL", "annotations": {"openWorldHint": True}},
    {"name": "read_inbox", "description": "Read the user's inbox"},
]


def test_draft_is_experimental_pinned_and_its_tests_pass(tmp_path: Path) -> None:
    doc = draft_rule_file("web", TOOLS)
    assert doc["status"] == "experimental"
    assert [e["pin"] for e in doc["tools"]] == [hash_definition(t) for t in TOOLS]
    # What an untrusted server's tool gets with no hints: its name never takes the sending leg away.
    assert doc["tools"][1]["legs"] == ["private_data", "untrusted_content", "external_communication"]
    assert "heuristic" in doc["tools"][1]["reason"] and doc["tools"][1]["reason"].startswith("DRAFT")
    (tmp_path / "web.yaml").write_text(dump_rule_file(doc))
    rules = load_rules([tmp_path], builtin=False)
    outcomes = run_rule_tests(rules, rules.rules)
    assert outcomes and all(o.passed for o in outcomes)


def test_update_pins_keeps_comments_and_layout() -> None:
    text = (
        "# reviewed 2026-11\n"
        "tools:\n"
        "  - match: fetch   # the only tool\n"
        "    legs: [untrusted_content]\n"
        "    reason: x\n"
        "  - match: read_inbox\n"
        "    pin: " + "0" * 64 + "\n"
        "    legs: []\n"
        "    reason: y\n"
        "  - match: 'other_*'\n"
        "    legs: []\n"
        "    reason: z\n"
    )
    hashes = {"fetch": "a" * 64, "read_inbox": "b" * 64}
    new, pinned = update_pins(text, hashes)
    assert pinned == ["fetch", "read_inbox"]
    assert "# reviewed 2026-11" in new and "# the only tool" in new
    doc = yaml.safe_load(new)
    assert [e.get("pin") for e in doc["tools"]] == ["a" * 64, "b" * 64, None]


def test_update_pins_adds_to_a_list_of_reviewed_versions() -> None:
    text = "tools:\n  - match: fetch\n    pin: [" + "a" * 64 + "]\n    legs: []\n    reason: x\n"
    new, _ = update_pins(text, {"fetch": "b" * 64})
    assert yaml.safe_load(new)["tools"][0]["pin"] == ["a" * 64, "b" * 64]
    again, _ = update_pins(new, {"fetch": "b" * 64})
    assert again == new
