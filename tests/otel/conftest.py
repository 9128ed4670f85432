"""Helpers for the tests of ``monitor.otel``."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

Waiter = Callable[..., bool]


def _wait_for(condition: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return False


@pytest.fixture
def wait_for() -> Waiter:
    """``wait_for(condition, timeout=10.0)``: poll ``condition()`` until it is true (True) or ``timeout`` seconds
    pass (False)."""
    return _wait_for
