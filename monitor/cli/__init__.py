"""The ``trifecta`` command line."""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import click
import orjson

from monitor import __version__
from monitor.agreement import agreement_to_json, measure_agreement, render_agreement, summarize_agreement
from monitor.analysis import AnalysisProgress, collect_for_batch
from monitor.classify import (
    build_rule_schema,
    check_test_coverage,
    draft_rule_file,
    dump_rule_file,
    find_wildcard_risks,
    load_builtin_rules,
    load_rules,
    parse_definitions,
    run_rule_tests,
    update_pins,
)
from monitor.cli._eval import eval_agentdojo
from monitor.cli._formats import INPUT_FORMATS_HELP
from monitor.cli._options import (
    EXIT_FINDINGS,
    EXIT_INPUT,
    EXIT_OK,
    ErrorEcho,
    builtin_rules_option,
    format_option,
    input_format_option,
    load_rules_or_exit,
    load_scope_or_exit,
    output_option,
    policy_option,
    posture_option,
    rules_option,
    scope_option,
    wide_option,
)
from monitor.cli._progress import show_progress
from monitor.clients import CLIENT_TITLES, Client, build_client_tables
from monitor.decide import Policy, PolicyMode
from monitor.errors import InputError, RuleLoadError
from monitor.ingest import InputFormat, RecordError, ToolList, read_tool_list, read_tool_lists
from monitor.lint import lint_paths
from monitor.models import (
    AnalysisSummary,
    Level,
    Posture,
    SessionReport,
    Severity,
    build_event_schema,
    graph_to_node_link,
    name_graph_file,
    write_graphml,
)
from monitor.report import (
    JsonDocumentWriter,
    JsonLinesWriter,
    SarifWriter,
    TableWriter,
    clients_to_json,
    lint_to_json,
    lint_to_sarif,
    print_lint_table,
    print_scenarios,
    render_clients,
    scenarios_to_json,
)
from monitor.scale import EngineSpec, analyze_paths, count_cores, find_dask, parse_scheduler
from monitor.scenarios import build_scenario_schema, load_scenarios, run_scenarios
from monitor.session import MonitorConfig
from monitor.types import ReportWriter

_ANALYZE_HELP = f"""Analyse session traces and report each session's level, legs, decisions and alerts.

{INPUT_FORMATS_HELP}

--level and --min-severity choose the sessions shown; the summary counts every session analysed, and the exit
code (--fail-on) is judged on all of them. On a terminal, progress shows on standard error (not with --quiet).

Exit codes: 0 nothing at or above --fail-on; 1 alerts at or above it; 2 unreadable input, any rejected record or
an engine failure on a session (everything readable is still analysed and reported).
"""


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="trifecta")
def main() -> None:
    """Watch AI-agent sessions for the lethal trifecta: private data, untrusted content and external
    communication in one session."""


@main.command(help=_ANALYZE_HELP)
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@input_format_option
@posture_option
@format_option("table", "json", "jsonl", "sarif")
@output_option
@rules_option
@builtin_rules_option
@click.option(
    "--baseline",
    type=click.Choice([c.value for c in Client]),
    default=None,
    help="A client profile whose own confirmations stay; the stricter action wins, and the summary compares.",
)
@policy_option
@scope_option
@click.option(
    "--fail-on",
    type=click.Choice(["never", *[s.value for s in Severity if s is not Severity.INFO]]),
    default="never",
    show_default=True,
    help="Exit 1 when an alert of this severity or higher was raised.",
)
@click.option(
    "--level",
    "min_level",
    type=click.Choice([lv.value for lv in Level]),
    default=None,
    help="Show only sessions at this level or above (clean < partial < armed < trifecta < exfiltration).",
)
@click.option(
    "--min-severity",
    type=click.Choice([s.value for s in Severity]),
    default=None,
    help="Show only sessions with an alert of this severity or above (info < warning < high < critical).",
)
@wide_option("call ids and source paths")
@click.option(
    "--graph",
    "graph_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Also write each shown session's capability graph into DIR: one GraphML file and one node-link JSON "
    "file per session.",
)
@click.option(
    "--quiet", "-q", is_flag=True, default=False, help="No progress display on standard error (errors still print)."
)
@click.option(
    "--debug", is_flag=True, default=False, help="Print the traceback of each engine failure on standard error."
)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=None,
    help="Analyse in N worker processes (default: the number of cores; 1: in this process only). The output is "
    "the same whatever N.",
)
@click.option(
    "--dask",
    "dask_scheduler",
    metavar="ADDRESS|local[:N]",
    default=None,
    help="Analyse on a Dask cluster: a scheduler's address (tcp://host:8786), or local[:N] for N worker "
    "processes on this machine. The output is the same as in one process (docs/scale.md).",
)
def analyze(
    paths: tuple[Path, ...],
    input_format: str,
    posture: str,
    output_format: str,
    output: Path | None,
    rules_dirs: tuple[Path, ...],
    builtin_rules: bool,
    baseline: str | None,
    policy_mode: str,
    scope_file: Path | None,
    fail_on: str,
    min_level: str | None,
    min_severity: str | None,
    wide: bool,
    graph_dir: Path | None,
    quiet: bool,
    debug: bool,
    jobs: int | None,
    dask_scheduler: str | None,
) -> None:
    """Run ``trifecta analyze``; its help is :data:`_ANALYZE_HELP` (the input formats are named in one place)."""
    if jobs is not None and dask_scheduler is not None:
        raise click.UsageError("--jobs and --dask choose where the analysis runs: give one of them")
    if dask_scheduler is not None:
        try:
            parse_scheduler(dask_scheduler)
        except InputError as exc:
            raise click.UsageError(f"--dask: {exc.message}") from exc
        if not find_dask():
            raise click.UsageError("--dask needs Dask: pip install 'trifecta-monitor[dask]'")
    rules = load_rules_or_exit(rules_dirs, builtin_rules)
    scope = load_scope_or_exit(scope_file, policy_mode)
    policy = Policy(baseline=Client(baseline) if baseline else None, mode=PolicyMode(policy_mode), scope=scope)
    spec = EngineSpec(MonitorConfig(posture=Posture(posture), policy=policy, rules=rules), debug=debug)
    summary = AnalysisSummary(baseline=CLIENT_TITLES[Client(baseline)] if baseline else None)
    errors = ErrorEcho()
    shown = _session_filter(Level(min_level) if min_level else None, Severity(min_severity) if min_severity else None)
    progress = AnalysisProgress()
    if graph_dir is not None:
        try:
            graph_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise click.UsageError(f"cannot write graphs to {graph_dir}: {exc.strerror or exc}") from exc
    with (
        show_progress(progress, quiet=quiet),  # first: what is printed while it shows goes above it
        _open_output(output, binary=output_format != "table") as out,
        _engine_tracebacks(debug),
        collect_for_batch(),
    ):
        writer = _make_writer(output_format, out, Posture(posture), rules.sha256, wide=wide)
        items = analyze_paths(
            paths,
            InputFormat(input_format),
            spec,
            jobs=count_cores() if jobs is None else jobs,
            scheduler=dask_scheduler,
            progress=progress,
        )
        for item in items:
            if isinstance(item, RecordError):
                summary.errors += 1
                writer.write_error(item)
                errors.echo(item)
            else:
                summary.add(item)
                if shown(item):
                    writer.write_session(item)
                    if graph_dir is not None:
                        _write_graph(graph_dir, item)
        writer.close(summary)
    errors.finish()
    sys.exit(_exit_code(summary, fail_on))


@contextlib.contextmanager
def _engine_tracebacks(shown: bool) -> Iterator[None]:
    """With ``shown``, print the traceback of each engine failure (each is an error line either way)."""
    if not shown:
        yield
        return
    handler = logging.StreamHandler(sys.stderr)
    logger = logging.getLogger("monitor")
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)


def _session_filter(level: Level | None, severity: Severity | None) -> Callable[[SessionReport], bool]:
    """Whether a session is shown: at or above ``level``, with an alert at or above ``severity`` (both when given)."""

    def shown(report: SessionReport) -> bool:
        if level is not None and report.level.rank < level.rank:
            return False
        return severity is None or any(alert.severity.rank >= severity.rank for alert in report.alerts)

    return shown


def _write_graph(graph_dir: Path, report: SessionReport) -> None:
    """Write the session's capability graph as GraphML and node-link JSON (file names safe for any id)."""
    write_graphml(report, graph_dir / name_graph_file(report.session_id, ".graphml"))
    document = orjson.dumps(graph_to_node_link(report), option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS)
    (graph_dir / name_graph_file(report.session_id, ".json")).write_bytes(document)


def _exit_code(summary: AnalysisSummary, fail_on: str) -> int:
    if summary.errors:
        return EXIT_INPUT
    if fail_on != "never" and summary.max_severity is not None and summary.max_severity.rank >= Severity(fail_on).rank:
        return EXIT_FINDINGS
    return EXIT_OK


def _make_writer(
    output_format: str, out: IO[Any], posture: Posture, ruleset_sha256: str, *, wide: bool = False
) -> ReportWriter:
    if output_format == "json":
        return JsonDocumentWriter(out, tool_version=__version__, ruleset_sha256=ruleset_sha256, posture=posture)
    if output_format == "jsonl":
        return JsonLinesWriter(out)
    if output_format == "sarif":
        return SarifWriter(out)
    return TableWriter(out, color=None if out is sys.stdout else False, wide=wide)


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


@schema.command("scenario")
def schema_scenario() -> None:
    """The JSON Schema of a scenario file (``trifecta eval scenarios``)."""
    click.echo(orjson.dumps(build_scenario_schema(), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode())


@schema.command("rules")
def schema_rules() -> None:
    """The JSON Schema of a rule file (``--rules``, ``trifecta rules``)."""
    click.echo(orjson.dumps(build_rule_schema(), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode())


def _read_tool_list_or_exit(path: Path) -> ToolList:
    try:
        return read_tool_list(path)
    except InputError as exc:
        raise click.UsageError(str(exc)) from None


@main.group()
def rules() -> None:
    """Reviewed override rules: test, check, draft and pin them."""


@rules.command("test")
@click.argument("dirs", nargs=-1, type=click.Path(exists=True, path_type=Path))
def rules_test(dirs: tuple[Path, ...]) -> None:
    """Run the inline tests of the rule files in DIRS (default: the built-in packs). Exit 1 on a failure."""
    ruleset = load_rules_or_exit(dirs, True)
    chosen = [r for r in ruleset.rules if not dirs or any(_is_under(r.path, d) for d in dirs)]
    outcomes = run_rule_tests(ruleset, chosen)
    for o in outcomes:
        if not o.passed:
            click.echo(f"FAIL {o.source}: {o.message}")
    counted = [o for o in outcomes if o.index is not None or not o.passed]
    passed = sum(o.passed for o in counted)
    failed = len(counted) - passed
    click.echo(f"{len(chosen)} rule files")
    click.echo(f"{passed} passed, {failed} failed")
    sys.exit(EXIT_FINDINGS if failed else EXIT_OK)


@rules.command("check")
@click.argument("dirs", nargs=-1, type=click.Path(exists=True, path_type=Path))
def rules_check(dirs: tuple[Path, ...]) -> None:
    """Validate the built-in packs and the rule files in DIRS. Exit 1 when anything is wrong."""
    try:
        ruleset = load_rules(dirs)
    except RuleLoadError as exc:
        for problem in exc.problems:
            click.echo(f"error: {problem}")
        sys.exit(EXIT_FINDINGS)
    problems = [f"{r.source}: {p}" for r in ruleset.rules for p in check_test_coverage(r)]
    for problem in problems:
        click.echo(f"error: {problem}")
    for r in ruleset.rules:
        risks = find_wildcard_risks(r.rule)
        if risks:
            click.echo(
                f"warning: {r.path}:{r.lines.get('server', 1)}: server {r.rule.server!r} is a glob that lowers risk "
                f"for every server it matches ({'; '.join(risks)}), accepted by 'allow_wildcard: true'"
            )
    tools = sum(len(r.rule.tools) for r in ruleset.rules)
    click.echo(f"{len(ruleset)} rule files, {tools} tool entries, ruleset_sha256 {ruleset.sha256}")
    sys.exit(EXIT_FINDINGS if problems else EXIT_OK)


@rules.command("suggest")
@click.argument("tools_json", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--server", help="Server name (default: the one the file names).")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), help="Write the draft to FILE.")
def rules_suggest(tools_json: Path, server: str | None, output: Path | None) -> None:
    """Draft a rule file (status experimental) from a tool list's annotations and heuristics, for review."""
    listing = _read_tool_list_or_exit(tools_json)
    name = server or listing.server
    if not name:
        raise click.UsageError(f"{tools_json} does not name its server; give --server")
    # A server a built-in pack covers is replaced, never covered twice: the draft says which pack it overrides.
    covering = next((r for r in load_builtin_rules().rules if r.rule.server == name), None)
    if covering is not None:
        click.echo(f"the draft overrides built-in rule {covering.rule.id} ({covering.source})", err=True)
    overrides = str(covering.rule.id) if covering is not None else None
    draft = draft_rule_file(name, listing.tools, overrides=overrides, server_info=listing.server_info)
    if not any("absent" in test for test in draft["tests"]):
        click.echo(
            "every tool of the draft gets every leg, so it has no negative test: write one (a call and the legs "
            "'absent' from it) before 'trifecta rules check' accepts the file",
            err=True,
        )
    text = dump_rule_file(draft)
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")


@rules.command("pin")
@click.argument("tools_json", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--rules-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Update the pins of this rule file in place (entries whose match is a tool's exact name).",
)
def rules_pin(tools_json: Path, rules_file: Path | None) -> None:
    """Print each tool's definition hash, or update the pins of a rule file."""
    listing = _read_tool_list_or_exit(tools_json)
    hashes = {t.name: t.definition_hash for t in parse_definitions(listing.tools)}
    if rules_file is None:
        for name, digest in hashes.items():
            click.echo(f"{digest}  {name}")
        return
    text, pinned = update_pins(rules_file.read_text(encoding="utf-8"), hashes)
    rules_file.write_text(text, encoding="utf-8")
    click.echo(f"{rules_file}: pinned {len(pinned)} of {len(hashes)} tools")


def _is_under(path: Path, root: Path) -> bool:
    return path.resolve() == root.resolve() or root.resolve() in path.resolve().parents


@main.group("eval")
def eval_group() -> None:
    """Measure the monitor on benchmark runs."""


eval_group.add_command(eval_agentdojo)


@eval_group.command("heuristics")
@click.argument("servers_dir", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--rules",
    "rules_dirs",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    help="A folder (or file) of reviewed rule packs to compare with, instead of the built-in packs. Repeatable.",
)
@format_option("table", "json")
def eval_heuristics(servers_dir: Path, rules_dirs: tuple[Path, ...], output_format: str) -> None:
    """Compare the fallback layers (annotations, heuristics, balanced default) with the reviewed packs on the tool
    lists under SERVERS_DIR, leave-one-server-out: each server's tools classified with no pack for it, the
    server untrusted. Per leg, recall and false-leg rate per server and overall.

    Exit codes: 0 measured; 2 a file could not be read (named on stderr) or no server has both a tool list and a
    pack.
    """
    try:
        agreement = measure_agreement(servers_dir, rules_dirs or None)
    except RuleLoadError as exc:
        for problem in exc.problems:
            click.echo(f"error: {problem}", err=True)
        raise SystemExit(EXIT_INPUT) from None
    if output_format == "json":
        click.echo(orjson.dumps(agreement_to_json(agreement), option=orjson.OPT_INDENT_2).decode())
    else:
        click.echo(render_agreement(agreement))
        click.echo(summarize_agreement(agreement))
    for problem in agreement.problems:
        click.echo(f"error: {problem}", err=True)
    if not agreement.servers:
        click.echo(f"error: {servers_dir}: no tool list has a reviewed pack to compare with", err=True)
    sys.exit(EXIT_INPUT if agreement.problems or not agreement.servers else EXIT_OK)


@eval_group.command("scenarios")
@click.argument("directory", type=click.Path(exists=True, path_type=Path))
@format_option("table", "json")
@wide_option()
def eval_scenarios(directory: Path, output_format: str, wide: bool) -> None:
    """Run the scenario files (YAML, one scenario each) under DIRECTORY: attacks that must be stopped and their
    legitimate look-alikes that must go through. One row per scenario, then the counts.

    Exit codes: 0 every scenario passed; 1 a scenario failed or a file could not be read (named on stderr).
    """
    report = run_scenarios(load_scenarios(directory))
    if output_format == "json":
        click.echo(orjson.dumps(scenarios_to_json(report), option=orjson.OPT_INDENT_2).decode())
    else:
        print_scenarios(report, sys.stdout, wide=wide)
    for error in report.errors:
        click.echo(f"error: {error.source}: {error.message}", err=True)
    sys.exit(EXIT_OK if report.ok else EXIT_FINDINGS)


@main.command()
@click.argument("tools", nargs=-1, required=True, type=click.Path(path_type=Path))
@format_option("table", "json", "sarif")
@output_option
@wide_option()
def lint(tools: tuple[Path, ...], output_format: str, output: Path | None, wide: bool) -> None:
    """Check the tool annotations of tools/list results, tool arrays, single tools, MCP JSON-RPC logs or
    folders of them, as server authors need.

    Exit codes: 0 no errors (warnings allowed); 1 errors; 2 an input could not be read.
    """
    report = lint_paths(tools)
    if output_format == "table":
        with _open_output(output, binary=False) as out:
            print_lint_table(report, out, color=None if out is sys.stdout else False, wide=wide)
    else:
        document = lint_to_json(report) if output_format == "json" else lint_to_sarif(report)
        with _open_output(output, binary=True) as out:
            out.write(orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
    sys.exit(report.exit_code)


@main.command()
@click.argument("tools", nargs=-1, required=True, type=click.Path(path_type=Path))
@format_option("table", "json")
@wide_option()
def clients(tools: tuple[Path, ...], output_format: str, wide: bool) -> None:
    """What VS Code, Claude, ChatGPT, Codex CLI, Gemini CLI (plan mode) and Goose (smart approve) would do
    before calling each tool, and what the monitor adds once a session is armed."""
    tool_lists, problems = read_tool_lists(tools)
    for problem in problems:
        click.echo(f"error: {problem.file}: {problem.message}", err=True)
    tables = build_client_tables(tool_lists)
    if output_format == "json":
        click.echo(orjson.dumps(clients_to_json(tables), option=orjson.OPT_INDENT_2).decode())
    else:
        render_clients(tables, sys.stdout, wide=wide)
    sys.exit(EXIT_INPUT if problems else EXIT_OK)


def _add_host_commands() -> None:
    from monitor.cli._claude import COMMANDS as CLAUDE_COMMANDS
    from monitor.cli._explain import COMMANDS as EXPLAIN_COMMANDS
    from monitor.cli._proxy import COMMANDS as PROXY_COMMANDS
    from monitor.cli._report import COMMANDS as REPORT_COMMANDS

    for command in [*CLAUDE_COMMANDS, *EXPLAIN_COMMANDS, *PROXY_COMMANDS, *REPORT_COMMANDS]:
        main.add_command(command)


_add_host_commands()
