"""Packs that treat the user's own network as private judge hosts as a resolver reads them.

A public address keeps external communication in any spelling (one decimal number, hex, octal parts, mapped
into IPv6); loopback, private, link-local, single-label and internal-suffix hosts stay inside. The packs say
so with the ``internal_host`` condition rather than a regular expression over the URL's text.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from monitor.classify import Classifier, RuleSet, builtin_rules_dir, load_builtin_rules, run_rule_tests
from monitor.classify._loader import load_rules
from monitor.classify._overrides import names_internal_host
from monitor.errors import RuleLoadError
from monitor.models import Leg, ToolContext

P, U, X = Leg.PRIVATE_DATA, Leg.UNTRUSTED_CONTENT, Leg.EXTERNAL_COMMUNICATION
INTERNAL = [
    "http://localhost:8080/admin",
    "localhost:3000/login",
    "localhost",
    "file:///etc/passwd",
    "FILE:/home/u/notes.txt",
    "file://localhost/etc/hosts",
    "http://127.0.0.1/",
    "http://2130706433:8080/",  # 127.0.0.1 as one decimal number
    "http://0x7f000001/",
    "http://0177.0.0.1/",
    "http://127.1/",
    "http://10.1.2.3/",
    "http://192.168.1.1/",
    "169.254.169.254/latest/meta-data/",
    "http://[::1]:9000/",
    "http://[::ffff:127.0.0.1]/",
    "http://[fe80::1%25eth0]/",
    "http://wiki/payroll",
    "http://build.internal/",
    "http://printer.local./",
    "http://user:pw@localhost:99/",
    "  http://10.0.0.1",
]
EXTERNAL = [
    "https://example.com/",
    "http://1481646427/c?d=secret",  # 88.80.18.59 as one decimal number
    "http://0x58501234/",
    "http://0x58.0x50.0x12.0x34/",
    "http://0130.0120.022.064/",
    "1481646427",
    "0x58501234/collect",
    "http://[::ffff:88.80.18.52]/",
    "http://8.8.8.8/",
    "http://localhost.attacker.example/",
    "http://127.0.0.1@attacker.example/",
    "http://localhost\\@attacker.example/",
    "http://attacker.example\\@localhost/",
    "http://[::1",
    "file://attacker.example/share/payload.txt",
    "http:///path",
    "mailto:admin@localhost",
    "javascript:fetch('//x.example')",
    "",
]


@pytest.mark.parametrize("url", INTERNAL)
def test_internal_hosts_in_any_spelling(url: str) -> None:
    assert names_internal_host(url)


@pytest.mark.parametrize("url", EXTERNAL)
def test_public_hosts_in_any_spelling_are_not_internal(url: str) -> None:
    assert not names_internal_host(url)


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
