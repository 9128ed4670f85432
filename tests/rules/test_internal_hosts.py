"""Packs that treat the user's own network as private judge hosts as a resolver reads them.

A public address keeps external communication in any spelling; loopback, private, link-local, single-label and
internal-suffix hosts stay inside (the spellings: tests/classify/test_internal_host_names.py). The packs say so
with the ``internal_host`` condition rather than a regular expression over the URL's text.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from monitor.classify import Classifier, RuleSet, builtin_rules_dir, load_builtin_rules, load_rules, run_rule_tests
from monitor.errors import RuleLoadError
from monitor.models import Leg, ToolContext

P, U, X = Leg.PRIVATE_DATA, Leg.UNTRUSTED_CONTENT, Leg.EXTERNAL_COMMUNICATION


RULE = """\
id: 55555555-5555-4555-8555-555555555555
title: Browser
status: test
author: tests
date: 2026-11-29
server: browser
tools:
  - match: open
    legs: [untrusted_content, external_communication]
    when:
      - arg: url
        internal_host: true
        add: [private_data]
        remove: [external_communication]
    reason: opens a page
  - match: open_public
    legs: [untrusted_content]
    when:
      - arg: url
        internal_host: true
        not: true
        add: [external_communication]
    reason: opens a page
"""


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> RuleSet:
    folder = tmp_path_factory.mktemp("rules")
    (folder / "browser.yaml").write_text(RULE)
    return load_rules([folder], builtin=False)


def legs(rules: RuleSet, server: str, tool: str, arguments: dict[str, object]) -> frozenset[Leg]:
    return Classifier(overrides=rules).classify(ToolContext(server, tool, arguments=arguments)).classification.legs


def test_the_condition_flips_legs_for_internal_hosts_only(browser: RuleSet) -> None:
    assert legs(browser, "browser", "open", {"url": "http://localhost:3000/"}) == {P, U}
    assert legs(browser, "browser", "open", {"url": "http://1481646427/"}) == {U, X}
    assert legs(browser, "browser", "open", {"url": ["http://localhost/", "http://0x58501234/"]}) == {P, U}
    assert legs(browser, "browser", "open", {}) == {U, X}


def test_not_turns_it_into_a_public_host_test(browser: RuleSet) -> None:
    assert legs(browser, "browser", "open_public", {"url": "http://0x58501234/"}) == {U, X}
    assert legs(browser, "browser", "open_public", {"url": "http://10.0.0.7/"}) == {U}


def test_internal_host_takes_only_true(tmp_path: Path) -> None:
    refused = RULE.replace("internal_host: true\n        add", "internal_host: false\n        add", 1)
    (tmp_path / "browser.yaml").write_text(refused)
    with pytest.raises(RuleLoadError) as info:
        load_rules([tmp_path], builtin=False)
    assert any("internal_host takes true" in p for p in info.value.problems)


PACKS = ["fetch", "playwright", "puppeteer", "desktop-commander"]


@pytest.mark.parametrize("pack", PACKS)
def test_the_packs_judge_hosts_with_the_condition_not_a_regex(pack: str) -> None:
    text = (builtin_rules_dir() / "mcp" / f"{pack}.yaml").read_text()
    conditions = [c for entry in yaml.safe_load(text)["tools"] for c in entry.get("when", [])]
    assert any(c.get("internal_host") is True for c in conditions)
    assert not any("localhost" in str(c.get("regex", "")) or "192" in str(c.get("regex", "")) for c in conditions)


def test_no_builtin_pack_keeps_an_internal_host_regex() -> None:
    for path in sorted(builtin_rules_dir().rglob("*.yaml")):
        for entry in yaml.safe_load(path.read_text()).get("tools", []):
            for condition in entry.get("when", []):
                assert "localhost" not in str(condition.get("regex", "")), path


@pytest.fixture(scope="module")
def builtin() -> RuleSet:
    return load_builtin_rules()


@pytest.mark.parametrize("pack", PACKS)
def test_the_packs_pass_their_inline_tests(builtin: RuleSet, pack: str) -> None:
    files = [r for r in builtin.rules if r.path.name == f"{pack}.yaml"]
    outcomes = run_rule_tests(builtin, files)
    assert len(files) == 1 and outcomes
    assert [o for o in outcomes if not o.passed] == []
