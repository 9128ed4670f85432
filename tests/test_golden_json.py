"""What ``trifecta analyze samples --format json`` says, call by call, is pinned in both postures.

Every decision, reason, evidence item and alert of the bundled samples is compared with
``tests/golden/analyze-samples-<posture>.json``. A change to how calls are judged shows here as a diff to
review; when it is intended, regenerate with::

    UPDATE_GOLDEN=1 pytest tests/test_golden_json.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from monitor.cli import main

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden"


@pytest.mark.parametrize("posture", ["balanced", "strict"])
def test_the_samples_json_is_unchanged(posture: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(main, ["analyze", "samples", "--format", "json", "--posture", posture])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    document["tool_version"] = "<version>"  # the package version is not behaviour
    actual = json.dumps(document, indent=1, sort_keys=True) + "\n"
    golden = GOLDEN / f"analyze-samples-{posture}.json"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        golden.write_text(actual, encoding="utf-8")
    assert golden.is_file(), f"no {golden.name}: create it with UPDATE_GOLDEN=1 pytest tests/test_golden_json.py"
    assert actual == golden.read_text(encoding="utf-8"), f"analyze --posture {posture} changed: review the diff"
