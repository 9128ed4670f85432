"""Fixtures the host tests share, defined in tests/support."""

from support.engines import state_dir  # noqa: F401 (a fixture: pytest finds it here)
