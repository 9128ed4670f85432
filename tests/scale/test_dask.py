"""``monitor.scale`` on a Dask cluster (a ``distributed.LocalCluster`` of 2 worker processes): the output of the
single-process run, on the bundled samples, on inputs with every kind of error and on real AgentDojo runs."""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from distributed import LocalCluster

from monitor.analysis import analyze_records
from monitor.cli import main
from monitor.errors import InputError
from monitor.ingest import InputFormat, InputPart, partition_inputs, read_inputs
from monitor.models import Posture, RecordError
from monitor.scale import EngineSpec, _dask, analyze_part, analyze_paths, parse_scheduler
from monitor.session import MonitorConfig
from tests.scale.helpers import ROOT, SAMPLES, as_data


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.ERROR
    ) as cluster:
        yield cluster.scheduler_address


def _both(paths: list[Path], spec: EngineSpec, scheduler: str) -> tuple[list[object], list[object]]:
    single = as_data(analyze_records(read_inputs(paths), spec.build_monitor()))
    on_dask = as_data(analyze_paths(paths, InputFormat.AUTO, spec, scheduler=scheduler))
    return single, on_dask


@pytest.mark.parametrize("posture", [Posture.BALANCED, Posture.STRICT])
def test_the_samples_on_a_local_cluster_give_what_one_process_gives(scheduler: str, posture: Posture) -> None:
    single, on_dask = _both([SAMPLES], EngineSpec(MonitorConfig(posture=posture)), scheduler)

    assert on_dask == single
    assert len(single) > 20


def test_bad_inputs_on_a_local_cluster_are_the_same_errors_in_the_same_places(
    scheduler: str, mixed_inputs: list[Path]
) -> None:
    single, on_dask = _both(mixed_inputs, EngineSpec(), scheduler)

    assert on_dask == single
    assert sum(kind == "error" for kind, _ in single) >= 5


def test_real_agentdojo_runs_on_a_local_cluster_give_what_one_process_gives(
    scheduler: str, dev_runs_subset: Path
) -> None:
    single, on_dask = _both([dev_runs_subset], EngineSpec(), scheduler)

    assert on_dask == single
    assert sum(kind == "session" for kind, _ in single) == 200  # every run of the sample is a session


def test_analyze_dask_prints_what_analyze_jobs_1_prints(scheduler: str) -> None:
    runner = CliRunner()
    one = runner.invoke(main, ["analyze", str(SAMPLES), "--format", "sarif", "--jobs", "1"])
    dask = runner.invoke(main, ["analyze", str(SAMPLES), "--format", "sarif", "--dask", scheduler])

    assert (dask.exit_code, dask.stdout, dask.stderr) == (one.exit_code, one.stdout, one.stderr)


def test_local_dask_starts_its_own_cluster_and_gives_the_same_output(tmp_path: Path) -> None:
    paths = [SAMPLES / "sessions", SAMPLES / "otel"]
    want = as_data(analyze_records(read_inputs(paths), EngineSpec().build_monitor()))

    assert as_data(analyze_paths(paths, InputFormat.AUTO, EngineSpec(), scheduler="local:2")) == want


@pytest.mark.parametrize(
    ("value", "parsed"),
    [("local:3", (None, 3)), ("tcp://10.0.0.5:8786", ("tcp://10.0.0.5:8786", 0)), ("sched:8786", ("sched:8786", 0))],
)
def test_the_scheduler_is_an_address_or_local_with_a_count(value: str, parsed: tuple[str | None, int]) -> None:
    assert parse_scheduler(value) == parsed
    assert parse_scheduler("local")[0] is None and parse_scheduler("local")[1] >= 1


@pytest.mark.parametrize("value", ["local:0", "local:two", " "])
def test_a_bad_scheduler_is_refused(value: str) -> None:
    with pytest.raises(InputError):
        parse_scheduler(value)
    result = CliRunner().invoke(main, ["analyze", str(SAMPLES), "--dask", value])
    assert result.exit_code == 2 and "--dask" in result.output


def test_a_task_that_fails_on_the_cluster_is_its_parts_error(scheduler: str, monkeypatch: pytest.MonkeyPatch) -> None:
    good = list(partition_inputs([SAMPLES / "sessions" / "calendar-invite.jsonl", SAMPLES / "otel"]))
    broken = InputPart(index=1, name="the broken part", current="x", path=12345)  # type: ignore[arg-type]
    renumbered = [good[0], broken, *(replace(p, index=i + 2) for i, p in enumerate(good[1:]))]
    monkeypatch.setattr(_dask, "partition_inputs", lambda paths, fmt: iter(renumbered))

    got = list(analyze_paths([SAMPLES], InputFormat.AUTO, EngineSpec(), scheduler=scheduler))

    errors = [e for e in got if isinstance(e, RecordError)]
    assert [e.source for e in errors] == ["the broken part"]
    assert errors[0].message.startswith("the Dask task analysing it failed: TypeError")
    assert errors[0].message.endswith("; the sessions of this part are not reported")
    sources = [getattr(item, "source", None) for item in got]
    assert sources.index("the broken part") == 1  # in its place: after the first file's session, before the rest
    assert len(got) == 1 + 1 + sum(1 for p in good[1:] for _ in analyze_part(p, EngineSpec()).items)


def test_the_documented_example_writes_what_analyze_jsonl_writes() -> None:
    example = ROOT / "docs" / "examples" / "analyze_on_dask.py"
    paths = [str(SAMPLES / "sessions"), str(SAMPLES / "mcp")]

    done = subprocess.run(
        [sys.executable, str(example), "local:2", *paths], capture_output=True, cwd=ROOT, check=False, timeout=300
    )
    one = CliRunner().invoke(main, ["analyze", *paths, "--format", "jsonl", "--jobs", "1"])

    assert done.returncode == one.exit_code == 0, done.stderr
    assert done.stdout.decode() == one.stdout


def test_a_scheduler_that_cannot_be_reached_is_one_error_naming_it() -> None:
    import dask

    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        got = list(analyze_paths([SAMPLES / "sessions"], InputFormat.AUTO, EngineSpec(), scheduler="tcp://127.0.0.1:9"))

    [error] = got
    assert isinstance(error, RecordError)
    assert error.source == "tcp://127.0.0.1:9"
    assert error.message.startswith("cannot reach the Dask scheduler: ")
