"""``trifecta explain``: one session, or one decision, in plain words."""

from __future__ import annotations

import difflib
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import NoReturn

import click

from monitor.analysis import analyze_records
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
from monitor.ingest import InputFormat, InputStream
from monitor.models import Posture, Record, RecordError, SessionReport
from monitor.report import find_call, render_explanation
from monitor.session import MonitorConfig, SessionMonitor

__all__ = ["COMMANDS", "explain"]

_CLOSE_MATCHES = 5


class _OneSession(InputStream):
    """The records of one session (and every input error), noting the ids of the sessions skipped."""

    def __init__(self, paths: Iterable[Path], input_format: InputFormat, session_id: str) -> None:
        super().__init__(paths, input_format)
        self.session_id = session_id
        self.seen: dict[str, None] = {}

    def __next__(self) -> Record:
        while True:
            record = super().__next__()
            if isinstance(record, RecordError):
                return record
            self.seen.setdefault(record.session_id, None)
            if record.session_id == self.session_id:
                return record


@click.command("explain")
@click.argument("input_path", metavar="INPUT", type=click.Path(path_type=Path))
@click.argument("session_id", metavar="SESSION")
@click.argument("call_key", metavar="[CALL]", required=False)
@input_format_option
@posture_option
@rules_option
@builtin_rules_option
@click.option("--width", type=click.IntRange(min=40), default=None, help="Columns (default: the terminal's, or 100).")
def explain(
    input_path: Path,
    session_id: str,
    call_key: str | None,
    input_format: str,
    posture: str,
    rules_dirs: tuple[Path, ...],
    builtin_rules: bool,
    width: int | None,
) -> None:
    """Explain one session of INPUT, or one decision: the legs and what gave each, the alert path, the
    evidence and what would change the decision.

    INPUT is a file or folder in any format `trifecta analyze` reads (native JSONL events, OTLP JSON spans,
    MCP JSON-RPC logs, Claude Code transcripts and hook payload logs, the Claude Code hook store, the proxy's
    audit log, AgentDojo runs). CALL is a call id or the call's index in the session (0 is the first); without
    it, the decision explained is the one that raised the session to its level.

    Exit codes: 0 explained; 2 unreadable input, any rejected record, or an unknown session or call.
    """
    rules = load_rules_or_exit(rules_dirs, builtin_rules)
    monitor = SessionMonitor(MonitorConfig(posture=Posture(posture), rules=rules))
    stream = _OneSession([input_path], InputFormat(input_format), session_id)
    report: SessionReport | None = None
    errors = ErrorEcho()
    for item in analyze_records(stream, monitor):
        if isinstance(item, RecordError):
            errors.echo(item)
        else:
            report = item
    errors.finish()
    if report is None:
        close = _close(session_id, stream.seen)
        listed = list(stream.seen)[:_CLOSE_MATCHES]
        if len(stream.seen) > len(listed):
            listed.append(f"… ({len(stream.seen)} in all)")
        _fail(f"no session {session_id!r} in {input_path}", close or listed, what="" if close else "sessions")
    call_id = None
    if call_key is not None:
        call = find_call(report, call_key)
        if call is None:
            names = {c.call_id: None for c in report.calls}
            close = _close(call_key, names)
            listed = [f"{c.index} ({c.call_id})" for c in report.calls[:_CLOSE_MATCHES]]
            _fail(f"no call {call_key!r} in session {session_id!r}", close or listed, what="" if close else "calls")
        call_id = call.call_id
    render_explanation(report, sys.stdout, call_id=call_id, width=width)
    sys.exit(EXIT_INPUT if errors.count else EXIT_OK)


def _close(key: str, names: Iterable[str]) -> list[str]:
    return difflib.get_close_matches(key, list(names), n=_CLOSE_MATCHES, cutoff=0.5)


def _fail(message: str, matches: list[str], *, what: str = "") -> NoReturn:
    hint = f"; {what or 'close matches'}: {', '.join(matches)}" if matches else ""
    click.echo(f"error: {message}{hint}", err=True)
    sys.exit(EXIT_INPUT)


COMMANDS: list[click.Command] = [explain]
