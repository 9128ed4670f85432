"""The classifier: runs the layers (docs/design.md, "Classification") over a call and returns legs with provenance."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from monitor.classify._identity import IdentityClash
from monitor.classify._layers import LAYERS, combine_opinions
from monitor.classify._overrides import RuleSet, UncheckedPin
from monitor.models import (
    Classification,
    PinMismatch,
    Posture,
    ServerIdentity,
    ToolContext,
    ToolDefinition,
)
from monitor.types import OverrideSource


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
    read_only: bool | None = None
    """The reviewed rule's word on whether the tool only reads (None: no rule, or it does not say)."""
    retry_safe: bool = False
    """The reviewed rule says repeating the call is harmless."""


class Classifier:
    """Classifies calls: reviewed overrides first, then annotations, heuristics and the posture default."""

    def __init__(self, posture: Posture = Posture.BALANCED, overrides: OverrideSource | None = None) -> None:
        self.posture = Posture(posture)
        self.overrides = overrides
        self._layers = LAYERS[self.posture]
        self._cache: dict[tuple[str, str, str | None, bool], Classification] = {}

    def trust_for(self, server: str, host_says: bool, identity: ServerIdentity | None = None) -> bool:
        """Return a server's trust: what the reviewed rules say (those of the server ``identity`` describes, when
        known), else what the host said. Only a trusted server's hints may lower risk (``openWorldHint: false``)."""
        reviewed = self._read_reviewed_trust(server, identity)
        return host_says if reviewed is None else reviewed

    def _read_reviewed_trust(self, server: str, identity: ServerIdentity | None) -> bool | None:
        """The trust the rule files give the server (those of its ``identity``, when known); None: they say none."""
        if isinstance(self.overrides, RuleSet):
            return self.overrides.trust_for(server, identity)
        return self.overrides.trust_for(server) if self.overrides is not None else None

    def find_identity_clash(self, server: str, identity: ServerIdentity | None) -> IdentityClash | None:
        """Return the rule file that covers ``server`` by name but reviewed another server than the one ``identity``
        describes (it does not apply to this one), if any."""
        return self.overrides.find_clash(server, identity) if isinstance(self.overrides, RuleSet) else None

    def trust_of_tool(
        self,
        listed: Mapping[tuple[str, str], tuple[ToolDefinition, bool]],
        server: str,
        tool: str,
        identity: ServerIdentity | None = None,
    ) -> bool:
        """Return the trust a call's server had when the session listed the tool (``listed``: (server, tool) →
        (definition, trust)), else the server's trust with the host saying nothing. As in :meth:`classify`, the
        trust rule files grant does not go with a tool whose pinned rule is void or could not be checked, nor to a
        server whose ``identity`` is not the one they reviewed."""
        known = listed.get((server, tool))
        trusted = known[1] if known is not None else self.trust_for(server, False, identity)
        if trusted and self._read_reviewed_trust(server, identity) is not None:
            context = ToolContext(server, tool, known[0] if known else None, trusted, server_identity=identity)
            classified = self.classify(context)
            return classified.voided is None and classified.unchecked is None
        return trusted

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
                return CallClassification(
                    match.classification,
                    match.rule_ids,
                    match.destinations,
                    read_only=match.read_only,
                    retry_safe=match.retry_safe,
                )
            voided = match.voided if match is not None else None
            # The trust a rule file grants goes with its reviewed definitions: not for this one.
            not_reviewed = voided is not None or unchecked is not None
            if (
                not_reviewed
                and tool.trusted
                and self._read_reviewed_trust(tool.server, tool.server_identity) is not None
            ):
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
