"""docs/agentdojo-camel-comparison.md stays true: its tables are recomputed from the packs and CaMeL's labels.

The labels file is ../shared/data/agentdojo/camel-tool-labels.json (relative to the project root). The
agreement rule is the one the page states: CaMeL ``no_side_effect`` agrees with a tool that has no X,
``egress_reader_checked`` with one that has X, and the side-effect categories agree either way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from monitor.classify import RuleSet, ToolRule, builtin_rules_dir, load_rules
from monitor.models import Leg

pytestmark = pytest.mark.shared_data

PROJECT_ROOT = Path(__file__).resolve().parents[2]
LABELS = PROJECT_ROOT / ".." / "shared" / "data" / "agentdojo" / "camel-tool-labels.json"
DOC = PROJECT_ROOT / "docs" / "agentdojo-camel-comparison.md"

# Suites CaMeL has a policy for but we have no pack for (the page says so); never compared.
UNCOMPARED_SUITES = frozenset({"slack"})
CATEGORIES = ("no_side_effect", "egress_reader_checked", "trusted_args_only", "allowed_side_effect")
SIDE_EFFECT_CATEGORIES = frozenset({"trusted_args_only", "allowed_side_effect"})
LETTERS = {Leg.PRIVATE_DATA: "P", Leg.UNTRUSTED_CONTENT: "U", Leg.EXTERNAL_COMMUNICATION: "X"}

_SECTION = re.compile(r"^## (\w+) \(agentdojo-(\w+)\)\s*$")
_ROW = re.compile(r"^\|\s*`(?P<tool>\w+)`\s*\|(?P<legs>[^|]*)\|\s*`(?P<category>\w+)`\s*\|\s*(?P<agree>yes|no)\s*\|")
_SUMMARY_ROW = re.compile(r"^\|\s*(\w+)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*$")
_DISAGREEING = re.compile(r"^Disagreeing tools:\s*(?P<list>.*?)\.?\s*$", re.MULTILINE)

Row = tuple[str, str, str]  # legs ("P, U" or "none"), category, "yes"/"no"


def _labels() -> dict[str, Any]:
    if not LABELS.is_file():
        pytest.fail(
            f"CaMeL labels missing: expected {LABELS.resolve()} (../shared/data/agentdojo/camel-tool-labels.json "
            "relative to the project root; see ../shared/data/README.md)"
        )
    data: dict[str, Any] = json.loads(LABELS.read_text(encoding="utf-8"))
    return data


def _compared_suites(labels: dict[str, Any]) -> dict[str, dict[str, str]]:
    """suite -> tool -> CaMeL category, for every suite we have a pack for."""
    suites: dict[str, dict[str, str]] = {}
    for suite, categories in labels.items():
        if suite.startswith("_") or suite in UNCOMPARED_SUITES:
            continue
        tools: dict[str, str] = {}
        for category, names in categories.items():
            assert category in CATEGORIES, f"unknown CaMeL category {category!r} in suite {suite!r}"
            for name in names:
                assert name not in tools, f"{suite}/{name} is in two CaMeL categories"
                tools[name] = category
        suites[suite] = tools
    return suites


def _packs() -> RuleSet:
    # Only the AgentDojo packs: the comparison must not depend on unrelated packs loading.
    return load_rules([builtin_rules_dir() / "agentdojo"], builtin=False)


def _entry(rules: RuleSet, suite: str, tool: str) -> ToolRule:
    found = rules.find(f"agentdojo-{suite}", tool)
    assert found is not None, f"no rule in rules/agentdojo/{suite}.yaml covers {tool}"
    return found[1]


def _legs_text(entry: ToolRule) -> str:
    legs = set(entry.legs)
    return ", ".join(LETTERS[leg] for leg in Leg if leg in legs) or "none"


def _has_x(entry: ToolRule) -> bool:
    return Leg.EXTERNAL_COMMUNICATION in entry.legs or any(
        Leg.EXTERNAL_COMMUNICATION in condition.add for condition in entry.when
    )


def _agrees(category: str, has_x: bool) -> bool:
    if category in SIDE_EFFECT_CATEGORIES:
        return True
    return has_x == (category == "egress_reader_checked")


def _expected() -> dict[str, dict[str, Row]]:
    rules = _packs()
    expected: dict[str, dict[str, Row]] = {}
    for suite, tools in _compared_suites(_labels()).items():
        rows: dict[str, Row] = {}
        for tool, category in tools.items():
            entry = _entry(rules, suite, tool)
            rows[tool] = (_legs_text(entry), category, "yes" if _agrees(category, _has_x(entry)) else "no")
        expected[suite] = rows
    return expected


def _doc_lines() -> Iterator[str]:
    assert DOC.is_file(), f"missing {DOC}"
    yield from DOC.read_text(encoding="utf-8").splitlines()


def _documented() -> dict[str, dict[str, Row]]:
    tables: dict[str, dict[str, Row]] = {}
    current: dict[str, Row] | None = None
    for line in _doc_lines():
        if line.startswith("## "):
            section = _SECTION.match(line)
            current = None
            if section:
                suite, server_suite = section.groups()
                assert suite == server_suite, f"heading names two suites: {line!r}"
                assert suite not in tables, f"suite {suite} has two tables"
                current = tables[suite] = {}
            continue
        row = _ROW.match(line)
        if row and current is not None:
            tool = row["tool"]
            assert tool not in current, f"{tool} is listed twice"
            legs = ", ".join(p.strip() for p in row["legs"].split(",")).strip()
            current[tool] = (legs, row["category"], row["agree"])
    return tables


def _disagreeing(tables: dict[str, dict[str, Row]]) -> set[str]:
    return {f"{suite}/{tool}" for suite, rows in tables.items() for tool, row in rows.items() if row[2] == "no"}


def test_every_compared_tool_is_covered_by_our_packs() -> None:
    rules = _packs()
    for suite, tools in _compared_suites(_labels()).items():
        for tool in tools:
            _entry(rules, suite, tool)


def test_the_disagreeing_tools_are_the_ones_the_page_lists() -> None:
    assert _disagreeing(_documented()) == _disagreeing(_expected())


def test_the_page_has_one_table_per_compared_suite_with_every_tool() -> None:
    documented, expected = _documented(), _expected()
    assert set(documented) == set(expected)
    for suite, rows in expected.items():
        assert set(documented[suite]) == set(rows), f"{suite}: tools listed differ from CaMeL's labels"


def test_every_row_states_our_legs_and_camel_category() -> None:
    documented, expected = _documented(), _expected()
    stale = {
        f"{suite}/{tool}": {"page": documented.get(suite, {}).get(tool), "now": row}
        for suite, rows in expected.items()
        for tool, row in rows.items()
        if documented.get(suite, {}).get(tool) != row
    }
    assert not stale, f"rows of {DOC.name} no longer hold: {stale}"


def test_the_summary_counts_and_list_match_the_tables() -> None:
    expected = _expected()
    text = DOC.read_text(encoding="utf-8")
    counts = {
        m.group(1): tuple(int(g) for g in m.groups()[1:])
        for line in text.splitlines()
        if (m := _SUMMARY_ROW.match(line)) and m.group(1) in expected
    }
    for suite, rows in expected.items():
        agree = sum(row[2] == "yes" for row in rows.values())
        assert counts.get(suite) == (len(rows), agree, len(rows) - agree), f"summary row for {suite} is stale"
    listed = _DISAGREEING.search(text)
    assert listed is not None, "the summary must say 'Disagreeing tools: ...'"
    names = set() if listed["list"].strip() == "none" else set(re.findall(r"`([\w/]+)`", listed["list"]))
    assert names == _disagreeing(expected)
