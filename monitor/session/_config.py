"""The one configuration value of a :class:`~monitor.session.SessionMonitor`, which every way of making one takes:
the library, the span processor, scale-out workers, the hosts and the command line."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from monitor.classify import load_builtin_rules
from monitor.decide import Policy
from monitor.evidence import ReadBounds
from monitor.models import Posture
from monitor.types import OverrideSource

RuleChoice = OverrideSource | Literal["builtin", "none"]
"""The reviewed overrides a monitor asks first: a source of them (a :class:`~monitor.classify.RuleSet`, from
:func:`~monitor.classify.load_rules`), the built-in packs (``"builtin"``), or none (``"none"``)."""


class MonitorConfig(BaseModel):
    """How a :class:`~monitor.session.SessionMonitor` classifies and decides: its posture, its policy, the
    reviewed overrides it asks first (``rules``: see :data:`RuleChoice`; the built-in packs by default), how
    much private content a session indexes (``evidence_budget``) and the limits on reading one result
    (``read_bounds``). Frozen: :meth:`replace` returns a changed copy, validated again.

    ``rules=None`` is read as the default, the built-in packs (as ``SessionMonitor(rules=None)`` always was);
    ``rules="none"`` asks no reviewed overrides at all."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    posture: Posture = Posture.BALANCED
    policy: Policy = Field(default_factory=Policy)
    rules: RuleChoice = "builtin"
    evidence_budget: int = Field(default=50_000, ge=1)
    """Fingerprints and listed values a session's content index keeps; past it the oldest content goes."""
    read_bounds: ReadBounds = Field(default_factory=ReadBounds)

    @field_validator("rules", mode="before")
    @classmethod
    def _read_none_as_builtin(cls, value: Any) -> Any:
        return "builtin" if value is None else value

    def replace(self, **changes: Any) -> MonitorConfig:
        """Return a copy with ``changes`` (field names and values), validated as a new configuration is."""
        return MonitorConfig(**{**{name: getattr(self, name) for name in type(self).model_fields}, **changes})

    def load_rules(self) -> OverrideSource | None:
        """Return the override source this configuration names (the built-in packs loaded now), or None."""
        if self.rules == "builtin":
            return load_builtin_rules()
        if self.rules == "none":
            return None
        return self.rules
