"""The classifier: runs the layers of DESIGN §3 over a call and returns legs with provenance."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from monitor.classify._layers import LAYERS, combine_opinions
from monitor.classify._overrides import RuleSet, UncheckedPin
from monitor.models import Classification, Leg, LegSource, PinMismatch, Posture, Provenance, ToolContext
from monitor.types import OverrideSource

_RESULT_HINT_LEGS: dict[str, Leg] = {
    "privateHint": Leg.PRIVATE_DATA,
    "sensitiveHint": Leg.PRIVATE_DATA,
    "openWorldHint": Leg.UNTRUSTED_CONTENT,
    "maliciousActivityHint": Leg.UNTRUSTED_CONTENT,
}


@dataclass(frozen=True)
class CallClassification:
    """The legs of one call, the reviewed rules that decided them, the argument paths a rule declares as
    destinations, a pin the session's definition voided (if any), and a pinned rule that could not be
    checked because the session listed no definition of the tool (``unchecked``, if any)."""

    classification: Classification
    rule_ids: tuple[str, ...] = ()
    destinations: tuple[str, ...] = ()
    voided: PinMismatch | None = None
    unchecked: UncheckedPin | None = None


class Classifier:
    """Classifies calls: reviewed overrides first, then annotations, heuristics and the posture default."""

    def __init__(self, posture: Posture = Posture.BALANCED, overrides: OverrideSource | None = None) -> None:
        self.posture = Posture(posture)
        self.overrides = overrides
        self._layers = LAYERS[self.posture]
        self._cache: dict[tuple[str, str, str | None, bool], Classification] = {}

    def trust_for(self, server: str, host_says: bool) -> bool:
        """Return a server's trust: what the reviewed rules say, else what the host said. Only a trusted server's
        hints may lower risk (``openWorldHint: false``)."""
        reviewed = self.overrides.trust_for(server) if self.overrides is not None else None
        return host_says if reviewed is None else reviewed

    def classify(self, tool: ToolContext) -> CallClassification:
        """Return the legs of a call to ``tool`` (its arguments in ``tool.arguments``), each with its provenance,
        the reviewed rule ids that decided them and the argument paths a rule declares as destinations.

        A reviewed entry whose pin the listed definition voids is passed over, and named in ``voided``. A pinned
        entry for a tool the session listed no definition of is not taken as reviewed either: the other layers
        answer, its legs are added to theirs, and it is named in ``unchecked``. In both cases the trust the rule
        files give the server is not used for this tool (its hints cannot lower risk)."""
        voided = unchecked = None
        if self.overrides is not None:
            if isinstance(self.overrides, RuleSet):
                match, unchecked = self.overrides.match(tool)
            else:
                match = self.overrides.classify(tool)
            if match is not None and match.classification is not None:
                return CallClassification(match.classification, match.rule_ids, match.destinations)
            voided = match.voided if match is not None else None
            # The trust a rule file grants goes with its reviewed definitions: not for this one.
            not_reviewed = voided is not None or unchecked is not None
            if not_reviewed and tool.trusted and self.overrides.trust_for(tool.server) is not None:
                tool = replace(tool, trusted=False)
        # Layers 2-4 never look at arguments, so their answer is cached per tool definition.
        key = (tool.server, tool.name, tool.definition.definition_hash if tool.definition else None, tool.trusted)
        cached = self._cache.get(key)
        if cached is None:
            cached = combine_opinions([layer(tool) for layer in self._layers])
            if len(self._cache) > 4096:
                self._cache.clear()
            self._cache[key] = cached
        if unchecked is not None:
            return CallClassification(cached.with_added(unchecked.legs.provenance), unchecked=unchecked)
        return CallClassification(cached, voided=voided)


def classify_result_hints(result: Any) -> Mapping[Leg, Provenance]:
    """Legs a result adds through SEP-1913 hints in its ``_meta`` or ``annotations`` (true values only)."""
    if not isinstance(result, dict):
        return {}
    found: dict[Leg, Provenance] = {}
    for container_key in ("_meta", "annotations"):
        container = result.get(container_key)
        if not isinstance(container, dict):
            continue
        for hint, leg in _RESULT_HINT_LEGS.items():
            if container.get(hint) is True and leg not in found:
                found[leg] = Provenance(source=LegSource.RESULT_HINT, rule=f"{container_key}.{hint}")
    return found
