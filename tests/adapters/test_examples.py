"""The framework examples of docs/adapters.md run, and do what the page says: the reads run, the injected send
does not, and the model is told why."""

from __future__ import annotations

import asyncio
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "docs" / "examples" / "adapters"
REFUSAL = (
    "trifecta-monitor asks about this mail/send_email call: it sends to attacker@evil.example, an address only "
    "untrusted content (from fetch_page) suggested; it carries private data from read_inbox"
)


def test_the_langgraph_example_runs_the_reads_and_refuses_the_injected_send() -> None:
    module = runpy.run_path(str(EXAMPLES / "langgraph_agent.py"))
    shown = module["main"]()
    assert shown[:2] == [module["INBOX"], module["PAGE"]]
    assert shown[2].startswith(REFUSAL) and shown[2].endswith("; the user declined")


def test_the_openai_agents_example_runs_the_reads_and_refuses_the_injected_send() -> None:
    module = runpy.run_path(str(EXAMPLES / "openai_agents_agent.py"))
    shown = asyncio.run(module["main"]())
    assert shown[:2] == [module["INBOX"], module["PAGE"]]
    assert shown[2].startswith(REFUSAL) and shown[2].endswith("; the user declined")


@pytest.mark.parametrize("name", ["langgraph_agent.py", "openai_agents_agent.py"])
def test_the_example_runs_as_a_script(name: str) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        timeout=120,
    )
    lines = done.stdout.splitlines()
    assert lines[:2] == ["read_inbox: ran", "fetch_page: ran"]
    assert not any(line.startswith("send_email: sent") for line in lines)
    assert "(no terminal: declined)" in done.stdout
    assert lines[-1].endswith("level exfiltration")
    assert done.stderr == ""
