"""The security invariant extended to server-sent result labels, checked on drawn payloads.

See docs/design.md, "The security invariant" and "Server-sent labels".

Payloads are drawn over the real shapes (trust-annotations ``sensitive``/``untrusted`` and its ``ifc.fides.v1``
evidenceRef, draft of 2026-06-10; the GitHub MCP server's ``_meta.ifc``; the early SEP-1913 result hints), mixed
with junk: wrong types, missing keys, nested content blocks, ``_meta`` that is not an object.

- From an untrusted server, every call's legs and the session's legs after a labelled result include those the
  same session gets when the result carries no labels at all.
- From a trusted server, the only legs that go are the documented removals: untrusted content when the result
  says ``integrity: trusted`` and private data when it says ``confidentiality: public``, both for the whole
  result, and never a leg a reviewed rule gave.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st
from properties.sessions import PROFILES

from monitor import Leg, SessionMonitor
from monitor.classify import TRUST_ANNOTATIONS_KEY, LabelClaim, load_rules, read_result_labels
from monitor.models import LegSource

_PROFILE = PROFILES[os.environ.get("TRIFECTA_PROPERTIES", "ci")]
settings = _PROFILE if _PROFILE.max_examples >= 300 else type(_PROFILE)(_PROFILE, max_examples=300)
LOWERING = {"integrity": "trusted", "confidentiality": "public"}

RULES = load_rules([Path(__file__).resolve().parents[1] / "data" / "labels" / "rules"], builtin=False)

JUNK = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)
INTEGRITY = st.sampled_from(["trusted", "untrusted"]) | JUNK
CONFIDENTIALITY = (
    st.sampled_from(["public", "private"]) | st.lists(st.sampled_from(["public", "alice", "bob"]), max_size=3) | JUNK
)
# The labels github-mcp-server's ifc.go gives (PublicUntrusted, PrivateTrusted, PrivateUntrusted, trusted).
GITHUB_IFC = st.sampled_from(
    [
        {"integrity": "untrusted", "confidentiality": ["public"]},
        {"integrity": "trusted", "confidentiality": ["alice", "bob"]},
        {"integrity": "untrusted", "confidentiality": ["alice"]},
        {"integrity": "trusted", "confidentiality": "public"},
        {"integrity": "trusted"},
    ]
)
IFC = (
    GITHUB_IFC | st.fixed_dictionaries({}, optional={"integrity": INTEGRITY, "confidentiality": CONFIDENTIALITY}) | JUNK
)
EVIDENCE = st.fixed_dictionaries(
    {"type": st.sampled_from(["ifc.fides.v1", "data-class.v1"]) | JUNK},
    optional={"integrity": INTEGRITY, "confidentiality": CONFIDENTIALITY, "record": IFC, "digest": st.just("sha256:0")},
)
TRUST_ANNOTATIONS = (
    st.fixed_dictionaries(
        {},
        optional={"sensitive": st.booleans() | JUNK, "untrusted": st.booleans() | JUNK, "evidenceRef": EVIDENCE | JUNK},
    )
    | JUNK
)
META = (
    st.fixed_dictionaries(
        {},
        optional={
            "ifc": IFC,
            TRUST_ANNOTATIONS_KEY: TRUST_ANNOTATIONS,
            "privateHint": st.booleans() | JUNK,
            "openWorldHint": st.booleans() | JUNK,
            "progressToken": JUNK,
        },
    )
    | JUNK
)
BLOCK = st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=12)}, optional={"_meta": META}) | JUNK
RESULT = st.fixed_dictionaries(
    {"content": st.lists(BLOCK, max_size=5) | JUNK},
    optional={"_meta": META, "annotations": META, "isError": st.booleans()},
)
TOOLS = {
    "reviewed_read": {},
    "get_file_contents": {"openWorldHint": False},
    "list_issues": {"openWorldHint": True},
    "get_me": {},
}


def _strip(result: dict[str, Any]) -> dict[str, Any]:
    """The same result with no labels anywhere."""
    bare = {k: v for k, v in result.items() if k not in ("_meta", "annotations")}
    if isinstance(bare["content"], list):
        bare["content"] = [
            {k: v for k, v in b.items() if k != "_meta"} if isinstance(b, dict) else b for b in bare["content"]
        ]
    return bare


def _run(name: str, trusted: bool, result: Any) -> tuple[Any, frozenset[Leg]]:
    m = SessionMonitor(rules=RULES)
    definition = {"name": name, "inputSchema": {"type": "object"}, "annotations": TOOLS[name]}
    m.register_tools("s", "app", [definition], trusted=trusted)
    m.before_call("s", "app", name, {"owner": "alice", "repo": "pacman"}, "c1")
    m.after_call("s", "c1", result)
    legs = frozenset(m.session("s").legs)
    (call,) = m.end_session("s").calls
    assert m.internal_errors == 0
    return call, legs


@settings
@given(result=RESULT, name=st.sampled_from(sorted(TOOLS)))
@example(result={"content": [], "_meta": {"ifc": LOWERING}}, name="get_file_contents")
def test_an_untrusted_servers_labels_never_remove_a_leg(result: dict[str, Any], name: str) -> None:
    labelled, session_legs = _run(name, False, result)
    bare, bare_session_legs = _run(name, False, _strip(result))
    assert set(labelled.legs) >= set(bare.legs)
    assert session_legs >= bare_session_legs


@settings
@given(result=RESULT, name=st.sampled_from(sorted(TOOLS)))
@example(result={"content": [], "_meta": {"ifc": LOWERING}}, name="reviewed_read")
@example(result={"content": [{"type": "text", "text": "x", "_meta": {"ifc": LOWERING}}]}, name="list_issues")
@example(result={"content": [{"type": "text", "text": "x"}] * 300, "_meta": {"ifc": LOWERING}}, name="get_me")
def test_a_trusted_servers_labels_remove_only_the_documented_legs(result: dict[str, Any], name: str) -> None:
    labelled, _ = _run(name, True, result)
    bare, _ = _run(name, True, _strip(result))
    labels = read_result_labels(result)
    removed = set(bare.legs) - set(labelled.legs)
    claims = {LabelClaim.TRUSTED: Leg.UNTRUSTED_CONTENT, LabelClaim.PUBLIC: Leg.PRIVATE_DATA}
    allowed = {
        leg
        for claim, leg in claims.items()
        if not labels.incomplete and any(label.whole_result for label in labels.claims(claim))
    }
    assert removed <= allowed
    for leg in removed:
        assert bare.provenance[leg].source is not LegSource.OVERRIDE
