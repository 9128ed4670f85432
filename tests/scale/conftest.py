"""Fixtures of the scale-out tests: inputs that mix every kind of part, and two hundred real AgentDojo runs."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.scale.helpers import DEV_RUNS, SAMPLES


@pytest.fixture
def mixed_inputs(
    tmp_path: Path,
    agentdojo_run: Callable[..., dict[str, Any]],
    write_archive: Callable[[Path, dict[str, bytes]], Path],
) -> list[Path]:
    """The bundled samples, then an archive of 12 runs (one not JSON, one an all-null run, one empty), a missing
    file, a file whose format cannot be told, a damaged archive, and the samples' native sessions again."""
    runs: dict[str, bytes] = {}
    for i in range(12):
        attack = "none" if i % 3 else "important_instructions"
        runs[f"suite/user_task_{i}/{attack}/injection_task_{i % 4}.json"] = json.dumps(
            agentdojo_run(user_task_id=f"user_task_{i}")
        ).encode()
    runs["suite/user_task_4/none/none.json"] = b"{not json"
    runs["suite/user_task_5/none/none.json"] = json.dumps(agentdojo_run(messages=[{"role": None}])).encode()
    runs["suite/user_task_6/none/none.json"] = b""
    archive = write_archive(tmp_path / "runs.tar.gz", runs)
    unknown = tmp_path / "notes.json"
    unknown.write_text('{"hello": "world"}\n', encoding="utf-8")
    damaged = tmp_path / "damaged.tar.gz"
    damaged.write_bytes(archive.read_bytes()[: archive.stat().st_size // 2])
    return [SAMPLES, archive, tmp_path / "missing.jsonl", unknown, damaged, SAMPLES / "sessions"]


@pytest.fixture(scope="session")
def dev_runs_subset() -> Path:
    """The first 200 run files of the AgentDojo dev runs, kept in the repository (tests/data/README.md)."""
    return DEV_RUNS
