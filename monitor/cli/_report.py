"""``trifecta report``: the self-contained HTML report of analysed sessions."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from monitor.analysis import analyze_records
from monitor.classify import load_rules
from monitor.cli._options import builtin_rules_option, posture_option, rules_option
from monitor.errors import RuleLoadError
from monitor.ingest import InputFormat, RecordError, read_inputs
from monitor.models import AnalysisSummary, Posture
from monitor.report import CallTextRecorder, HtmlLimits, HtmlReportWriter
from monitor.session import SessionMonitor

__all__ = ["COMMANDS", "report"]

EXIT_OK, EXIT_INPUT = 0, 2
_MAX_ERRORS_SHOWN = 20


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--output",
    "-o",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The HTML file to write.",
)
@click.option(
    "--input-format",
    type=click.Choice([f.value for f in InputFormat]),
    default="auto",
    show_default=True,
    help="Input format; auto tells each file's format from its content.",
)
@posture_option
@rules_option
@builtin_rules_option
@click.option("--title", default="trifecta-monitor report", show_default=True, help="The page title.")
@click.option(
    "--max-bytes",
    type=click.IntRange(min=100_000),
    default=HtmlLimits().max_bytes,
    show_default=True,
    help="The file never exceeds this size: less severe sessions are then listed but not detailed.",
)
def report(
    paths: tuple[Path, ...],
    output: Path,
    input_format: str,
    posture: str,
    rules_dirs: tuple[Path, ...],
    builtin_rules: bool,
    title: str,
    max_bytes: int,
) -> None:
    """Analyse session traces and write one self-contained HTML report (opens from file://, fetches nothing).

    Inputs (files or folders, told apart by content): native JSONL events, OTLP JSON spans, MCP JSON-RPC
    logs, Claude Code transcripts and hook payload logs, the Claude Code hook store (SQLite), the proxy's
    audit log, and AgentDojo runs (folders or archives).

    The report holds a summary of all sessions, an index, and per session its alerts, its capability graph
    with the alert path highlighted, the timeline of its calls and the evidence of each confirmed or denied
    call, the matching text marked in the arguments and in the result it came from.

    Exit codes: 0 written; 2 unreadable input or a rejected record (everything readable is still reported).
    """
    try:
        rules = load_rules(rules_dirs, builtin=builtin_rules)
    except RuleLoadError as exc:
        for problem in exc.problems:
            click.echo(f"error: {problem}", err=True)
        raise SystemExit(EXIT_INPUT) from None
    monitor = SessionMonitor(posture=Posture(posture), rules=rules, builtin_rules=False)
    summary = AnalysisSummary()
    try:
        fh = output.open("w", encoding="utf-8")
    except OSError as exc:
        raise click.UsageError(f"cannot write {output}: {exc.strerror or exc}") from exc
    errors = 0
    with fh:
        writer = HtmlReportWriter(fh, title=title, limits=HtmlLimits(max_bytes=max_bytes))
        recorder = CallTextRecorder(read_inputs(paths, InputFormat(input_format)))
        for item in analyze_records(recorder, monitor):
            if isinstance(item, RecordError):
                summary.errors += 1
                writer.write_error(item)
                if errors < _MAX_ERRORS_SHOWN:
                    click.echo(f"error: {item.source}: {item.message}", err=True)
                errors += 1
            else:
                summary.add(item)
                writer.write_session(item, recorder.take(item))
        writer.close(summary)
    if errors > _MAX_ERRORS_SHOWN:
        click.echo(f"error: … and {errors - _MAX_ERRORS_SHOWN} more input errors", err=True)
    click.echo(f"{output}: {summary.sessions} sessions, {summary.calls} calls", err=True)
    sys.exit(EXIT_INPUT if summary.errors else EXIT_OK)


COMMANDS: list[click.Command] = [report]
