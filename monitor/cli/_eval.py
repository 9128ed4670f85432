"""``trifecta eval agentdojo``: replaying AgentDojo and AgentDyn runs, labelled by their injection tasks."""

from __future__ import annotations

import sys
from pathlib import Path

import click
import orjson

from monitor.analysis import collect_for_batch
from monitor.cli._options import (
    EXIT_INPUT,
    EXIT_OK,
    ErrorEcho,
    builtin_rules_option,
    format_option,
    load_rules_or_exit,
    posture_option,
    rules_option,
    wide_option,
)
from monitor.errors import InputError
from monitor.evaluation import (
    InjectionTask,
    LabelledRuns,
    evaluate_agentdojo,
    evaluate_leave_one_suite_out,
    evaluation_to_json,
    load_injection_tasks,
)
from monitor.models import Posture
from monitor.report import print_evaluation

__all__ = ["eval_agentdojo"]


@click.command("agentdojo")
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--labels",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="injection-tasks.json with goal classes, AgentDojo's or AgentDyn's (default: the one beside each RUNS). "
    "Repeatable: one for every RUNS, in order, or one for all.",
)
@rules_option
@builtin_rules_option
@posture_option
@format_option("table", "json")
@click.option(
    "--leave-one-suite-out",
    is_flag=True,
    help="Also evaluate once per suite with the rule files of its own (those whose server its calls use) removed "
    "and every other kept; a suite no pack covers is reported with its normal replay. Report each suite's "
    "figures and the overall ones.",
)
@wide_option()
def eval_agentdojo(
    runs: tuple[Path, ...],
    labels: tuple[Path, ...],
    rules_dirs: tuple[Path, ...],
    builtin_rules: bool,
    posture: str,
    output_format: str,
    leave_one_suite_out: bool,
    wide: bool,
) -> None:
    """Replay AgentDojo or AgentDyn runs (files, folders or .tar.gz), every suite scored together: benign sessions
    prompted and alerted, attacks caught, alerted and caught as hijacks, every miss."""
    sets = [LabelledRuns(path, tasks) for path, tasks in zip(runs, _load_labels_or_exit(runs, labels), strict=True)]
    rules = load_rules_or_exit(rules_dirs, builtin_rules)
    with collect_for_batch():
        if leave_one_suite_out:
            loso = evaluate_leave_one_suite_out(sets, rules=rules, posture=Posture(posture))
            evaluation, held_out = loso.all_rules, loso.held_out
        else:
            evaluation, held_out = evaluate_agentdojo(sets, rules=rules, posture=Posture(posture)), None
    document = evaluation_to_json(evaluation, held_out)
    if output_format == "json":
        click.echo(orjson.dumps(document, option=orjson.OPT_INDENT_2).decode())
    else:
        print_evaluation(document, sys.stdout, wide=wide)
    echo = ErrorEcho()
    for error in evaluation.errors:
        echo.echo(error)
    echo.finish()
    sys.exit(EXIT_INPUT if evaluation.errors else EXIT_OK)


def _load_labels_or_exit(
    runs: tuple[Path, ...], labels: tuple[Path, ...]
) -> list[dict[tuple[str, str], InjectionTask]]:
    """The labels of each RUNS: ``--labels`` paired in order (one for all when given once), else the
    ``injection-tasks.json`` beside it; a file read once however many RUNS it labels."""
    if labels and len(labels) not in (1, len(runs)):
        raise click.UsageError(
            f"--labels given {len(labels)} times for {len(runs)} RUNS: give it once, or once per RUNS"
        )
    paths = [
        labels[min(i, len(labels) - 1)]
        if labels
        else (path.parent if path.is_file() else path) / "injection-tasks.json"
        for i, path in enumerate(runs)
    ]
    loaded: dict[Path, dict[tuple[str, str], InjectionTask]] = {}
    for path in paths:
        if not path.exists():
            raise click.UsageError(f"no labels file at {path}; give --labels")
        try:
            if path not in loaded:
                loaded[path] = load_injection_tasks(path)
        except InputError as exc:
            raise click.UsageError(f"--labels: {exc}") from None
    return [loaded[path] for path in paths]
