"""The ``trifecta`` command line."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Protocol

import click
import orjson

from monitor import __version__
from monitor.analysis import AnalysisSummary, analyze_records
from monitor.ingest import InputFormat, RecordError, read_inputs
from monitor.models.events import build_event_schema
from monitor.models.legs import Posture
from monitor.models.reports import SessionReport
from monitor.models.tools import Severity
from monitor.report.document import JsonDocumentWriter, JsonLinesWriter, hash_ruleset
from monitor.report.table import TableWriter
from monitor.session.monitor import SessionMonitor

EXIT_OK, EXIT_FINDINGS, EXIT_INPUT = 0, 1, 2
_MAX_ERRORS_SHOWN = 20


class _Writer(Protocol):
    def write_session(self, report: SessionReport) -> None: ...
    def write_error(self, error: RecordError) -> None: ...
    def close(self, summary: AnalysisSummary) -> None: ...


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="trifecta")
def main() -> None:
    """Watch AI-agent sessions for the lethal trifecta: private data, untrusted content and external
    communication in one session."""


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--input-format",
    type=click.Choice([f.value for f in InputFormat]),
    default="auto",
    show_default=True,
    help="Input format; auto tells each file's format from its content.",
)
@click.option(
    "--posture",
    type=click.Choice([p.value for p in Posture]),
    default="balanced",
    show_default=True,
    help="strict: tools nobody reviewed get all three legs; balanced: annotations and heuristics.",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["table", "json", "jsonl"]),
    default="table",
    show_default=True,
    help="Output format.",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the output to FILE instead of standard output.",
)
@click.option(
    "--fail-on",
    type=click.Choice(["never", *[s.value for s in Severity if s is not Severity.INFO]]),
    default="never",
    show_default=True,
    help="Exit 1 when an alert of this severity or higher was raised.",
)
def analyze(
    paths: tuple[Path, ...], input_format: str, posture: str, output_format: str, output: Path | None, fail_on: str
) -> None:
    """Analyse session traces (native JSONL or AgentDojo runs) and report each session's level, legs,
    decisions and alerts.

    Exit codes: 0 nothing at or above --fail-on; 1 alerts at or above it; 2 unreadable input or any rejected
    record (everything readable is still analysed and reported).
    """
    monitor = SessionMonitor(posture=Posture(posture))
    summary = AnalysisSummary()
    errors_shown = 0
    with _open_output(output, binary=output_format != "table") as out:
        writer = _make_writer(output_format, out, Posture(posture))
        for item in analyze_records(read_inputs(paths, InputFormat(input_format)), monitor):
            if isinstance(item, RecordError):
                summary.errors += 1
                writer.write_error(item)
                if errors_shown < _MAX_ERRORS_SHOWN:
                    click.echo(f"error: {item.source}: {item.message}", err=True)
                errors_shown += 1
            else:
                summary.add(item)
                writer.write_session(item)
        writer.close(summary)
    if errors_shown > _MAX_ERRORS_SHOWN:
        click.echo(f"error: … and {errors_shown - _MAX_ERRORS_SHOWN} more input errors", err=True)
    sys.exit(_exit_code(summary, fail_on))


def _exit_code(summary: AnalysisSummary, fail_on: str) -> int:
    if summary.errors:
        return EXIT_INPUT
    if fail_on != "never" and summary.max_severity is not None and summary.max_severity.rank >= Severity(fail_on).rank:
        return EXIT_FINDINGS
    return EXIT_OK


def _make_writer(output_format: str, out: IO[Any], posture: Posture) -> _Writer:
    if output_format == "json":
        return JsonDocumentWriter(out, tool_version=__version__, ruleset_sha256=hash_ruleset([]), posture=posture)
    if output_format == "jsonl":
        return JsonLinesWriter(out)
    return TableWriter(out, color=None if out is sys.stdout else False)


@contextlib.contextmanager
def _open_output(path: Path | None, *, binary: bool) -> Iterator[IO[Any]]:
    if path is None:
        yield sys.stdout.buffer if binary else sys.stdout
        return
    try:
        fh = path.open("wb" if binary else "w", encoding=None if binary else "utf-8")
    except OSError as exc:
        raise click.UsageError(f"cannot write {path}: {exc.strerror or exc}") from exc
    with fh:
        yield fh


@main.group()
def schema() -> None:
    """Print the JSON Schemas of the input formats trifecta-monitor defines."""


@schema.command("events")
def schema_events() -> None:
    """The JSON Schema of one line of the native JSONL event format."""
    click.echo(orjson.dumps(build_event_schema(), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode())
