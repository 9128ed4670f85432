"""The classification layers (docs/design.md, "Classification") as small callables over one tool.

A layer returns an *opinion*: for each leg it speaks about, the provenance of the leg when present, or
``None`` when it says the leg is absent. Legs it does not mention are left to the next layer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from monitor.classify._heuristics import HEURISTICS, match_heuristics
from monitor.classify._labels import read_action_metadata
from monitor.models import (
    ACTION_METADATA_KEY,
    ALL_LEGS,
    Classification,
    Leg,
    LegSource,
    Posture,
    Provenance,
    ToolContext,
)

Opinion = Mapping[Leg, Provenance | None]
"""A layer's word on the legs it speaks about; ``None`` means "absent"."""

_OPEN_WORLD_LEGS = (Leg.UNTRUSTED_CONTENT, Leg.EXTERNAL_COMMUNICATION)


Layer = Callable[[ToolContext], Opinion]


def classify_by_annotations(tool: ToolContext) -> Opinion:
    """Layer 2: ``openWorldHint`` true gives U and X; false removes them, but only from a trusted server. The
    action-metadata extension (docs/labels.md) only adds legs, from any server, and wins over a hint that
    removes the same leg."""
    opinion = _classify_by_open_world(tool)
    if tool.definition is None or tool.definition.action_metadata is None:
        return opinion
    added = read_action_metadata({ACTION_METADATA_KEY: tool.definition.action_metadata}).added_legs()
    if not added:
        return opinion
    return {**opinion, **{leg: Provenance(source=LegSource.ANNOTATION, rule=p.rule) for leg, p in added.items()}}


def _classify_by_open_world(tool: ToolContext) -> Opinion:
    hint = tool.definition.annotations.openWorldHint if tool.definition else None
    if hint is True:
        prov = Provenance(source=LegSource.ANNOTATION, rule="openWorldHint=true")
        return dict.fromkeys(_OPEN_WORLD_LEGS, prov)
    if hint is False and tool.trusted:
        return dict.fromkeys(_OPEN_WORLD_LEGS, None)
    # Absent, or false from an untrusted server: a hint that could only lower risk is not taken.
    return {}


def classify_by_heuristics(tool: ToolContext) -> Opinion:
    """Layer 3 (balanced posture): name, description and schema signals that give a leg."""
    return {
        leg: Provenance(source=LegSource.HEURISTIC, rule=rule)
        for leg, rule in match_heuristics(HEURISTICS, tool.name, tool.definition).items()
    }


def classify_by_absence_heuristics(tool: ToolContext) -> Opinion:
    """Layer 3, second half (balanced posture), for a trusted server's tools only: a leg no earlier layer gave is
    absent when the tool's name says it only reads, lists or computes (X), unless its name also says it writes
    or its annotations say it is not read-only. A tool of a server nobody trusts keeps the legs the no-hint
    default gives, whatever it is called: its arguments reach that server (docs/design.md, "The security invariant")."""
    if not tool.trusted:
        return {}
    return dict.fromkeys(match_heuristics(HEURISTICS, tool.name, tool.definition, absent=True), None)


def classify_by_default_strict(tool: ToolContext) -> Opinion:
    """Layer 4, strict posture: an unknown tool gets all three legs."""
    return dict.fromkeys(ALL_LEGS, Provenance(source=LegSource.DEFAULT, rule="strict"))


def classify_by_default_balanced(tool: ToolContext) -> Opinion:
    """Layer 4, balanced posture: what layer 2 gives a tool with no hints (U and X), and no P. The rule names why
    no hint spoke: none was given (``openWorldHint-absent``), or one that could only lower risk came from a server
    nobody trusts (``openWorldHint-untrusted``)."""
    hint = tool.definition.annotations.openWorldHint if tool.definition else None
    rule = "openWorldHint-untrusted" if hint is False and not tool.trusted else "openWorldHint-absent"
    prov = Provenance(source=LegSource.DEFAULT, rule=rule)
    opinion: dict[Leg, Provenance | None] = dict.fromkeys(_OPEN_WORLD_LEGS, prov)
    opinion[Leg.PRIVATE_DATA] = None
    return opinion


LAYERS: Mapping[Posture, tuple[Layer, ...]] = {
    Posture.STRICT: (classify_by_annotations, classify_by_default_strict),
    Posture.BALANCED: (
        classify_by_annotations,
        classify_by_heuristics,
        classify_by_absence_heuristics,
        classify_by_default_balanced,
    ),
}


def combine_opinions(opinions: list[Opinion]) -> Classification:
    """For each leg, the first layer that speaks decides."""
    decided: dict[Leg, Provenance | None] = {}
    for opinion in opinions:
        for leg, prov in opinion.items():
            decided.setdefault(leg, prov)
    return Classification(provenance={leg: prov for leg, prov in decided.items() if prov is not None})
