"""Output formats of ``trifecta lint``: a rich table, a JSON document and SARIF 2.1.0.

JSON document (``schema_version`` 1; keys are stable, new keys may be added)::

    {"schema_version": 1, "tool": "trifecta-monitor", "tool_version": "…",
     "listings": [{"file": "…", "line": null, "server": "fetch", "protocol_version": "2025-06-18",
                   "tools": 1, "errors": 0, "warnings": 2,
                   "findings": [<finding>, …]}],
     "input_errors": [<finding>, …],
     "summary": {"listings": 1, "tools": 1, "errors": 0, "warnings": 2, "input_errors": 0,
                 "by_id": {"hint-ignored-when-read-only": 2}, "exit_code": 0},
     "rules": [{"id": "…", "severity": "error|warning", "title": "…", "help": "…"}, …]}

    <finding> = {"id": "hint-missing", "severity": "warning", "file": "…", "line": null,
                 "pointer": "/tools/3/annotations/openWorldHint", "server": "…", "tool": "…",
                 "message": "…", "hint": "…", "fingerprint": "…"}

``line`` is the 1-based line of a JSON-lines log (``null`` for JSON documents); ``pointer`` is a JSON
pointer into that line's value or the document as served. ``input_errors`` are files that could not be
read (rule ``input-unreadable``).
"""

from __future__ import annotations

from collections import Counter
from typing import IO, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from monitor import __version__
from monitor.lint import LINT_RULES, LintFinding, LintReport, LintSeverity, ListingLint
from monitor.models import Severity
from monitor.report._fit import fit_table, make_console, resolve_width
from monitor.report._sarif_log import TOOL_NAME, build_physical_location, build_rule, build_sarif_log
from monitor.report._table_style import SEVERITY_STYLE, make_table

SCHEMA_VERSION = 1
FINGERPRINT_KEY = "trifectaLintFinding/v1"
"""The ``partialFingerprints`` key: rule, server, tool and field of a finding, hashed (not its position)."""

_SEVERITY_STYLE = {
    LintSeverity.ERROR: SEVERITY_STYLE[Severity.HIGH],
    LintSeverity.WARNING: SEVERITY_STYLE[Severity.WARNING],
}


# -- JSON ---------------------------------------------------------------------------------------------------


def finding_to_json(finding: LintFinding) -> dict[str, Any]:
    """One finding as a JSON object (every field of :class:`~monitor.lint.LintFinding`)."""
    return finding.model_dump(mode="json")


def summarize_lint(report: LintReport) -> dict[str, Any]:
    """The ``summary`` object: counts by severity and by finding id (sorted), and the exit code."""
    by_id = Counter(f.id for f in report.findings)
    return {
        "listings": len(report.listings),
        "tools": sum(listing.tools for listing in report.listings),
        "errors": report.count(LintSeverity.ERROR),
        "warnings": report.count(LintSeverity.WARNING),
        "input_errors": len(report.input_errors),
        "by_id": dict(sorted(by_id.items())),
        "exit_code": report.exit_code,
    }


def lint_to_json(report: LintReport) -> dict[str, Any]:
    """The JSON document of ``trifecta lint --format json`` (shape in this module's docstring)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": TOOL_NAME,
        "tool_version": __version__,
        "listings": [
            {
                "file": listing.file,
                "line": listing.line,
                "server": listing.server,
                "protocol_version": listing.protocol_version,
                "tools": listing.tools,
                "errors": sum(f.severity is LintSeverity.ERROR for f in listing.findings),
                "warnings": sum(f.severity is LintSeverity.WARNING for f in listing.findings),
                "findings": [finding_to_json(f) for f in listing.findings],
            }
            for listing in report.listings
        ],
        "input_errors": [finding_to_json(f) for f in report.input_errors],
        "summary": summarize_lint(report),
        "rules": [rule.model_dump(mode="json") for rule in LINT_RULES],
    }


# -- SARIF --------------------------------------------------------------------------------------------------


def _sarif_rule(index: int) -> dict[str, Any]:
    rule = LINT_RULES[index]
    return build_rule(
        rule.id,
        slug=rule.id,
        short=rule.title,
        full=rule.help,
        level=rule.severity.value,
        properties={"tags": ["mcp", "tool-annotations"]},
    )


def _sarif_result(finding: LintFinding, rule_index: dict[str, int]) -> dict[str, Any]:
    location: dict[str, Any] = {"physicalLocation": build_physical_location(finding.file, finding.line)}
    if finding.pointer:
        logical: dict[str, Any] = {"fullyQualifiedName": finding.pointer, "kind": "property"}
        if finding.tool is not None:
            logical["name"] = finding.tool
        location["logicalLocations"] = [logical]
    properties: dict[str, Any] = {"jsonPointer": finding.pointer, "hint": finding.hint}
    if finding.server is not None:
        properties["server"] = finding.server
    if finding.tool is not None:
        properties["tool"] = finding.tool
    text = f"{finding.tool}: {finding.message}" if finding.tool else finding.message
    return {
        "ruleId": finding.id,
        "ruleIndex": rule_index[finding.id],
        "level": finding.severity.value,
        "message": {"text": text},
        "locations": [location],
        "partialFingerprints": {FINGERPRINT_KEY: finding.fingerprint},
        "properties": properties,
    }


def lint_to_sarif(report: LintReport) -> dict[str, Any]:
    """The SARIF 2.1.0 log of ``trifecta lint --format sarif``: one run, every rule, one result per finding.

    Each result's location is the file (``physicalLocation``, with ``region.startLine`` for a log line) and
    the JSON pointer (``logicalLocations[0].fullyQualifiedName`` and ``properties.jsonPointer``);
    ``partialFingerprints`` carries the finding's stable fingerprint.
    """
    rule_index = {rule.id: i for i, rule in enumerate(LINT_RULES)}
    return build_sarif_log(
        [_sarif_rule(i) for i in range(len(LINT_RULES))],
        [_sarif_result(f, rule_index) for f in report.findings],
        invocation={"executionSuccessful": True, "exitCode": report.exit_code},
    )


# -- table --------------------------------------------------------------------------------------------------


_KEEP_WHOLE = 1_000  # a floor no column reaches: the finding id and severity never fold
_FLOORS = {0: 16, 1: _KEEP_WHOLE, 2: _KEEP_WHOLE, 3: 4, 4: 12}  # tool or file, id, severity, pointer, message


def _console(out: IO[str], color: bool | None, width: int | None) -> Console:
    return make_console(out, width, color=color)


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _listing_heading(listing: ListingLint) -> Text:
    where = listing.file if listing.line is None else f"{listing.file}:{listing.line}"
    details = [listing.server or "server not named", _plural(listing.tools, "tool")]
    if listing.protocol_version:
        details.insert(1, f"protocol {listing.protocol_version}")
    return Text.assemble((where, "bold"), f" ({', '.join(details)})")


def _findings_table(
    findings: tuple[LintFinding, ...] | list[LintFinding], *, with_file: bool, width: int | None
) -> Table:
    table = make_table()
    for header in ("file" if with_file else "tool", "id", "severity", "pointer", "message"):
        table.add_column(header)
    for f in findings:
        first = (f.file if f.line is None else f"{f.file}:{f.line}") if with_file else (f.tool or "")
        table.add_row(
            Text(first),
            Text(f.id),
            Text(f.severity.value, style=_SEVERITY_STYLE[f.severity]),
            Text(f.pointer or "/"),
            Text(f.message),
        )
    return fit_table(table, width, floors=_FLOORS)


def print_lint_table(
    report: LintReport, out: IO[str], *, color: bool | None = None, width: int | None = None, wide: bool = False
) -> None:
    """Print ``trifecta lint --format table``: unreadable inputs, then per listing its findings (tool, id,
    severity, pointer, message), then the totals by severity and by finding id.

    ``width``: the columns to fit into (by default rich's console width when ``out`` is a terminal or ``COLUMNS``
    is set); cells wrap, finding ids and severities stay whole. ``wide``, or other output: nothing is wrapped."""
    width = resolve_width(out, wide=wide, width=width)
    console = _console(out, color, width)
    if report.input_errors:
        console.print(Text("unreadable input", style="bold red"))
        console.print(_findings_table(report.input_errors, with_file=True, width=width))
        console.print()
    for listing in report.listings:
        heading = _listing_heading(listing)
        if not listing.findings:
            heading.append(": no findings", style="green")
            console.print(heading)
            continue
        console.print(heading)
        console.print(_findings_table(listing.findings, with_file=False, width=width))
        console.print()
    summary = summarize_lint(report)
    console.print(
        Text.assemble(
            f"{_plural(summary['listings'], 'tool list')}, {_plural(summary['tools'], 'tool')}: ",
            (_plural(summary["errors"], "error"), "bold red" if summary["errors"] else ""),
            ", ",
            (_plural(summary["warnings"], "warning"), "yellow" if summary["warnings"] else ""),
            f", {_plural(summary['input_errors'], 'unreadable input')}",
        )
    )
    if summary["by_id"]:
        console.print("by id: " + ", ".join(f"{rule_id} {n}" for rule_id, n in summary["by_id"].items()))


# -- markdown -----------------------------------------------------------------------------------------------


def lint_markdown_table(report: LintReport) -> str:
    """A markdown table with one row per tool list (server, tools, errors, warnings, then one column per
    finding id that occurs, in registry order) and a total row; unreadable inputs are not rows."""
    present = {f.id for listing in report.listings for f in listing.findings}
    ids = [rule.id for rule in LINT_RULES if rule.id in present]
    header = ["server", "tools", "errors", "warnings", *(f"`{rule_id}`" for rule_id in ids)]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|"]
    totals = Counter[str]()
    for listing in report.listings:
        counts = Counter(f.id for f in listing.findings)
        errors = sum(f.severity is LintSeverity.ERROR for f in listing.findings)
        warnings = len(listing.findings) - errors
        totals.update(counts)
        totals.update({"tools": listing.tools, "errors": errors, "warnings": warnings})
        cells = [listing.server or listing.file, str(listing.tools), str(errors), str(warnings)]
        lines.append("| " + " | ".join(cells + [str(counts.get(rule_id, 0)) for rule_id in ids]) + " |")
    total = ["**total**", *(str(totals[key]) for key in ("tools", "errors", "warnings"))]
    lines.append("| " + " | ".join(total + [str(totals[rule_id]) for rule_id in ids]) + " |")
    return "\n".join(lines) + "\n"
