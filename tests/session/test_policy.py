"""The ``reviewed-only`` policy through :class:`SessionMonitor`: one test per rule of the application policy
(docs/policy.md), mirroring the annotation note's examples, and the approval store and scope file.

Tool definitions are ``tools/list`` entries as the MCP specification (2025-06-18, "Tools": ``name``,
``inputSchema``, ``annotations.readOnlyHint``) gives them; results are ``CallToolResult`` objects (``content``
blocks, ``isError``) of the same specification.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from monitor.classify import RuleSet, load_rules
from monitor.decide import Policy, PolicyMode, Scope, load_scope
from monitor.errors import InputError, RuleLoadError
from monitor.models import (
    Action,
    Classification,
    Decision,
    Leg,
    LegSource,
    Level,
    OverrideMatch,
    Provenance,
    Reason,
    ToolContext,
)
from monitor.session import SessionMonitor
from monitor.session._approvals import ApprovalStore, hash_arguments

RULE_FILE = """\
id: 5b0c8a44-3d55-4a8e-9f0e-0c6f7c1d2e11
title: Notes server
status: test
author: tests
date: 2026-12-01
server: notes
tools:
  - match: search_notes
    legs: [private_data]
    read_only: true
    reason: Reads the user's notes.
  - match: create_note
    legs: []
    read_only: false
    reason: Writes a note of the user's.
  - match: set_status
    legs: []
    read_only: false
    retry: safe
    reason: Sets a status; setting it twice is the same as setting it once.
  - match: send_mail
    legs: [external_communication]
    destinations: [to]
    reason: Sends an e-mail.
"""

# tools/list entries (MCP 2025-06-18, "Tools"); lookup claims to be read-only but no reviewed rule covers it.
TOOLS: list[dict[str, Any]] = [
    {"name": "search_notes", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}},
    {"name": "create_note", "inputSchema": {"type": "object"}},
    {"name": "set_status", "inputSchema": {"type": "object"}, "annotations": {"idempotentHint": True}},
    {"name": "send_mail", "inputSchema": {"type": "object"}},
    {"name": "lookup", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}},
    {"name": "touch_note", "inputSchema": {"type": "object"}, "annotations": {"idempotentHint": True}},
]
OK = {"content": [{"type": "text", "text": "done"}], "isError": False}
FAILED = {"content": [{"type": "text", "text": "upstream timeout"}], "isError": True}


@pytest.fixture(scope="module")
def rules(tmp_path_factory: pytest.TempPathFactory) -> RuleSet:
    folder = tmp_path_factory.mktemp("rules")
    (folder / "notes.yaml").write_text(RULE_FILE)
    return load_rules([folder], builtin=False)


def make_monitor(
    rules: RuleSet, scope: Scope | None = None, mode: PolicyMode = PolicyMode.REVIEWED_ONLY
) -> SessionMonitor:
    monitor = SessionMonitor(policy=Policy(mode=mode, scope=scope), rules=rules)
    monitor.register_tools("s", "notes", TOOLS)
    return monitor


def reasons(decision: Decision) -> set[str]:
    return {r.value for r in decision.reasons}


# -- rule 1: a tool with no reviewed record goes to review, whatever it claims --------------------------------


def test_an_unknown_tool_claiming_read_only_goes_to_review(rules: RuleSet) -> None:
    decision = make_monitor(rules).before_call("s", "notes", "lookup", {"q": "milk"}, "c1")
    assert decision.action is Action.REVIEW
    assert Reason.TOOL_UNREVIEWED in decision.reasons


def test_a_reviewed_read_is_allowed(rules: RuleSet) -> None:
    decision = make_monitor(rules).before_call("s", "notes", "search_notes", {"q": "milk"}, "c1")
    assert decision.action is Action.ALLOW
    assert not reasons(decision) & {"tool-unreviewed", "approval-required", "reconcile", "out-of-scope"}


# -- rule 2: out of scope is denied, naming what was outside ------------------------------------------------------


def test_a_call_to_a_server_outside_the_scope_is_denied_naming_it(rules: RuleSet) -> None:
    monitor = make_monitor(rules, Scope(servers=("mail",)))
    decision = monitor.before_call("s", "notes", "search_notes", {"q": "milk"}, "c1")
    assert decision.action is Action.DENY
    assert Reason.OUT_OF_SCOPE in decision.reasons
    assert [e.detail for e in decision.evidence if e.kind.value == "scope"] == ["server notes"]


def test_a_destination_outside_the_scope_is_denied_and_one_inside_is_not(rules: RuleSet) -> None:
    monitor = make_monitor(rules, Scope(servers=("notes",), destinations=("example.org",)))
    monitor.approve("s", "notes", "send_mail", {"to": "eve@attacker.test", "body": "hi"})
    monitor.approve("s", "notes", "send_mail", {"to": "sam@mail.example.org", "body": "hi"})
    outside = monitor.before_call("s", "notes", "send_mail", {"to": "eve@attacker.test", "body": "hi"}, "c1")
    inside = monitor.before_call("s", "notes", "send_mail", {"to": "sam@mail.example.org", "body": "hi"}, "c2")
    assert outside.action is Action.DENY
    assert "destination eve@attacker.test" in [e.detail for e in outside.evidence]
    assert inside.action is Action.ALLOW and Reason.OUT_OF_SCOPE not in inside.reasons


@pytest.mark.parametrize("key", ["target", "host", "server", "base_url", "callback", "forward_to", "reply_to", "body"])
def test_a_place_named_under_any_argument_is_checked_against_the_scope(rules: RuleSet, key: str) -> None:
    """Beside the recipient, a place named under any other argument (a target, a host, a callback, a link in the
    body) is outside the scope unless the scope lists it."""
    monitor = make_monitor(rules, Scope(servers=("notes",), destinations=("example.org",)))
    arguments = {"to": "sam@example.org", key: "https://collector.evil.test/in"}
    monitor.approve("s", "notes", "send_mail", arguments)
    decision = monitor.before_call("s", "notes", "send_mail", arguments, "c1")
    assert decision.action is Action.DENY
    assert "destination collector.evil.test" in [e.detail for e in decision.evidence]


def test_a_url_is_checked_as_every_client_reads_it(rules: RuleSet) -> None:
    """``https://example.org\\@evil.test`` is example.org to a browser and evil.test to Python's URL handling: a
    scope of example.org does not cover it."""
    monitor = make_monitor(rules, Scope(servers=("notes",), destinations=("example.org",)))
    arguments = {"to": "sam@example.org", "url": "https://example.org\\@evil.test/upload"}
    monitor.approve("s", "notes", "send_mail", arguments)
    decision = monitor.before_call("s", "notes", "send_mail", arguments, "c1")
    assert decision.action is Action.DENY
    assert "destination evil.test" in [e.detail for e in decision.evidence]


def test_arguments_that_cannot_be_examined_count_against_a_destination_scope(rules: RuleSet) -> None:
    monitor = make_monitor(rules, Scope(destinations=("example.org",)))
    monitor.approve("s", "notes", "send_mail", None)
    decision = monitor.before_call("s", "notes", "send_mail", None, "c1")
    assert decision.action is Action.DENY and Reason.OUT_OF_SCOPE in decision.reasons


def test_a_tool_outside_the_scope_is_denied_and_the_session_scope_replaces_the_policy_one(rules: RuleSet) -> None:
    monitor = make_monitor(rules, Scope(tools=("notes/search_*",)))
    assert monitor.before_call("s", "notes", "search_notes", {"q": "a"}, "c1").action is Action.ALLOW
    denied = monitor.before_call("s", "notes", "create_note", {"text": "a"}, "c2")
    assert denied.action is Action.DENY and "tool notes/create_note" in [e.detail for e in denied.evidence]
    monitor.set_scope("s", Scope(tools=("create_note",)))
    assert monitor.before_call("s", "notes", "search_notes", {"q": "b"}, "c3").action is Action.DENY


# -- rule 3: a write needs an approval on record, used once ----------------------------------------------------


def test_a_write_is_confirmed_then_allowed_once_approved_then_confirmed_again(rules: RuleSet) -> None:
    monitor = make_monitor(rules)
    first = monitor.before_call("s", "notes", "create_note", {"text": "buy milk", "folder": "todo"}, "c1")
    assert first.action is Action.CONFIRM and Reason.APPROVAL_REQUIRED in first.reasons
    monitor.after_call("s", "c1", OK)
    # the host recorded the user's approval (key order does not matter: the arguments are hashed canonically)
    monitor.approve("s", "notes", "create_note", {"folder": "todo", "text": "buy milk"})
    second = monitor.before_call("s", "notes", "create_note", {"text": "buy milk", "folder": "todo"}, "c2")
    assert second.action is Action.ALLOW and Reason.APPROVAL_USED in second.reasons
    monitor.after_call("s", "c2", OK)
    third = monitor.before_call("s", "notes", "create_note", {"text": "buy milk", "folder": "todo"}, "c3")
    assert third.action is Action.CONFIRM and Reason.APPROVAL_REQUIRED in third.reasons


def test_an_approval_covers_only_the_exact_arguments_and_tool(rules: RuleSet) -> None:
    monitor = make_monitor(rules)
    monitor.approve("s", "notes", "create_note", {"text": "buy milk", "folder": "todo"})
    other_folder = monitor.before_call("s", "notes", "create_note", {"text": "buy milk", "folder": "work"}, "c1")
    other_tool = monitor.before_call("s", "notes", "set_status", {"text": "buy milk", "folder": "todo"}, "c2")
    assert other_folder.action is Action.CONFIRM and other_tool.action is Action.CONFIRM
    monitor.register_tools("other", "notes", TOOLS)
    elsewhere = monitor.before_call("other", "notes", "create_note", {"text": "buy milk", "folder": "todo"}, "c3")
    assert elsewhere.action is Action.CONFIRM and Reason.APPROVAL_REQUIRED in elsewhere.reasons
    # The approval is still on record in its own session.
    assert monitor.before_call("s", "notes", "create_note", {"text": "buy milk", "folder": "todo"}, "c4").action is (
        Action.ALLOW
    )


def test_arguments_json_cannot_write_never_share_an_approval(rules: RuleSet) -> None:
    """Mixed key types cannot be sorted into canonical JSON: such arguments get a hash that matches nothing else,
    not even the same arguments again, so reused memory of freed arguments cannot match either."""
    mixed = {1: "x", "path": "/tmp/safe"}
    assert hash_arguments(mixed) != hash_arguments(mixed)
    monitor = make_monitor(rules)
    monitor.approve("s", "notes", "create_note", {1: "x", "path": "/tmp/safe"})
    decision = monitor.before_call("s", "notes", "create_note", {1: "x", "path": "/victim"}, "c1")
    assert Reason.APPROVAL_USED not in decision.reasons


def test_a_reusable_approval_allows_every_identical_write(rules: RuleSet) -> None:
    monitor = make_monitor(rules)
    monitor.approve("s", "notes", "create_note", {"text": "x"}, reusable=True)
    for i in range(3):
        decision = monitor.before_call("s", "notes", "create_note", {"text": "x"}, f"c{i}")
        assert decision.action is Action.ALLOW, decision.reasons
        monitor.after_call("s", f"c{i}", OK)


def test_a_denied_call_leaves_its_approval_on_record(rules: RuleSet) -> None:
    monitor = make_monitor(rules, Scope(servers=("mail",)))
    monitor.approve("s", "notes", "create_note", {"text": "x"})
    denied = monitor.before_call("s", "notes", "create_note", {"text": "x"}, "c1")
    assert denied.action is Action.DENY  # it never runs: the approval stays on record
    monitor.set_scope("s", Scope(servers=("notes",)))
    allowed = monitor.before_call("s", "notes", "create_note", {"text": "x"}, "c2")
    assert allowed.action is Action.ALLOW and Reason.APPROVAL_USED in allowed.reasons
    monitor.after_call("s", "c2", OK)
    again = monitor.before_call("s", "notes", "create_note", {"text": "x"}, "c3")
    assert again.action is Action.CONFIRM and Reason.APPROVAL_REQUIRED in again.reasons


def test_an_approval_never_lowers_the_session_level(rules: RuleSet) -> None:
    monitor = make_monitor(rules)
    monitor.observe_user_message("s", "note my bank PIN 4411 somewhere")
    monitor.before_call("s", "notes", "search_notes", {"q": "pin"}, "c1")
    monitor.after_call("s", "c1", {"content": [{"type": "text", "text": "PIN 4411"}]})
    before = monitor.session("s").level
    monitor.approve("s", "notes", "create_note", {"text": "x"})
    monitor.before_call("s", "notes", "create_note", {"text": "x"}, "c2")
    assert monitor.session("s").level.rank >= before.rank >= Level.PARTIAL.rank


# -- rule 4: a retry whose earlier outcome is unknown must reconcile ----------------------------------------------


@pytest.mark.parametrize("outcome", ["missing", "error"])
def test_an_uncertain_retry_must_reconcile(rules: RuleSet, outcome: str) -> None:
    monitor = make_monitor(rules)
    monitor.approve("s", "notes", "create_note", {"text": "pay rent"}, reusable=True)
    assert monitor.before_call("s", "notes", "create_note", {"text": "pay rent"}, "c1").action is Action.ALLOW
    if outcome == "error":
        monitor.after_call("s", "c1", FAILED)
    retry = monitor.before_call("s", "notes", "create_note", {"text": "pay rent"}, "c2")
    assert retry.action is Action.CONFIRM and Reason.RECONCILE in retry.reasons
    assert any("c1" in e.detail for e in retry.evidence)


def test_an_error_reported_by_the_host_flag_also_counts(rules: RuleSet) -> None:
    monitor = make_monitor(rules)
    monitor.approve("s", "notes", "create_note", {"text": "a"}, reusable=True)
    monitor.before_call("s", "notes", "create_note", {"text": "a"}, "c1")
    monitor.after_call("s", "c1", {"content": [{"type": "text", "text": "?"}]}, is_error=True)
    assert Reason.RECONCILE in monitor.before_call("s", "notes", "create_note", {"text": "a"}, "c2").reasons


def test_a_repeat_after_a_success_does_not_reconcile(rules: RuleSet) -> None:
    monitor = make_monitor(rules)
    monitor.approve("s", "notes", "create_note", {"text": "pay rent"}, reusable=True)
    monitor.before_call("s", "notes", "create_note", {"text": "pay rent"}, "c1")
    monitor.after_call("s", "c1", OK)
    again = monitor.before_call("s", "notes", "create_note", {"text": "pay rent"}, "c2")
    assert again.action is Action.ALLOW and Reason.RECONCILE not in again.reasons


def test_a_retry_of_a_tool_with_a_declared_retry_contract_does_not_reconcile(rules: RuleSet) -> None:
    monitor = make_monitor(rules)
    monitor.approve("s", "notes", "set_status", {"status": "away"}, reusable=True)
    monitor.before_call("s", "notes", "set_status", {"status": "away"}, "c1")
    monitor.after_call("s", "c1", FAILED)
    retry = monitor.before_call("s", "notes", "set_status", {"status": "away"}, "c2")
    assert retry.action is Action.ALLOW and Reason.RECONCILE not in retry.reasons


class ReviewedElsewhere:
    """An override source other than the rule packs (a team's own review database) with the same contract."""

    def classify(self, tool: ToolContext) -> OverrideMatch | None:
        contracts = {"lookup": (True, False), "touch_note": (False, True)}  # (read_only, retry_safe)
        if tool.name not in contracts:
            return None
        read_only, retry_safe = contracts[tool.name]
        given = {Leg.PRIVATE_DATA: Provenance(source=LegSource.OVERRIDE, rule=f"db:{tool.name}")} if read_only else {}
        return OverrideMatch(
            Classification(provenance=given), (f"db:{tool.name}",), read_only=read_only, retry_safe=retry_safe
        )

    def trust_for(self, server: str) -> bool | None:
        return None


def test_another_override_source_gives_the_read_and_retry_contract_too() -> None:
    monitor = SessionMonitor(
        policy=Policy(mode=PolicyMode.REVIEWED_ONLY), rules=ReviewedElsewhere()
    )
    monitor.register_tools("s", "notes", TOOLS)
    read = monitor.before_call("s", "notes", "lookup", {"q": "milk"}, "c1")
    assert read.action is Action.ALLOW and not reasons(read) & {"tool-unreviewed", "approval-required"}
    monitor.approve("s", "notes", "touch_note", {"id": 7}, reusable=True)
    monitor.before_call("s", "notes", "touch_note", {"id": 7}, "c2")
    monitor.after_call("s", "c2", FAILED)
    retry = monitor.before_call("s", "notes", "touch_note", {"id": 7}, "c3")
    assert retry.action is Action.ALLOW and Reason.RECONCILE not in retry.reasons


def test_an_idempotent_hint_alone_is_not_a_retry_contract(rules: RuleSet) -> None:
    monitor = make_monitor(rules)
    monitor.before_call("s", "notes", "touch_note", {"id": 7}, "c1")
    retry = monitor.before_call("s", "notes", "touch_note", {"id": 7}, "c2")
    assert Reason.RECONCILE in retry.reasons and retry.action is Action.REVIEW


def test_a_different_argument_is_not_a_retry(rules: RuleSet) -> None:
    monitor = make_monitor(rules)
    monitor.before_call("s", "notes", "create_note", {"text": "a", "folder": "x"}, "c1")
    other = monitor.before_call("s", "notes", "create_note", {"text": "a", "folder": "y"}, "c2")
    assert Reason.RECONCILE not in other.reasons


# -- the default policy is unchanged --------------------------------------------------------------------------------


def test_the_default_policy_reads_none_of_it(rules: RuleSet) -> None:
    monitor = make_monitor(rules, Scope(servers=("mail",)), mode=PolicyMode.DEFAULT)
    for i, (tool, args) in enumerate(
        [("lookup", {"q": "a"}), ("create_note", {"text": "a"}), ("create_note", {"text": "a"})]
    ):
        decision = monitor.before_call("s", "notes", tool, args, f"c{i}")
        assert decision.action is Action.ALLOW
        assert reasons(decision) <= {"no-external-communication", "not-armed"}


# -- the rule field, the scope file, the approval store ------------------------------------------------------------


def test_a_rule_file_declares_a_retry_contract_and_a_bad_one_is_named_by_line(tmp_path: Path) -> None:
    (tmp_path / "good.yaml").write_text(RULE_FILE)
    entries = {t.match: t for t in load_rules([tmp_path], builtin=False).rules[0].rule.tools}
    assert entries["set_status"].retry == "safe" and entries["create_note"].retry is None
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "bad.yaml").write_text(RULE_FILE.replace("retry: safe", "retry: maybe"))
    with pytest.raises(RuleLoadError) as caught:
        load_rules([bad], builtin=False)
    line = RULE_FILE.splitlines().index("    retry: safe") + 1
    assert f"{bad / 'bad.yaml'}:{line}: tools.2.retry" in str(caught.value)


def test_a_scope_file_in_yaml_or_json_and_its_errors_by_line(tmp_path: Path) -> None:
    yaml_file = tmp_path / "scope.yaml"
    yaml_file.write_text("servers: [notes]\ntools: ['notes/*']\ndestinations:\n  - example.org\n")
    json_file = tmp_path / "scope.json"
    json_file.write_text(json.dumps({"servers": ["notes"], "tools": ["notes/*"], "destinations": ["example.org"]}))
    assert (
        load_scope(yaml_file)
        == load_scope(json_file)
        == Scope(servers=("notes",), tools=("notes/*",), destinations=("example.org",))
    )
    bad = tmp_path / "bad.yaml"
    bad.write_text("servers: [notes]\n\nservrs: [mail]\n")
    with pytest.raises(InputError, match=r"bad\.yaml:3: servrs"):
        load_scope(bad)
    with pytest.raises(InputError, match=r"list\.yaml:1: a scope file is a mapping"):
        (tmp_path / "list.yaml").write_text("- notes\n")
        load_scope(tmp_path / "list.yaml")


def test_the_approval_store_is_bounded_and_safe_across_threads() -> None:
    store = ApprovalStore(limit=50)
    digests = [hash_arguments({"n": i}) for i in range(200)]

    def add(start: int) -> None:
        for i in range(start, 200, 4):
            store.add("srv", "tool", {"n": i})

    threads = [threading.Thread(target=add, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(store) == 50
    taken = [store.use("srv", "tool", d) for d in digests]
    assert sum(taken) == 50 and len(store) == 0
    assert hash_arguments({"a": 1, "b": [1, "é"]}) == hash_arguments({"b": [1, "é"], "a": 1})


def test_the_built_in_claude_code_pack_marks_its_file_reads_as_reads_and_its_edits_as_writes() -> None:
    """The reviewed pack for Claude Code's built-in tools (rules/claude-code/builtin.yaml) says which tools only
    read: under the policy a Read runs, an Edit waits for an approval, and an unreviewed tool goes to review."""
    monitor = SessionMonitor(policy=Policy(mode=PolicyMode.REVIEWED_ONLY))
    read = monitor.before_call("cc", "claude-code", "Read", {"file_path": "src/app.py"}, "r1")
    assert read.action is Action.ALLOW
    edit = monitor.before_call("cc", "claude-code", "Edit", {"file_path": "src/app.py", "old_string": "a"}, "e1")
    assert edit.action is Action.CONFIRM and Reason.APPROVAL_REQUIRED in edit.reasons
    unknown = monitor.before_call("cc", "claude-code", "Frobnicate", {}, "u1")
    assert unknown.action is Action.REVIEW


def test_a_tool_whose_action_metadata_requires_review_is_confirmed_even_when_reviewed(rules: RuleSet) -> None:
    """action-metadata.mdx (SEP-2061): ``requiresReview: true`` in the tool's annotations asks the host for a
    person's confirmation before invocation. A reviewed read that says so is confirmed; one that says
    ``requiresReview: false`` is allowed; a value that is not a boolean counts as the request."""
    key = "io.modelcontextprotocol/action-metadata"

    def decide_with(requires: Any) -> Decision:
        listed = {"name": "search_notes", "inputSchema": {"type": "object"}}
        listed["annotations"] = {"readOnlyHint": True, key: {"requiresReview": requires}}
        monitor = SessionMonitor(policy=Policy(mode=PolicyMode.REVIEWED_ONLY), rules=rules)
        monitor.register_tools("s", "notes", [listed])
        return monitor.before_call("s", "notes", "search_notes", {"q": "milk"}, "c1")

    asked = decide_with(True)
    assert asked.action is Action.CONFIRM and Reason.REVIEW_REQUESTED in asked.reasons
    assert decide_with(False).action is Action.ALLOW
    assert Reason.REVIEW_REQUESTED in decide_with("yes").reasons
    default = SessionMonitor(rules=rules)
    default.register_tools("s", "notes", [{"name": "search_notes", "annotations": {key: {"requiresReview": True}}}])
    assert default.before_call("s", "notes", "search_notes", {"q": "milk"}, "c1").action is Action.ALLOW


def test_a_reviewed_read_that_reaches_a_remote_server_is_a_write() -> None:
    """rules/claude-code/builtin.yaml: Read is a reviewed read, but a UNC path reads from a remote server (its
    rule adds external communication): under the policy that call waits for an approval like any send."""
    monitor = SessionMonitor(policy=Policy(mode=PolicyMode.REVIEWED_ONLY))
    local = monitor.before_call("cc", "claude-code", "Read", {"file_path": "src/app.py"}, "r1")
    remote = monitor.before_call("cc", "claude-code", "Read", {"file_path": r"\\files.example\share\x.txt"}, "r2")
    assert local.action is Action.ALLOW
    assert remote.action is Action.CONFIRM and Reason.APPROVAL_REQUIRED in remote.reasons


def test_a_denied_write_never_ran_so_repeating_it_is_no_retry(rules: RuleSet) -> None:
    monitor = make_monitor(rules, scope=Scope(servers=("elsewhere",)))
    denied = monitor.before_call("s", "notes", "create_note", {"text": "x"}, "c1")
    assert denied.action is Action.DENY
    monitor.set_scope("s", Scope(servers=("notes",)))
    again = monitor.before_call("s", "notes", "create_note", {"text": "x"}, "c2")
    assert again.action is Action.CONFIRM and Reason.RECONCILE not in again.reasons


def test_a_scope_file_that_restricts_nothing_is_refused(tmp_path: Path) -> None:
    """An empty mapping, or lists left empty (null), would let every call through unnoticed."""
    for text in ("{}\n", "servers:\n"):
        path = tmp_path / "scope.yaml"
        path.write_text(text)
        with pytest.raises(InputError, match="restricts nothing") as caught:
            load_scope(path)
        assert f"{path}:1" in str(caught.value)
    assert load_scope_text(tmp_path, "servers: []\n").servers == ()  # allows no server: restricts everything


def load_scope_text(folder: Path, text: str) -> Scope:
    path = folder / "scope.yaml"
    path.write_text(text)
    return load_scope(path)
