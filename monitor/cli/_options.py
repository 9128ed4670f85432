"""Options the commands share, written once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from monitor.models import Posture

__all__ = ["builtin_rules_option", "format_option", "output_option", "posture_option", "rules_option"]

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
