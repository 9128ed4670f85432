"""Ordered string enums: severities, actions and levels compare by the order their members are declared in."""

from __future__ import annotations

import functools
from enum import StrEnum


class RankedStrEnum(StrEnum):
    """A string enum whose members are ranked in the order they are declared (the first has rank 0)."""

    @property
    def rank(self) -> int:
        """Return the member's position in declaration order: a higher rank is more severe or stricter."""
        return _rank_of(self)


@functools.cache
def _rank_of(member: RankedStrEnum) -> int:
    return list(type(member)).index(member)
