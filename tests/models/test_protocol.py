"""``monitor.models`` protocol table: the known MCP versions and the features readers and lint depend on.

Versions and features from the specification changelogs (modelcontextprotocol/modelcontextprotocol,
``docs/specification/<version>/changelog.mdx``) and ``schema/<version>/schema.ts``.
"""

from __future__ import annotations

import pytest

from monitor.models import (
    LATEST_PROTOCOL_VERSION,
    PROTOCOL_VERSIONS,
    find_first_version,
    find_protocol_version,
    infer_protocol_version,
    is_protocol_date,
    is_sessionless_protocol,
)


def test_the_table_holds_every_released_version_oldest_first() -> None:
    versions = [entry.version for entry in PROTOCOL_VERSIONS]
    assert versions == ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]
    assert LATEST_PROTOCOL_VERSION == "2026-07-28"


def test_features_follow_the_changelogs() -> None:
    assert find_first_version("tool_annotations") == "2025-03-26"
    assert find_first_version("structured_tool_output") == "2025-06-18"
    assert find_first_version("elicitation") == "2025-06-18"
    assert find_first_version("elicitation_modes") == "2025-11-25"
    assert find_first_version("request_meta") == "2026-07-28"
    assert find_first_version("result_type") == "2026-07-28"
    batches = [entry.version for entry in PROTOCOL_VERSIONS if entry.batches]
    assert batches == ["2025-03-26"]  # added in 2025-03-26, removed in 2025-06-18
    handshake = [entry.version for entry in PROTOCOL_VERSIONS if entry.handshake]
    assert handshake == ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
    latest = find_protocol_version("2026-07-28")
    assert latest is not None
    assert {"initialize", "notifications/initialized", "ping", "logging/setLevel"} <= latest.removed_methods
    with pytest.raises(ValueError):
        find_first_version("version")


def test_unknown_versions_never_raise_and_take_the_features_of_the_latest_known_before_them() -> None:
    assert find_protocol_version("2025-06-19") is None
    assert find_protocol_version(None) is None
    assert find_protocol_version(20250618) is None
    entry = infer_protocol_version("2025-06-19")
    assert entry is not None and entry.version == "2025-06-18"
    entry = infer_protocol_version("2027-01-01")
    assert entry is not None and entry.version == "2026-07-28"
    assert infer_protocol_version("2024-10-07") is None  # a draft before the first release
    assert infer_protocol_version("latest") is None
    assert is_protocol_date("2024-10-07") and not is_protocol_date("2025-6-18") and not is_protocol_date(None)


def test_sessionless_from_2026_07_28_on() -> None:
    assert is_sessionless_protocol("2026-07-28")
    assert is_sessionless_protocol("2027-02-01")
    assert not is_sessionless_protocol("2026-07-27")
    assert not is_sessionless_protocol("2025-11-25")
    assert not is_sessionless_protocol(None)
    assert not is_sessionless_protocol("garbage")
