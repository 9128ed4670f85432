"""What the commands share, written once: options, exit codes, loading the rule packs, echoing input errors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from monitor.classify import RuleSet, load_rules
from monitor.decide import PolicyMode, Scope, load_scope
from monitor.errors import InputError, RuleLoadError
from monitor.ingest import InputFormat
from monitor.models import Posture, RecordError

__all__ = [
    "EXIT_FINDINGS",
    "EXIT_INPUT",
    "EXIT_OK",
    "ErrorEcho",
    "builtin_rules_option",
    "format_option",
    "input_format_option",
    "load_rules_or_exit",
    "load_scope_or_exit",
    "output_option",
    "policy_option",
    "posture_option",
    "rules_option",
    "scope_option",
    "wide_option",
]

EXIT_OK, EXIT_FINDINGS, EXIT_INPUT = 0, 1, 2
MAX_ERRORS_SHOWN = 20

F = TypeVar("F", bound=Callable[..., Any])


def format_option(*choices: str) -> Callable[[F], F]:
    """``--format`` with these choices, the first the default."""
    return click.option(
        "--format",
        "output_format",
        type=click.Choice(list(choices)),
        default=choices[0],
        show_default=True,
        help="Output format.",
    )


output_option = click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the output to FILE instead of standard output.",
)
posture_option = click.option(
    "--posture",
    type=click.Choice([p.value for p in Posture]),
    default="balanced",
    show_default=True,
    help="strict: tools nobody reviewed get all three legs; balanced: annotations and heuristics.",
)
policy_option = click.option(
    "--policy",
    "policy_mode",
    type=click.Choice([m.value for m in PolicyMode]),
    default=PolicyMode.DEFAULT.value,
    show_default=True,
    help="reviewed-only: unreviewed tools go to review, writes need an approval, uncertain retries reconcile, "
    "calls outside --scope are denied (docs/policy.md).",
)
scope_option = click.option(
    "--scope",
    "scope_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="With --policy reviewed-only: a YAML or JSON file of the servers, tools and destinations the user allowed.",
)


def load_scope_or_exit(scope_file: Path | None, policy_mode: str) -> Scope | None:
    """Read ``--scope`` (None without one); a scope without ``--policy reviewed-only``, or a file that cannot be
    read, is a usage error naming the file and line."""
    if scope_file is None:
        return None
    if PolicyMode(policy_mode) is not PolicyMode.REVIEWED_ONLY:
        raise click.UsageError("--scope applies with --policy reviewed-only")
    try:
        return load_scope(scope_file)
    except InputError as exc:
        raise click.UsageError(f"--scope: {exc}") from exc


def wide_option(shown_whole: str | None = None) -> Callable[[F], F]:
    """``--wide`` (``wide``): the table as wide as its content, not fitted to the terminal's width (nothing wraps);
    ``shown_whole``: what else it shows whole that the fitted table shortens."""
    what = f"show {shown_whole} whole, never shortened; " if shown_whole else ""
    return click.option(
        "--wide",
        is_flag=True,
        default=False,
        help=f"Table: {what}as wide as its content, not fitted to the terminal's width (COLUMNS), nothing wrapped.",
    )


rules_option = click.option(
    "--rules",
    "rules_dirs",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    help="A folder (or file) of reviewed override rules, added to the built-in packs. Repeatable.",
)
builtin_rules_option = click.option(
    "--builtin-rules/--no-builtin-rules",
    default=True,
    show_default=True,
    help="Use the rule packs shipped with trifecta-monitor.",
)
input_format_option = click.option(
    "--input-format",
    type=click.Choice([f.value for f in InputFormat]),
    default="auto",
    show_default=True,
    help="Input format; auto tells each file's format from its content.",
)


def load_rules_or_exit(dirs: tuple[Path, ...], builtin: bool) -> RuleSet:
    """Load the rule packs, or print each problem and exit with :data:`EXIT_INPUT`."""
    try:
        return load_rules(dirs, builtin=builtin)
    except RuleLoadError as exc:
        for problem in exc.problems:
            click.echo(f"error: {problem}", err=True)
        raise SystemExit(EXIT_INPUT) from None


class ErrorEcho:
    """Prints rejected records on standard error: the first :data:`MAX_ERRORS_SHOWN`, then how many more."""

    def __init__(self) -> None:
        self.count = 0

    def echo(self, error: RecordError) -> None:
        """Count the error; print it while fewer than the limit were printed."""
        if self.count < MAX_ERRORS_SHOWN:
            click.echo(f"error: {error.source}: {error.message}", err=True)
        self.count += 1

    def finish(self) -> None:
        """Say how many errors were not printed, if any."""
        if self.count > MAX_ERRORS_SHOWN:
            click.echo(f"error: … and {self.count - MAX_ERRORS_SHOWN} more input errors", err=True)
