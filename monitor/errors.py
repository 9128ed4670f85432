"""The one exception hierarchy of trifecta-monitor.

Everything the library raises on purpose derives from :class:`TrifectaError`. Lint findings and rejected
input records are values (see :mod:`monitor.models`), not exceptions.
"""

from __future__ import annotations

__all__ = [
    "CallDenied",
    "ConfirmationRequired",
    "InputError",
    "MonitorWarning",
    "RuleLoadError",
    "TrifectaError",
    "describe_exception",
]


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


class MonitorWarning(UserWarning):
    """Warned (through :mod:`warnings`) when a host's call was accepted but not as given: a tool dropped from a
    listing, a result for an unknown call id, a call id used twice, a session the monitor does not hold. The
    same problem is also a finding in the value the call returns. ``logging.captureWarnings(True)`` sends
    these to the ``py.warnings`` logger."""


class ConfirmationRequired(TrifectaError):
    """A guarded call needs the user's confirmation and the host gave no way to ask. ``decision`` is the
    :class:`~monitor.Decision`; the call did not run."""

    def __init__(self, decision: object, message: str) -> None:
        super().__init__(message)
        self.decision = decision


class CallDenied(TrifectaError):
    """A guarded call was denied (or the user declined to confirm it). ``decision`` is the
    :class:`~monitor.Decision`; the call did not run."""

    def __init__(self, decision: object, message: str) -> None:
        super().__init__(message)
        self.decision = decision


_MAX_EXCEPTION_CHARS = 200


def describe_exception(exc: BaseException | None) -> str:
    """Return an exception in one line: its type and its text, white space folded, at most 200 characters of
    text (what an error record or a failure notice says of it)."""
    if exc is None:
        return "an internal error"
    text = " ".join(str(exc).split())
    text = text if len(text) <= _MAX_EXCEPTION_CHARS else text[: _MAX_EXCEPTION_CHARS - 1] + "…"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
