"""The input split into parts: read one after the other, the parts give what read_inputs gives, record for record
and with the same current file, and no session spans two parts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from monitor.ingest import InputFormat, InputStream, partition_inputs, read_inputs, read_part
from monitor.models import RecordError, SessionEnd
from tests.scale.helpers import SAMPLES


def _with_current(stream: InputStream) -> Iterator[tuple[str, dict[str, Any]]]:
    for record in stream:
        yield stream.current, record.model_dump(mode="json")


def _read_in_parts(paths: list[Path], input_format: InputFormat, **limits: int) -> list[tuple[str, dict[str, Any]]]:
    return [item for part in partition_inputs(paths, input_format, **limits) for item in _with_current(read_part(part))]


@pytest.mark.parametrize("max_runs", [1, 5, 64])
def test_the_parts_read_in_order_are_the_input(mixed_inputs: list[Path], max_runs: int) -> None:
    whole = list(_with_current(read_inputs(mixed_inputs)))

    assert _read_in_parts(mixed_inputs, InputFormat.AUTO, max_runs=max_runs) == whole
    assert len(list(partition_inputs(mixed_inputs, max_runs=max_runs))) > len(mixed_inputs)


def test_an_agentdojo_folder_is_split_by_runs_and_reads_the_same(
    tmp_path: Path, agentdojo_run: Any, write_archive: Any
) -> None:
    import json

    folder = tmp_path / "runs"
    for i in range(7):
        path = folder / f"user_task_{i}" / "none" / "none.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(agentdojo_run(user_task_id=f"user_task_{i}")), encoding="utf-8")
    write_archive(folder / "more.tar.gz", {"a/none/none.json": json.dumps(agentdojo_run()).encode()})

    parts = list(partition_inputs([folder], InputFormat.AGENTDOJO, max_runs=3))

    assert len(parts) == 4  # 3 + 3 run files, the archive, then the last run file (after it in name order)
    assert _read_in_parts([folder], InputFormat.AGENTDOJO, max_runs=3) == list(
        _with_current(read_inputs([folder], InputFormat.AGENTDOJO))
    )


def test_every_session_ends_in_the_part_it_starts_in(mixed_inputs: list[Path]) -> None:
    for part in partition_inputs(mixed_inputs, max_runs=2):
        records = [r for r in read_part(part) if not isinstance(r, RecordError)]
        ended = {r.session_id for r in records if isinstance(r, SessionEnd)}
        assert {r.session_id for r in records} == ended, part.name


def test_an_archive_part_carries_its_run_files_and_names_them(tmp_path: Path, write_archive: Any) -> None:
    archive = write_archive(tmp_path / "a.tar", {f"r{i}.json": b"{}" for i in range(5)})

    parts = list(partition_inputs([archive], max_runs=2))

    assert [p.name for p in parts] == [f"{archive} (run files {a} to {b})" for a, b in ((1, 2), (3, 4), (5, 5))]
    assert [p.index for p in parts] == [0, 1, 2]
    assert all(p.current == str(archive) and not p.path for p in parts)  # read here: a worker needs no archive


def test_a_file_is_one_part_named_by_its_path() -> None:
    [part] = partition_inputs([SAMPLES / "otel" / "genai.jsonl"])

    assert part.path == part.name == part.current == str(SAMPLES / "otel" / "genai.jsonl")
    assert not part.runs
