"""Boolean environment variables, read without importing the rest of the span processor.

The auto-instrumentation hooks run in every program ``opentelemetry-instrument`` starts: they read their switch
here, and import the processor only when it is on.
"""

from __future__ import annotations

from collections.abc import Mapping

ENV_ENABLED = "TRIFECTA_ENABLED"
"""Turns the processor on under ``opentelemetry-instrument`` (read by the auto-instrumentation hooks only)."""
TRUE, FALSE = "true", "false"


def read_flag(environ: Mapping[str, str], name: str, default: bool) -> bool:
    """A ``true``/``false`` variable (either case); ``default`` when unset or empty. Raises ValueError naming the
    variable and the accepted values otherwise."""
    value = environ.get(name, "").strip()
    if not value:
        return default
    if value.lower() == TRUE:
        return True
    if value.lower() == FALSE:
        return False
    raise ValueError(f"{name}={value!r} is not valid: expected {TRUE}, {FALSE}")
