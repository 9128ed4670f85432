"""The evasion cases (tests/evasion): every case passes, each attack has a legitimate twin of the same class,
and every class is tried in several variants."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from monitor.models import RecordError
from monitor.scenarios import Scenario, ScenarioKind, load_scenarios, run_scenario

SUITE = Path(__file__).resolve().parent / "evasion"
LOADED = load_scenarios(SUITE)
CASES = [item for item in LOADED if isinstance(item, Scenario)]
BY_ID = {case.id: case for case in CASES}

# Cases the engine does not stop yet, each with why; the mark is strict, so a case that starts to pass fails
# until it is taken off this list. They are counted as failures by `trifecta eval scenarios tests/evasion`.
OPEN: dict[str, str] = {}


def test_every_case_file_loads() -> None:
    errors = [f"{e.source}: {e.message}" for e in LOADED if isinstance(e, RecordError)]
    assert errors == []
    assert len(CASES) >= 30


def _param(case: Scenario) -> Any:
    marks = [pytest.mark.xfail(strict=True, reason=OPEN[case.id])] if case.id in OPEN else []
    return pytest.param(case, id=case.id, marks=marks)


def test_open_cases_exist() -> None:
    assert set(OPEN) <= set(BY_ID)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_case(case: Scenario) -> None:
    result = run_scenario(case)
    if not result.passed:
        pytest.fail(f"{case.source}: {case.title}\n  " + "\n  ".join(result.failures), pytrace=False)


def test_cases_are_named_and_paired_by_class() -> None:
    for case in CASES:
        assert case.id.startswith("evasion-"), case.id
        assert case.pair is not None, f"{case.id} has no twin"
        twin = BY_ID.get(case.pair)
        assert twin is not None, f"{case.id}: its pair {case.pair} is not among the cases"
        assert twin.pair == case.id, f"{case.id} -> {case.pair}, but {case.pair} -> {twin.pair}"
        assert {case.kind, twin.kind} == set(ScenarioKind), f"{case.id} and {twin.id} are both {case.kind}"
        assert case.shape == twin.shape, f"{case.id} and {twin.id} differ in class"


def test_every_class_is_tried_in_variants() -> None:
    attacks = Counter(case.shape for case in CASES if case.kind is ScenarioKind.ATTACK)
    thin = {shape: n for shape, n in attacks.items() if n < 2}
    assert thin == {}, f"classes with a single attack: {thin}"
