"""``trifecta proxy``: a stdio MCP proxy that decides every tool call."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from monitor.cli._options import (
    EXIT_INPUT,
    builtin_rules_option,
    load_rules_or_exit,
    load_scope_or_exit,
    policy_option,
    posture_option,
    rules_option,
    scope_option,
)
from monitor.decide import Policy, PolicyMode
from monitor.models import Posture
from monitor.session import MonitorConfig, SessionMonitor

__all__ = ["COMMANDS", "proxy"]

INSTALL_HINT = "pip install 'trifecta-monitor[hosts]'"


@click.command(
    context_settings={
        "help_option_names": ["-h", "--help"],
        "ignore_unknown_options": True,
        "allow_interspersed_args": False,
    }
)
@rules_option
@builtin_rules_option
@posture_option
@policy_option
@scope_option
@click.option(
    "--enforce",
    is_flag=True,
    default=False,
    help="Deny, rather than ask about, a send of private data to a destination only untrusted content suggested.",
)
@click.option(
    "--allowlist",
    "allowlist",
    multiple=True,
    metavar="DESTINATION",
    help="A destination the user sanctioned (an address, or a domain with its subdomains): sends to it are not asked "
    "about for who chose it. The proxy sees no user message, so this is how a host passes the user's own. "
    "Repeatable.",
)
@click.option(
    "--server-name",
    default=None,
    help="The server's name for the monitor and rule packs (default: the name the server announces, else the "
    "command's file name).",
)
@click.option(
    "--session-key",
    default=None,
    help="The session this proxy's calls belong to (default: a new key per proxy process).",
)
@click.option(
    "--audit-log",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Append the session's events and decisions to FILE (native JSONL, read by 'trifecta analyze').",
)
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def proxy(
    rules_dirs: tuple[Path, ...],
    builtin_rules: bool,
    posture: str,
    policy_mode: str,
    scope_file: Path | None,
    enforce: bool,
    allowlist: tuple[str, ...],
    server_name: str | None,
    session_key: str | None,
    audit_log: Path | None,
    command: tuple[str, ...],
) -> None:
    """Run the stdio MCP server COMMAND behind a proxy that decides every tool call.

    Give the server's command after '--': trifecta proxy --audit-log audit.jsonl -- npx -y some-mcp-server.
    The MCP client talks to the proxy on standard input and output; every message passes through unchanged,
    except that tools/list results are classified, and each tools/call is decided before it reaches the server:
    allowed calls go through, denied ones get an error result with the reason, and calls to confirm are put to
    the user through MCP elicitation where the client supports it (otherwise refused with the reason).

    One proxy process is one session (MCP 2026-07-28 has no protocol sessions): give --session-key to name it.

    Exit codes: the server's exit code when the server ends; 0 when the client closes the connection; 2 bad
    options, unreadable rules or no MCP SDK; 126/127 the command cannot be run.
    """
    try:
        import mcp  # noqa: F401  (an optional dependency)
    except ImportError:
        click.echo(f"error: trifecta proxy needs the MCP Python SDK: {INSTALL_HINT}", err=True)
        sys.exit(EXIT_INPUT)
    from monitor.hosts.mcp import run_stdio_proxy

    rules = load_rules_or_exit(rules_dirs, builtin_rules)
    try:
        policy = Policy(
            enforce=enforce,
            allowlist=allowlist,
            mode=PolicyMode(policy_mode),
            scope=load_scope_or_exit(scope_file, policy_mode),
        )
    except ValueError as exc:  # an allowlist entry that would sanction far more than one party
        raise click.BadParameter(_first_error(exc), param_hint="--allowlist") from None
    monitor = SessionMonitor(MonitorConfig(posture=Posture(posture), policy=policy, rules=rules))
    if audit_log is not None:
        try:
            audit_log.parent.mkdir(parents=True, exist_ok=True)
            audit_log.open("ab").close()
        except OSError as exc:
            raise click.UsageError(f"cannot write {audit_log}: {exc.strerror or exc}") from None
    code = run_stdio_proxy(
        monitor,
        command[0],
        command[1:],
        session_key=session_key,
        server_name=server_name,
        audit_log=audit_log,
    )
    sys.exit(code)


COMMANDS: list[click.Command] = [proxy]


def _first_error(exc: ValueError) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        return str(errors()[0]["msg"]).removeprefix("Value error, ")
    return str(exc)
