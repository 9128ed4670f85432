"""A call's facts for tests of :func:`monitor.decide.decide`: an external call made while armed, by default."""

from __future__ import annotations

import dataclasses
from typing import Any

from monitor.decide import (
    CallFacts,
    CargoFacts,
    ContextFacts,
    IntentFacts,
    RequestFacts,
    ReviewFacts,
    RouteFacts,
)
from monitor.models import Leg, Level

_GROUPS: dict[str, type[Any]] = {
    "context": ContextFacts,
    "request": RequestFacts,
    "route": RouteFacts,
    "cargo": CargoFacts,
    "intent": IntentFacts,
    "review": ReviewFacts,
}
# The fields two groups share a name of ("legs"), and the context's level, by the names a test gives them.
_RENAMED = {
    "level_before": ("context", "level"),
    "legs_before": ("context", "legs"),
    "legs_call": ("request", "legs"),
}
_GROUP_OF = {
    field.name: group
    for group, cls in _GROUPS.items()
    for field in dataclasses.fields(cls)
    if field.name not in ("level", "legs")
}


def make_armed_send(**fields: Any) -> CallFacts:
    """An external call made while private data and untrusted content are in the context; ``fields`` override.

    ``fields`` are named as the fields of the groups of :class:`~monitor.decide.CallFacts` (``destinations``,
    ``fragments``, ``reviewed``, ...), each put in its group, and ``call_id``; the context's level and legs are
    ``level_before`` and ``legs_before``, the call's legs ``legs_call``."""
    call_id = fields.pop("call_id", "c")
    groups: dict[str, dict[str, Any]] = {group: {} for group in _GROUPS}
    groups["context"].update(level=Level.ARMED, legs=frozenset({Leg.PRIVATE_DATA, Leg.UNTRUSTED_CONTENT}))
    groups["request"].update(legs=frozenset({Leg.EXTERNAL_COMMUNICATION}), rule_ids=(), arguments_available=True)
    for name, value in fields.items():
        if name in _RENAMED:
            group, field = _RENAMED[name]
        elif name in _GROUP_OF:
            group, field = _GROUP_OF[name], name
        else:
            raise TypeError(f"no call fact is named {name!r}")
        groups[group][field] = value
    return CallFacts(call_id, **{group: _GROUPS[group](**values) for group, values in groups.items()})
