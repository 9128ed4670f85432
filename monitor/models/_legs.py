"""Legs of the lethal trifecta and where each leg of a call came from."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum

from pydantic import BaseModel, ConfigDict


class Leg(StrEnum):
    """One leg of the lethal trifecta."""

    PRIVATE_DATA = "private_data"
    UNTRUSTED_CONTENT = "untrusted_content"
    EXTERNAL_COMMUNICATION = "external_communication"


ALL_LEGS: frozenset[Leg] = frozenset(Leg)
LEG_ORDER: tuple[Leg, ...] = tuple(Leg)


class LegSource(StrEnum):
    """The classification layer that gave a leg (docs/design.md, "Classification"), strongest first."""

    OVERRIDE = "override"
    RESULT_HINT = "result-hint"
    ANNOTATION = "annotation"
    HEURISTIC = "heuristic"
    DEFAULT = "default"


class Posture(StrEnum):
    """How unknown tools are treated: ``strict`` gives them all three legs."""

    STRICT = "strict"
    BALANCED = "balanced"


class Provenance(BaseModel):
    """Why a call has a leg: the layer and the rule id or hint that gave it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: LegSource
    rule: str


class Classification(BaseModel):
    """The legs of one tool or call, each with its provenance."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    provenance: dict[Leg, Provenance]

    @property
    def legs(self) -> frozenset[Leg]:
        """The legs present."""
        return frozenset(self.provenance)

    def with_added(self, extra: Mapping[Leg, Provenance]) -> Classification:
        """Return a classification with ``extra`` legs added; legs already present keep their provenance."""
        if all(leg in self.provenance for leg in extra):
            return self
        merged = dict(self.provenance)
        for leg, prov in extra.items():
            merged.setdefault(leg, prov)
        return Classification(provenance=merged)


def sort_legs(legs: Iterable[Leg]) -> list[Leg]:
    """Return legs in their canonical order (P, U, X)."""
    present = set(legs)
    return [leg for leg in LEG_ORDER if leg in present]
