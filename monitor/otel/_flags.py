"""Boolean environment variables, read without importing the rest of the span processor.

The auto-instrumentation hooks run in every program ``opentelemetry-instrument`` starts: they read their switch
here, and import the processor only when it is on.
"""

from __future__ import annotations

from collections.abc import Mapping

ENV_ENABLED = "TRIFECTA_ENABLED"
"""Turns the processor on under ``opentelemetry-instrument`` (read by the auto-instrumentation hooks only)."""
TRUE, FALSE = "true", "false"
_TRUE_SPELLINGS = frozenset({"true", "1", "yes", "on"})
_FALSE_SPELLINGS = frozenset({"false", "0", "no", "off"})


def read_flag(environ: Mapping[str, str], name: str, default: bool) -> bool:
    """A ``true``/``false`` variable (either case); ``default`` when unset or empty. Raises ValueError naming the
    variable and the accepted values otherwise."""
    value = environ.get(name, "").strip()
    if not value:
        return default
    if value.lower() in _TRUE_SPELLINGS:
        return True
    if value.lower() in _FALSE_SPELLINGS:
        return False
    raise ValueError(f"{name}={value!r} is not valid: expected true or false (1/0, yes/no, on/off)")
