"""What the monitor reports about a session: its calls, their legs and decisions, and its alerts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from monitor.models._decisions import Alert, Decision, Level
from monitor.models._legs import Leg, Provenance

if TYPE_CHECKING:
    import networkx as nx


class CallReport(BaseModel):
    """One call of a session as the monitor saw and decided it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    call_id: str
    index: int
    server: str
    tool: str
    legs: tuple[Leg, ...]
    provenance: dict[Leg, Provenance]
    decision: Decision
    evidence_from: tuple[str, ...] = ()


class SessionReport(BaseModel):
    """A snapshot of one session: legs exercised, level reached, whether it was exposed, calls and alerts."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    session_id: str
    level: Level
    legs: tuple[Leg, ...]
    exposed: bool
    calls: tuple[CallReport, ...]
    alerts: tuple[Alert, ...]
    evidence_truncated: bool = False
    raised_by: str | None = None

    @property
    def graph(self) -> nx.MultiDiGraph:
        """The session's capability graph (networkx ``MultiDiGraph``)."""
        from monitor.models._graph import build_graph

        return build_graph(self)
