"""``trifecta report``: the self-contained HTML report of analysed sessions."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from monitor.analysis import analyze_records, collect_for_batch
from monitor.cli._formats import INPUT_FORMATS_HELP
from monitor.cli._options import (
    EXIT_INPUT,
    EXIT_OK,
    ErrorEcho,
    builtin_rules_option,
    input_format_option,
    load_rules_or_exit,
    posture_option,
    rules_option,
)
from monitor.ingest import InputFormat, RecordError, read_inputs
from monitor.models import AnalysisSummary, Posture
from monitor.report import CallTextRecorder, HtmlLimits, HtmlReportWriter
from monitor.session import MonitorConfig, SessionMonitor

__all__ = ["COMMANDS", "report"]


_REPORT_HELP = f"""Analyse session traces and write one self-contained HTML report (opens from file://, fetches
nothing).

{INPUT_FORMATS_HELP}

The report holds a summary of all sessions, an index, and per session its alerts, its capability graph with the
alert path highlighted, the timeline of its calls and the evidence of each confirmed or denied call, the matching
text marked in the arguments and in the result it came from.

Exit codes: 0 written; 2 unreadable input or a rejected record (everything readable is still reported).
"""


@click.command(help=_REPORT_HELP)
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--output",
    "-o",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The HTML file to write.",
)
@input_format_option
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
    """Run ``trifecta report``; its help is :data:`_REPORT_HELP`."""
    rules = load_rules_or_exit(rules_dirs, builtin_rules)
    monitor = SessionMonitor(MonitorConfig(posture=Posture(posture), rules=rules))
    summary = AnalysisSummary()
    try:
        fh = output.open("w", encoding="utf-8")
    except OSError as exc:
        raise click.UsageError(f"cannot write {output}: {exc.strerror or exc}") from exc
    errors = ErrorEcho()
    with fh, collect_for_batch():
        writer = HtmlReportWriter(fh, title=title, limits=HtmlLimits(max_bytes=max_bytes))
        recorder = CallTextRecorder(read_inputs(paths, InputFormat(input_format)))
        for item in analyze_records(recorder, monitor):
            if isinstance(item, RecordError):
                summary.errors += 1
                writer.write_error(item)
                errors.echo(item)
            else:
                summary.add(item)
                writer.write_session(item, recorder.take(item))
        writer.close(summary)
    errors.finish()
    click.echo(f"{output}: {summary.sessions} sessions, {summary.calls} calls", err=True)
    sys.exit(EXIT_INPUT if summary.errors else EXIT_OK)


COMMANDS: list[click.Command] = [report]
