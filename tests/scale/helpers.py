"""What the scale-out tests share: where the inputs are, and the results of an analysis as plain data."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from monitor.models import RecordError, SessionReport

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
DEV_RUNS = ROOT / "tests" / "data" / "agentdojo-sample.tar.gz"


def as_data(items: Iterable[SessionReport | RecordError]) -> list[tuple[str, Any]]:
    """The items of an analysis as comparable data, in order: ``("session"|"error", dump)``."""
    return [("error" if isinstance(item, RecordError) else "session", item.model_dump(mode="json")) for item in items]
