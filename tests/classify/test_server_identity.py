"""A built-in pack applies to a server by its identity, not only its name: a user's own server named ``fetch`` that
announces another ``serverInfo`` (or was started from another package) is not the reviewed Fetch server. The pack
does not apply to it (its tools are judged as any unreviewed server's, never less guarded than that), and the
session says so once, at severity info, with what to do, instead of a high ``definition-changed`` each session.
A server known only by its name is covered by name as before, and the alert for a void pin says what to do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from support.fetch_servers import FETCH_PACK, OWN_FETCH, REFERENCE_FETCH

from monitor import SessionMonitor
from monitor.classify import (
    Classifier,
    find_identity_conflict,
    load_builtin_rules,
    load_rules,
    normalize_package,
)
from monitor.errors import RuleLoadError
from monitor.models import (
    AlertKind,
    Leg,
    ServerIdentity,
    Severity,
    ToolContext,
    ToolsListed,
    hash_definition,
    parse_tool,
)

P, U, X = Leg.PRIVATE_DATA, Leg.UNTRUSTED_CONTENT, Leg.EXTERNAL_COMMUNICATION
REFERENCE = ServerIdentity(name="mcp-fetch", version="2026.10.24", package="mcp-server-fetch")
OWN = ServerIdentity(name="team-wiki-fetch", version="0.3.0")
PAGE = {"url": "https://wiki.example.com/payroll"}


def find_definition_changed(m: SessionMonitor) -> list[Any]:
    return [a for a in m.session("s").alerts if a.kind is AlertKind.DEFINITION_CHANGED]


def test_the_reference_fetch_definition_is_the_one_the_pack_pins() -> None:
    found = load_builtin_rules().find("fetch", "fetch")
    assert found is not None
    assert found[1].pins == (hash_definition(REFERENCE_FETCH),)


def test_a_server_named_fetch_that_announces_another_server_info_is_not_reviewed_and_told_once() -> None:
    m = SessionMonitor()
    m.register_tools("s", "fetch", [OWN_FETCH], identity=OWN)
    m.register_tools("s", "fetch", [OWN_FETCH])  # listed again: the identity given before still holds
    d = m.before_call("s", "fetch", "fetch", PAGE, "c1")
    assert d.rule_ids == ()
    [alert] = find_definition_changed(m)
    assert alert.severity is Severity.INFO
    assert FETCH_PACK in alert.message and "serverInfo team-wiki-fetch 0.3.0" in alert.message
    assert "serverInfo mcp-fetch" in alert.message
    assert "unreviewed" in alert.message and "trifecta rules suggest" in alert.message


def test_not_applying_the_pack_judges_the_tools_as_an_unreviewed_servers_never_less_guarded() -> None:
    """The same tool on a server no pack names gets the same legs: the default layers answer, and the pack's own
    legs and trust are not used."""
    clashing, unnamed = SessionMonitor(), SessionMonitor()
    clashing.register_tools("s", "fetch", [OWN_FETCH], trusted=True, identity=OWN)
    unnamed.register_tools("s", "wiki", [OWN_FETCH], trusted=True)
    got = clashing.before_call("s", "fetch", "fetch", PAGE, "c1")
    expected = unnamed.before_call("s", "wiki", "fetch", PAGE, "c1")
    assert got.legs_call == expected.legs_call
    assert got.legs_call >= {U, X}  # the no-hint default of an open-world tool stands
    assert clashing.session("s").calls[0].provenance == unnamed.session("s").calls[0].provenance


def test_the_reference_server_announcing_itself_keeps_its_review() -> None:
    m = SessionMonitor()
    m.register_tools("s", "fetch", [REFERENCE_FETCH], identity=REFERENCE)
    d = m.before_call("s", "fetch", "fetch", {"url": "https://example.com/"}, "c1")
    assert d.rule_ids == (f"{FETCH_PACK}/fetch",)
    assert d.legs_call == {U, X}
    assert find_definition_changed(m) == []


def test_a_package_the_pack_does_not_name_is_another_server_even_with_the_same_server_info() -> None:
    fork = ServerIdentity(name="mcp-fetch", package="acme-fetch-mcp==1.4")
    m = SessionMonitor()
    m.register_tools("s", "fetch", [REFERENCE_FETCH], identity=fork)
    assert m.before_call("s", "fetch", "fetch", PAGE, "c1").rule_ids == ()
    [alert] = find_definition_changed(m)
    assert alert.severity is Severity.INFO and "package acme-fetch-mcp==1.4" in alert.message


def test_with_only_a_name_the_pack_applies_as_before_and_the_void_pin_says_what_to_do() -> None:
    m = SessionMonitor()
    m.register_tools("s", "fetch", [OWN_FETCH])
    assert m.before_call("s", "fetch", "fetch", PAGE, "c1").rule_ids == ()
    [alert] = find_definition_changed(m)
    assert alert.severity is Severity.HIGH
    assert "the rule is void for this session" in alert.message
    assert "only has its name 'fetch'" in alert.message and "trifecta rules suggest" in alert.message
    assert "trifecta rules pin" in alert.message


def test_the_identity_arrives_with_a_native_tools_listed_event() -> None:
    event = ToolsListed.model_validate(
        {"session_id": "s", "server": "fetch", "tools": [OWN_FETCH], "identity": {"name": "team-wiki-fetch"}}
    )
    m = SessionMonitor()
    m.observe(event)
    [alert] = find_definition_changed(m)
    assert alert.severity is Severity.INFO


def test_trust_a_pack_gives_goes_only_to_the_server_it_reviewed(tmp_path: Path) -> None:
    pack = tmp_path / "wiki.yaml"
    pack.write_text(
        yaml.safe_dump(
            {
                "id": "0b5e1c9e-7c55-4b51-9a43-0c6f3f0d4a11",
                "title": "Team wiki",
                "status": "test",
                "author": "tests",
                "date": "2026-12-07",
                "server": "wiki",
                "server_info": {"name": ["team-wiki", "team-wiki-server"]},
                "packages": ["@acme/wiki-mcp"],
                "trust": "trusted",
                "tools": [{"match": "fetch", "legs": ["private_data"], "reason": "the team's own pages"}],
                "tests": [
                    {"tool": "fetch", "legs": ["private_data"]},
                    {"tool": "fetch", "absent": ["untrusted_content"]},
                ],
            }
        )
    )
    classifier = Classifier(overrides=load_rules([pack], builtin=False))
    assert classifier.trust_for("wiki", False, ServerIdentity(name="team-wiki-server")) is True
    assert classifier.trust_for("wiki", False, ServerIdentity(package="@acme/wiki-mcp@2.0.1")) is True
    assert classifier.trust_for("wiki", False, ServerIdentity(name="wiki-clone")) is False
    assert classifier.trust_for("wiki", False, None) is True  # nothing known contradicts it
    tool, _ = parse_tool(OWN_FETCH)
    other = ToolContext("wiki", "fetch", tool, False, server_identity=ServerIdentity(package="wiki-clone"))
    assert classifier.classify(other).rule_ids == ()
    assert classifier.find_identity_clash("wiki", ServerIdentity(package="wiki-clone")) is not None
    assert classifier.find_identity_clash("wiki", ServerIdentity(name="team-wiki")) is None


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("mcp-server-fetch", "mcp-server-fetch"),
        ("pypi:mcp-server-fetch", "mcp-server-fetch"),
        ("Mcp-Server-Fetch==2026.10.24", "mcp-server-fetch"),
        ("mcp-server-fetch@latest", "mcp-server-fetch"),
        ("@modelcontextprotocol/server-everything@2026.8.31", "@modelcontextprotocol/server-everything"),
        ("npm:@modelcontextprotocol/server-everything", "@modelcontextprotocol/server-everything"),
        ("mcp/fetch:latest", "mcp/fetch"),
        ("ghcr.io/github/github-mcp-server:v1", "ghcr.io/github/github-mcp-server"),
        ("mcp/fetch@sha256:0123abcd", "mcp/fetch"),
    ],
)
def test_packages_compare_without_registry_prefix_case_or_version(name: str, expected: str) -> None:
    assert normalize_package(name) == expected


def test_only_what_is_known_can_contradict_a_pack() -> None:
    fetch = next(r.rule for r in load_builtin_rules().rules if str(r.rule.id) == FETCH_PACK)
    assert find_identity_conflict(fetch, None) is None
    assert find_identity_conflict(fetch, ServerIdentity()) is None
    assert find_identity_conflict(fetch, ServerIdentity(version="9.9")) is None
    assert find_identity_conflict(fetch, REFERENCE) is None
    assert find_identity_conflict(fetch, ServerIdentity(package="mcp/fetch")) is None
    assert find_identity_conflict(fetch, ServerIdentity(name="MCP-FETCH")) == "serverInfo MCP-FETCH"
    assert find_identity_conflict(fetch, ServerIdentity(package="fetch-mcp")) == "package fetch-mcp"
    # A pack that declares no identity is contradicted by none.
    github = next(r.rule for r in load_builtin_rules().rules if r.rule.server == "github")
    assert find_identity_conflict(github, OWN) is None


WIKI_PACK: dict[str, Any] = {
    "id": "0b5e1c9e-7c55-4b51-9a43-0c6f3f0d4a12",
    "title": "Wiki",
    "status": "test",
    "author": "tests",
    "date": "2026-12-07",
    "server": "wiki",
    "tools": [{"match": "fetch", "legs": ["private_data"], "reason": "the team's own pages"}],
    "tests": [{"tool": "fetch", "legs": ["private_data"]}, {"tool": "fetch", "absent": ["untrusted_content"]}],
}
# The ruleset_sha256 of WIKI_PACK alone before rule files could declare an identity.
WIKI_PACK_SHA256 = "2abc4fc511f3034db9b041f543ad233fee8c489f47a5082433ac05ac6eea6e57"


def test_a_pack_without_an_identity_hashes_as_before_and_a_bad_one_is_a_load_error(tmp_path: Path) -> None:
    for i, doc in enumerate([WIKI_PACK, WIKI_PACK | {"packages": [], "server_info": None}]):
        path = tmp_path / f"wiki{i}.yaml"
        path.write_text(yaml.safe_dump(doc))
        assert load_rules([path], builtin=False).sha256 == WIKI_PACK_SHA256
    declared = tmp_path / "declared.yaml"
    declared.write_text(yaml.safe_dump(WIKI_PACK | {"packages": ["@acme/wiki-mcp"]}))
    assert load_rules([declared], builtin=False).sha256 != WIKI_PACK_SHA256
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(WIKI_PACK | {"server_info": {"name": ""}, "packages": [" "]}))
    with pytest.raises(RuleLoadError) as caught:
        load_rules([bad], builtin=False)
    assert "server_info.name" in str(caught.value) and "packages" in str(caught.value)


def test_a_pack_that_withholds_trust_still_withholds_it_from_a_server_that_contradicts_it(tmp_path: Path) -> None:
    pack = tmp_path / "wiki.yaml"
    rule = {
        "id": "7d1f2a0c-4b7e-4d55-8f0e-2a6b9c3d5e71",
        "title": "Team wiki, untrusted",
        "status": "test",
        "author": "tests",
        "date": "2026-12-07",
        "server": "wiki",
        "server_info": {"name": "team-wiki"},
        "trust": "untrusted",
        "tools": [{"match": "fetch", "legs": ["private_data"], "reason": "the team's own pages"}],
        "tests": [{"tool": "fetch", "legs": ["private_data"]}, {"tool": "fetch", "absent": ["untrusted_content"]}],
    }
    pack.write_text(yaml.safe_dump(rule))
    classifier = Classifier(overrides=load_rules([pack], builtin=False))
    # The host trusts the server; the pack says not to. Announcing another serverInfo must not win the host's trust.
    assert classifier.trust_for("wiki", True, ServerIdentity(name="wiki-clone")) is False
    assert classifier.trust_for("wiki", True, ServerIdentity(name="team-wiki")) is False


def test_a_lookup_is_remembered_per_server_tool_and_identity_and_stays_right_past_the_tables_bound(
    tmp_path: Path,
) -> None:
    pack = tmp_path / "wiki.yaml"
    pack.write_text(
        yaml.safe_dump(
            {
                "id": "0b5e1c9e-7c55-4b51-9a43-0c6f3f0d4a12",
                "title": "Team wiki",
                "status": "test",
                "author": "tests",
                "date": "2026-12-07",
                "server": "wiki",
                "server_info": {"name": ["team-wiki"]},
                "trust": "trusted",
                "tools": [
                    {"match": "fetch", "legs": ["private_data"], "reason": "the team's own pages"},
                    {"match": "get_*", "legs": ["private_data"], "reason": "the team's own pages"},
                ],
                "tests": [{"tool": "fetch", "legs": ["private_data"]}],
            }
        )
    )
    rules = load_rules([pack], builtin=False)
    same, other = ServerIdentity(name="team-wiki"), ServerIdentity(name="wiki-clone")
    long_name = "get_" + "x" * 600
    for _ in range(2):  # the second time from what the first remembered
        assert rules.find("wiki", "fetch", same) is not None
        assert rules.find("wiki", "fetch", other) is None
        assert rules.find("wiki", "get_page") is not None
        assert rules.find("wiki", "put_page") is None
        assert rules.find("wiki", long_name) is not None
        assert rules.trust_for("wiki", same) is True
        assert rules.trust_for("wiki", other) is None  # contradicted: no trust granted
        assert rules.trust_for("elsewhere") is None
    for i in range(5_000):  # names from the input: the table is bounded
        assert rules.find("wiki", f"put_{i}") is None
    assert len(rules._found) <= 4_096
    assert all(len(server) + len(tool) <= 512 for server, tool, _ in rules._found)
    assert rules.find("wiki", "fetch", same) is not None
    assert rules.find("wiki", "fetch", other) is None
