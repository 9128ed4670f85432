"""The mutation fuzzer (``bench/fuzz.py``) on a small budget: no crash, no hang, nothing valid lost."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.shared_data

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "../shared/data"
BUDGET = 300


def test_the_shared_data_is_there() -> None:
    assert (DATA / "agentdojo/dev-runs.tar.gz").is_file() and (DATA / "mcp-servers").is_dir(), (
        f"shared data missing: expected {DATA.resolve()} (../shared/data relative to the project root)"
    )


@pytest.mark.parametrize("fmt", ["agentdojo", "jsonl", "mcp", "claude-code", "otlp", "toolslist"])
def test_a_small_fuzz_budget_finds_nothing(fmt: str) -> None:
    done = subprocess.run(
        [sys.executable, "bench/fuzz.py", fmt, str(BUDGET), "--seed", "0"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )

    row = re.search(rf"^{fmt}\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)", done.stdout, re.MULTILINE)
    assert row is not None, done.stdout + done.stderr
    assert [int(g.replace(",", "")) for g in row.groups()] == [BUDGET, 0, 0, 0], done.stderr[-3000:]
    assert done.returncode == 0
