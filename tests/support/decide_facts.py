"""A call's facts for tests of :func:`monitor.decide.decide`: an external call made while armed, by default."""

from __future__ import annotations

from typing import Any

from monitor.decide import CallFacts
from monitor.models import Leg, Level


def make_armed_send(**fields: Any) -> CallFacts:
    """An external call made while private data and untrusted content are in the context; ``fields`` override."""
    base: dict[str, Any] = {
        "call_id": "c",
        "level_before": Level.ARMED,
        "legs_before": frozenset({Leg.PRIVATE_DATA, Leg.UNTRUSTED_CONTENT}),
        "legs_call": frozenset({Leg.EXTERNAL_COMMUNICATION}),
        "rule_ids": (),
        "arguments_available": True,
        "destinations": (),
        "fragments": (),
    }
    base.update(fields)
    return CallFacts(**base)
