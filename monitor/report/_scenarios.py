"""The table and JSON of ``trifecta eval scenarios``: one row per scenario, then the counts."""

from __future__ import annotations

from typing import IO, Any

from rich.text import Text

from monitor.report._fit import fit_table, make_console, resolve_width
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


def print_scenarios(report: ScenarioReport, out: IO[str], *, wide: bool = False) -> None:
    """Print one row per scenario (id, kind, area, pass or FAIL, what failed), then the summary line; the table
    fits the terminal's width (``COLUMNS``) unless ``wide``, its cells wrapped, never cut."""
    width = resolve_width(out, wide=wide)
    console = make_console(out, width, markup=False)
    table = make_table("Scenarios")
    for name in ("scenario", "kind", "area", "result", "what failed"):
        table.add_column(name)
    for r in report.results:
        result = Text("pass", style="green") if r.passed else Text("FAIL", style="bold red")
        table.add_row(r.id, r.kind.value, r.area.value, result, "\n".join(r.failures))
    console.print(fit_table(table, width))
    console.print(report.summary())
