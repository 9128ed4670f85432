"""The plain-Python host example of docs/hosts.md runs and decides as the page says."""

from __future__ import annotations

import runpy
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "hosts" / "plain_host.py"


def test_the_plain_host_example_asks_before_the_send_only() -> None:
    main = runpy.run_path(str(EXAMPLE))["main"]
    assert main() == ["allow", "allow", "confirm"]


def test_the_plain_host_example_runs_as_a_script() -> None:
    out = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, check=True, cwd=ROOT)
    assert "send_email: confirm (destination-attacker-suggested" in out.stdout
    assert "level exfiltration" in out.stdout
    assert out.stderr == ""
