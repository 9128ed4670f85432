"""Commands for Claude Code: ``hook``, ``install``, ``uninstall`` and ``sessions``."""

from __future__ import annotations

import math
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
import orjson
from rich import box
from rich.table import Table
from rich.text import Text

from monitor.cli._options import (
    EXIT_INPUT,
    builtin_rules_option,
    load_scope_or_exit,
    rules_option,
    scope_option,
    wide_option,
)
from monitor.decide import PolicyMode
from monitor.errors import InputError
from monitor.hosts.claude_code import (
    DEFAULT_TIMEOUT,
    InstallResult,
    build_hook_command,
    find_install_problems,
    install_hooks,
    resolve_settings_path,
    run_hook,
    uninstall_hooks,
)
from monitor.models import Action, Level, Posture
from monitor.report import ACTION_STYLE, fit_table, make_console, resolve_width, style_level
from monitor.store import HookStore, StoredSession, default_store_path

__all__ = ["COMMANDS"]

_TIMEOUT_MARGIN = 10


def _fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(EXIT_INPUT)


# -- hook ---------------------------------------------------------------------------------------------------


@click.group("hook")
def hook_group() -> None:
    """Answer an agent host's hook events (the host runs them; see trifecta install)."""


@hook_group.command(
    "claude-code",
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []},
)
@click.argument("arguments", nargs=-1, type=click.UNPROCESSED)
def hook_claude_code(arguments: tuple[str, ...]) -> None:
    """Read one Claude Code hook event (JSON) from standard input and answer it on standard output.

    Options: --state-dir DIR, --rules DIR (repeatable), --no-builtin-rules, --posture balanced|strict,
    --policy default|reviewed-only, --scope FILE, --on-allow pass|allow, --timeout S. Claude Code runs this for
    each event once `trifecta install claude-code` has added it to a settings file.
    """
    run_hook(list(arguments))


# -- install / uninstall ------------------------------------------------------------------------------------

_project_option = click.option(
    "--project",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="The project folder: change its .claude/settings.json (shared with the project).",
)
_user_option = click.option(
    "--user", is_flag=True, default=False, help="Change the user's ~/.claude/settings.json (the default)."
)
_local_option = click.option(
    "--local",
    is_flag=True,
    default=False,
    help="Change the project's personal .claude/settings.local.json instead (the current folder without --project).",
)


def _settings_path(project: Path | None, user: bool, local: bool) -> Path:
    if user and project is not None:
        raise click.UsageError("give --project DIR or --user, not both")
    if user and local:
        raise click.UsageError("--local is for a project's settings: give it with --project DIR, not --user")
    return resolve_settings_path(project, user=user, local=local)


@click.group("install")
def install_group() -> None:
    """Add trifecta's hook to an agent host's settings."""


@install_group.command("claude-code")
@_project_option
@_user_option
@_local_option
@click.option("--dry-run", is_flag=True, default=False, help="Print the change as a diff; write nothing.")
@click.option(
    "--state-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where the hook keeps its store of sessions (default: the user's state directory).",
)
@rules_option
@builtin_rules_option
@click.option(
    "--posture",
    type=click.Choice([p.value for p in Posture]),
    default=None,
    help="strict: tools nobody reviewed get all three legs (the hook's default: balanced).",
)
@click.option(
    "--policy",
    type=click.Choice([m.value for m in PolicyMode]),
    default=None,
    help="reviewed-only: unreviewed tools and writes are asked about (docs/policy.md; the hook's default: default).",
)
@scope_option
@click.option(
    "--on-allow",
    type=click.Choice(["pass", "allow"]),
    default=None,
    help="pass: an allowed call goes on to Claude Code's own permission rules (the hook's default); "
    "allow: the hook approves it.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help=f"Seconds the hook may take before it answers ask. Claude Code's own limit is set to "
    f"{DEFAULT_TIMEOUT} s, or this plus {_TIMEOUT_MARGIN} when longer.",
)
def install_claude_code(
    project: Path | None,
    user: bool,
    local: bool,
    dry_run: bool,
    state_dir: Path | None,
    rules_dirs: tuple[Path, ...],
    builtin_rules: bool,
    posture: str | None,
    policy: str | None,
    scope_file: Path | None,
    on_allow: str | None,
    timeout: float | None,
) -> None:
    """Add the trifecta hook to a Claude Code settings file (the user's, unless --project is given).

    Installing again replaces trifecta's entries (with the new options); every other setting and hook stays.
    The previous file is copied to settings.json.<UTC time>.bak beside it first.
    """
    path = _settings_path(project, user, local)
    load_scope_or_exit(scope_file, policy or "default")  # a scope the hook could not read is refused now
    command = build_hook_command(
        state_dir=state_dir,
        rules=rules_dirs,
        builtin_rules=builtin_rules,
        posture=posture,
        on_allow=on_allow,
        timeout=timeout,
        policy=policy,
        scope=scope_file,
    )
    limit = DEFAULT_TIMEOUT if timeout is None else max(DEFAULT_TIMEOUT, math.ceil(timeout) + _TIMEOUT_MARGIN)
    try:
        result = install_hooks(path, command, timeout=limit, dry_run=dry_run)
    except InputError as exc:
        _fail(str(exc))
        return
    _report(result, dry_run, "installed")
    for problem in find_install_problems(path, project):
        click.echo(f"warning: {problem}", err=True)
    if result.written and project is not None and not local:
        click.echo(
            "note: .claude/settings.json is shared with the project, and the hook command names this machine's "
            "Python; --local writes the personal .claude/settings.local.json instead."
        )


@click.group("uninstall")
def uninstall_group() -> None:
    """Remove trifecta's hook from an agent host's settings."""


@uninstall_group.command("claude-code")
@_project_option
@_user_option
@_local_option
@click.option("--dry-run", is_flag=True, default=False, help="Print the change as a diff; write nothing.")
def uninstall_claude_code(project: Path | None, user: bool, local: bool, dry_run: bool) -> None:
    """Remove the trifecta hook from a Claude Code settings file; every other setting and hook stays.

    The previous file is copied to settings.json.<UTC time>.bak beside it first.
    """
    path = _settings_path(project, user, local)
    try:
        result = uninstall_hooks(path, dry_run=dry_run)
    except InputError as exc:
        _fail(str(exc))
        return
    _report(result, dry_run, "uninstalled")


def _report(result: InstallResult, dry_run: bool, done: str) -> None:
    path = result.path
    if not result.changed:
        if done == "installed":
            click.echo(f"{path} already runs the trifecta hook with these options: nothing to do.")
        elif result.existed:
            click.echo(f"{path} has no trifecta hook: nothing to do.")
        else:
            click.echo(f"{path} does not exist: nothing to do.")
        return
    if dry_run:
        click.echo(result.render_diff(), nl=False)
        click.echo(f"dry run: {path} was not changed.")
        return
    if done == "installed":
        click.echo(f"The trifecta hook is installed in {path} for {', '.join(result.added)}.")
    else:
        click.echo(f"Removed {result.removed} trifecta hook entries from {path}.")
    if result.backup is not None:
        click.echo(f"The previous settings are saved in {result.backup}.")
    click.echo("Claude Code reads hooks when a session starts: start a new session (or review them under /hooks).")


# -- sessions -----------------------------------------------------------------------------------------------


def _format_time(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _session_to_json(session: StoredSession) -> dict[str, Any]:
    return {
        "session_id": session.session_id,
        "first_seen": _format_time(session.first_seen),
        "last_seen": _format_time(session.last_seen),
        "events": session.events,
        "calls": session.calls,
        "level": session.level,
        "worst_action": session.worst_action,
        "ended": session.ended,
        "cwd": session.cwd,
    }


_LEVELS = {level.value: level for level in Level}
_ACTIONS = {action.value: action for action in Action}


def _print_sessions(rows: list[dict[str, Any]], *, wide: bool = False) -> None:
    width = resolve_width(sys.stdout, wide=wide)
    console = make_console(sys.stdout, width)
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, expand=False)
    for header in ("session", "events", "calls", "level", "worst action", "last seen", "cwd"):
        table.add_column(header, justify="right" if header in ("events", "calls") else "left")
    for row in rows:
        level = Text(row["level"] or "-")
        if row["level"] in _LEVELS:  # coloured as in analyze: by the level and the actions taken
            worst = [_ACTIONS[row["worst_action"]]] if row["worst_action"] in _ACTIONS else []
            level.stylize(style_level(_LEVELS[row["level"]], worst))
        table.add_row(
            Text(row["session_id"]),
            Text(str(row["events"])),
            Text(str(row["calls"])),
            level,
            Text(row["worst_action"] or "-", style=ACTION_STYLE.get(row["worst_action"], "")),
            Text(row["last_seen"] + ("" if not row["ended"] else " (ended)")),
            Text(row["cwd"] or ""),
        )
    console.print(fit_table(table, width))
    console.print(f"{len(rows)} session" if len(rows) == 1 else f"{len(rows)} sessions")


@click.command("sessions")
@click.option(
    "--state-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The hook's state directory (default: the one the hook uses without --state-dir).",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["table", "json"]),
    default="table",
    show_default=True,
    help="Output format.",
)
@wide_option()
def sessions(state_dir: Path | None, output_format: str, wide: bool) -> None:
    """List the sessions the Claude Code hook has stored: events, calls, level, worst action, last seen, cwd."""
    path = default_store_path(state_dir)
    stored: list[StoredSession] = []
    if not path.exists():
        click.echo(f"no sessions: {path} does not exist (the hook has not run with this state directory)", err=True)
    else:
        try:
            with HookStore(path, read_only=True) as store:
                stored = store.sessions()
        except InputError as exc:
            _fail(str(exc))
            return
    rows = [_session_to_json(s) for s in stored]
    if output_format == "json":
        click.echo(orjson.dumps(rows, option=orjson.OPT_INDENT_2).decode())
    else:
        _print_sessions(rows, wide=wide)


COMMANDS: list[click.Command] = [hook_group, install_group, uninstall_group, sessions]
