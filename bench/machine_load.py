"""The line a benchmark prints before its figures: the machine's load, and that its times are CPU time."""

from __future__ import annotations

import os


def describe_load(what: str = "times are CPU time (user + system) of this process") -> str:
    """The load average (1, 5 and 15 minutes) now, and what the benchmark's times measure."""
    one, five, fifteen = os.getloadavg()
    return f"machine load (1, 5, 15 min): {one:.2f} {five:.2f} {fifteen:.2f}; {what}"
