"""The table and JSON of ``trifecta eval scenarios``: one row per scenario, then the counts."""

from __future__ import annotations

from typing import IO, Any

from rich.console import Console
from rich.text import Text

from monitor.report._table_style import make_table
from monitor.scenarios import ScenarioKind, ScenarioReport


def scenarios_to_json(report: ScenarioReport) -> dict[str, Any]:
    """Every scenario's outcome (its decisions, alerts and failures), the unreadable files, and the counts."""
    results = report.results
    attacks = [r for r in results if r.kind is ScenarioKind.ATTACK]
    legit = [r for r in results if r.kind is ScenarioKind.LEGITIMATE]
    passed = sum(r.passed for r in results)
    return {
        "scenarios": [r.model_dump(mode="json") for r in results],
        "errors": [e.model_dump(mode="json") for e in report.errors],
        "summary": {
            "scenarios": len(results),
            "passed": passed,
            "failed": len(results) - passed,
            "attack": {
                "scenarios": len(attacks),
                "stopped": sum(bool(r.stopped) for r in attacks),
                "passed": sum(r.passed for r in attacks),
            },
            "legitimate": {"scenarios": len(legit), "passed": sum(r.passed for r in legit)},
            "bad_files": len(report.errors),
            "line": report.summary(),
        },
    }


def print_scenarios(report: ScenarioReport, out: IO[str]) -> None:
    """Print one row per scenario (id, kind, area, pass or FAIL, what failed), then the summary line."""
    console = Console(file=out, width=160, highlight=False)
    table = make_table("Scenarios")
    table.add_column("scenario", no_wrap=True)
    table.add_column("kind")
    table.add_column("area")
    table.add_column("result")
    table.add_column("what failed", overflow="fold")
    for r in report.results:
        result = Text("pass", style="green") if r.passed else Text("FAIL", style="bold red")
        table.add_row(r.id, r.kind.value, r.area.value, result, "\n".join(r.failures))
    console.print(table)
    console.print(report.summary())
