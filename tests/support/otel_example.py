"""The example program of docs/examples/otel (the GitHub incident, hand-instrumented), imported for tests."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

EXAMPLE = Path(__file__).parents[2] / "docs" / "examples" / "otel" / "github_incident.py"


def load_example() -> Any:
    """Import the example program as a module (it is not a package)."""
    spec = importlib.util.spec_from_file_location("github_incident_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
