import hashlib
import json

import pytest
from pydantic import ValidationError

from monitor.models._tools import ToolAnnotations, hash_definition, parse_tool


def test_annotations_are_a_closed_set_of_strict_booleans() -> None:
    with pytest.raises(ValidationError):
        ToolAnnotations.model_validate({"openWorldHint": "false"})
    with pytest.raises(ValidationError):
        ToolAnnotations.model_validate({"readOnlyHint": True, "sneakyHint": True})
    assert ToolAnnotations.model_validate({"openWorldHint": False}).open_world is False


def test_open_world_defaults_to_true() -> None:
    assert ToolAnnotations().open_world is True


def test_string_false_is_a_finding_and_counts_as_absent() -> None:
    tool, findings = parse_tool({"name": "fetch", "annotations": {"openWorldHint": "false", "readOnlyHint": True}})
    assert tool is not None
    assert tool.annotations.openWorldHint is None
    assert tool.annotations.readOnlyHint is True
    assert [(f.id, f.pointer) for f in findings] == [("annotation-hint-not-boolean", "/annotations/openWorldHint")]
    assert '"false"' in findings[0].message


def test_unknown_annotation_member_is_a_finding_and_ignored() -> None:
    tool, findings = parse_tool({"name": "t", "annotations": {"privateHint": True, "title": "T"}}, "/tools/3")
    assert tool is not None and tool.annotations.title == "T"
    assert [(f.id, f.pointer) for f in findings] == [("annotation-unknown-member", "/tools/3/annotations/privateHint")]


def test_tool_without_name_is_reported_not_raised() -> None:
    tool, findings = parse_tool({"description": "no name"}, "/tools/0")
    assert tool is None
    assert findings[0].id == "tool-without-name"


def test_definition_hash_is_sha256_of_canonical_json() -> None:
    raw = {"name": "t", "description": "d", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}}
    canonical = json.dumps(raw, sort_keys=True, separators=(",", ":"))
    assert hash_definition(raw) == hashlib.sha256(canonical.encode()).hexdigest()
    # Fields outside the four named ones do not change the hash; any change to them does.
    assert hash_definition({**raw, "title": "x"}) == hash_definition(raw)
    assert hash_definition({**raw, "description": "d2"}) != hash_definition(raw)
