"""The one exception hierarchy of trifecta-monitor.

Everything the library raises on purpose derives from :class:`TrifectaError`. Lint findings and rejected
input records are values (see :mod:`monitor.models`), not exceptions.
"""

from __future__ import annotations


class TrifectaError(Exception):
    """Root of every exception that trifecta-monitor raises on purpose."""


class InputError(TrifectaError):
    """Input that cannot be read at all: a missing path, an unknown format, an unreadable archive."""

    def __init__(self, source: str, message: str) -> None:
        super().__init__(f"{source}: {message}")
        self.source = source
        self.message = message


class RuleLoadError(TrifectaError):
    """Rule files that cannot be loaded. ``problems`` lists each as ``file:line: message``."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems
