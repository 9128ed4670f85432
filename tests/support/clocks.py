"""A clock a test moves by hand, for code that takes a ``clock`` callable."""

from __future__ import annotations


class FakeClock:
    """A clock the test moves: calling it returns ``now``, which starts at 1000.0."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now
