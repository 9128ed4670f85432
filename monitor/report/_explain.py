"""``trifecta explain``: one session, or one decision, told for someone who did not see the trace.

For the session: its level, its legs and which call brought each (with the rule, annotation hint or heuristic
that gave it), and its calls. For the decision (the call that raised the session to its level, or the call
asked for): its action and level, the alert path, each piece of evidence (what matched, which call it came
from, where it goes) and, reason by reason, what would change the decision (the explanations of
:data:`monitor.models.REASON_WORDING`, the one table of what each reason means).
"""

from __future__ import annotations

import io
import re
import shutil
from collections.abc import Iterable, Iterator, Mapping
from typing import IO, Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from monitor.models import (
    LEG_ORDER,
    REASON_WORDING,
    Alert,
    CallReport,
    Evidence,
    EvidenceKind,
    Leg,
    PathRole,
    Reason,
    ReasonWording,
    SessionReport,
    sort_legs,
)
from monitor.report._fit import is_terminal
from monitor.report._table_style import ACTION_STYLE, LEVEL_STYLE

__all__ = ["find_call", "render_explanation", "word_reason"]

_LEG_NAMES = {
    Leg.PRIVATE_DATA: "private data",
    Leg.UNTRUSTED_CONTENT: "untrusted content",
    Leg.EXTERNAL_COMMUNICATION: "external communication",
}
_NEWLINES = re.compile(r"\s*[\r\n]+\s*")
_MAX_TEXT = 240
_FLOWS_TO = "flows_to:"
_DEFAULT_WIDTH = 100
_MAX_ARGUMENT_DEPTH = 8


def find_call(report: SessionReport, key: str) -> CallReport | None:
    """Return the call of ``report`` named by ``key``: its call id, or its index in the session."""
    for call in report.calls:
        if call.call_id == key:
            return call
    if key.isdigit():
        for call in report.calls:
            if call.index == int(key):
                return call
    return None


def word_reason(reason: Reason, call: CallReport, report: SessionReport) -> str:
    """Return what ``reason`` on ``call``'s decision means and what would change it, in plain words."""
    wording = REASON_WORDING.get(reason) or ReasonWording(reason.value, clause=None)
    evidence = [e for e in call.decision.evidence if wording.evidence is None or e.kind is wording.evidence]
    if wording.origin is not None:
        evidence = [
            e for e in evidence if e.kind is EvidenceKind.DESTINATION and e.split_detail().how == wording.origin.value
        ] or evidence
    sources = list(dict.fromkeys(e.from_call for e in evidence if e.from_call))
    calls = {c.call_id: c for c in report.calls}
    source = " and ".join(_name_call(calls[s]) if s in calls else s for s in sources) or "an earlier call"
    destination = next(
        (e.split_detail().text for e in evidence if e.kind is EvidenceKind.DESTINATION), "the destination"
    )
    fields = {"tool": call.tool, "source": source, "destination": destination}
    return wording.text.format_map(_Fields(fields))


def render_explanation(
    report: SessionReport,
    out: IO[str],
    *,
    call_id: str | None = None,
    width: int | None = None,
    color: bool | None = None,
) -> None:
    """Print the explanation of ``report`` to ``out``: the session, then one decision.

    The decision is that of ``call_id`` when given, else that of the call that raised the session to its
    level (or its last call). ``width`` None is the terminal's width, or 100 columns when ``out`` is not a
    terminal; ``color`` None colours only a terminal.
    """
    terminal = is_terminal(out)
    if width is None:
        width = shutil.get_terminal_size((_DEFAULT_WIDTH, 24)).columns if terminal else _DEFAULT_WIDTH
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=width,
        force_terminal=terminal if color is None else color,
        no_color=color is False,
        highlight=False,
        soft_wrap=False,
        emoji=False,
    )
    calls = {c.call_id: c for c in report.calls}
    chosen = calls.get(call_id or report.raised_by or "") or (report.calls[-1] if report.calls else None)
    for part in _explain_session(report, chosen):
        console.print(part)
    if chosen is not None:
        for part in _explain_decision(report, chosen):
            console.print(part)
    # Table cells are padded to their column's width: trailing blanks carry nothing.
    out.write("".join(line.rstrip() + "\n" for line in buffer.getvalue().splitlines()))


# -- the session --------------------------------------------------------------------------------------------


def _explain_session(report: SessionReport, chosen: CallReport | None) -> Iterator[Any]:
    title = Text.assemble(
        ("Session ", "bold"),
        (report.session_id, "bold"),
        ": ",
        (report.level.value, LEVEL_STYLE.get(report.level, "")),
        f", {len(report.calls)} call{'' if len(report.calls) == 1 else 's'}",
    )
    if report.source:
        title.append(f" (read from {report.source})")
    yield title
    yield Text("")
    yield Text("Legs, and the call that brought each", style="bold")
    legs = _grid("leg", "first brought by", "given by")
    for leg in LEG_ORDER:
        bringer = next((c for c in report.calls if leg in c.legs), None)
        if leg not in report.legs:
            legs.add_row(_LEG_NAMES[leg], "never", "")
        elif bringer is None:
            legs.add_row(_LEG_NAMES[leg], "no call of the session", "")
        else:
            legs.add_row(_LEG_NAMES[leg], _name_call(bringer), _name_provenance(bringer, leg))
    yield legs
    yield Text("")
    yield Text("Calls", style="bold")
    table = _grid("#", "tool", "legs", "action", "level", "reasons")
    for call in report.calls:
        mark = "▶ " if chosen is not None and call.call_id == chosen.call_id else ""
        table.add_row(
            f"{mark}{call.index}",
            call.tool,
            _letters(call.legs),
            Text(call.decision.action.value, ACTION_STYLE.get(call.decision.action, "")),
            call.decision.level.value,
            ", ".join(r.value for r in call.decision.reasons),
        )
    yield table
    others = [a for a in report.alerts if chosen is None or a.call_id != chosen.call_id]
    if others:
        yield Text("")
        yield Text("Other alerts", style="bold")
        grid = _grid("alert", "severity", "call", "message")
        for alert in others:
            where = _name_call(_by_id(report, alert.call_id)) if alert.call_id else ""
            grid.add_row(alert.kind.value, alert.severity.value, where, alert.message)
        yield grid


# -- one decision -------------------------------------------------------------------------------------------


def _explain_decision(report: SessionReport, call: CallReport) -> Iterator[Any]:
    decision = call.decision
    yield Text("")
    yield Text.assemble(
        ("Decision on call ", "bold"),
        (f"{call.index} {call.tool}", "bold"),
        ": ",
        (decision.action.value, ACTION_STYLE.get(decision.action, "")),
        ", level ",
        (decision.level.value, LEVEL_STYLE.get(decision.level, "")),
    )
    yield Text(f"call id {call.call_id}" + (f", read from {call.source}" if call.source else ""))
    yield Text("In one line: " + decision.describe(call.tool, {c.call_id: c.tool for c in report.calls}))
    yield Text(
        f"legs before the call: {_letters(decision.legs_before) or 'none'}; "
        f"legs of the call: {_letters(decision.legs_call) or 'none'} "
        f"({'; '.join(f'{_LEG_NAMES[leg]}: {_name_provenance(call, leg)}' for leg in sort_legs(call.legs)) or 'none'})"
    )
    for alert in (a for a in report.alerts if a.call_id == call.call_id):
        yield Text("")
        yield Text.assemble(
            ("Alert ", "bold"), (alert.kind.value, "bold"), f" [{alert.severity.value}]: ", alert.message
        )
        path = list(_path_rows(report, alert))
        if path:
            yield Text("Path", style="bold")
            grid = _grid("step", "call", "tool", "role", "call id")
            for number, (index, tool, role, flow, step_id) in enumerate(path, 1):
                grid.add_row(str(number), str(index), tool, role, step_id)
                if flow:
                    grid.add_row("", "", f"↳ {flow}", "", "")
            yield grid
    if decision.evidence:
        yield Text("")
        yield Text(f"Evidence ({len(decision.evidence)}), and the argument of {call.tool} it is in", style="bold")
        grid = _grid("kind", "argument", "from", "what matched", wrapped=3)
        for item in decision.evidence:
            kind, shown, source, where = _evidence_row(report, call, item)
            grid.add_row(kind, where, source, shown)
        yield grid
    if decision.reasons:
        yield Text("")
        yield Text("What would change the decision", style="bold")
        grid = _grid("reason", "in plain words", wrapped=1)
        for reason in decision.reasons:
            grid.add_row(reason.value, word_reason(reason, call, report))
        yield grid
    if decision.monitor_action is not None:
        yield Text(f"the monitor alone decided {decision.monitor_action.value}")


def _path_rows(report: SessionReport, alert: Alert) -> Iterator[tuple[int | str, str, str, str, str]]:
    """The alert path: the graph search's steps when the alert has them, else its call ids."""
    if alert.steps:
        for step in alert.steps:
            yield step.index, step.tool, step.role.value, _name_flow(report, step.via, step.to), step.call_id
        return
    roles: set[PathRole] = set()
    for position, call_id in enumerate(alert.path):
        call = _by_id(report, call_id)
        if call is None:
            yield "?", "?", "", "", call_id
            continue
        role = _guess_role(call, roles, last=position == len(alert.path) - 1)
        roles.add(role)
        yield call.index, call.tool, role.value, "", call_id


def _name_flow(report: SessionReport, via: str, to: str) -> str:
    """What a path step passed on to the next: the evidence kinds linking them, or only the call order."""
    target = _by_id(report, to)
    where = f"call {target.index}" if target is not None else (to or "the next call")
    if via.startswith(_FLOWS_TO):
        return f"{via.removeprefix(_FLOWS_TO).replace('+', ', ')} → {where}"
    if via == "order":
        return f"its content, before {where}"
    return via


def _guess_role(call: CallReport, seen: set[PathRole], *, last: bool) -> PathRole:
    """A path of bare call ids: the first untrusted call brought the untrusted content, a later private one
    the private data; the last is the sink."""
    if last:
        return PathRole.SINK
    if Leg.UNTRUSTED_CONTENT in call.legs and PathRole.UNTRUSTED_SOURCE not in seen:
        return PathRole.UNTRUSTED_SOURCE
    if Leg.PRIVATE_DATA in call.legs:
        return PathRole.PRIVATE_SOURCE
    return PathRole.RELAY


def _evidence_row(report: SessionReport, call: CallReport, item: Evidence) -> tuple[str, Text, str, str]:
    source_call = _by_id(report, item.from_call) if item.from_call else None
    source = _name_call(source_call) if source_call else (item.from_call or "the user's words or settings")
    if item.kind is EvidenceKind.DESTINATION:
        value, path, origin = item.split_detail()
        return item.kind.value, Text(f"{value} ({origin})"), source, path or "arguments"
    if item.kind in (EvidenceKind.FRAGMENT, EvidenceKind.STEERING):
        text, _, how = item.split_detail()
        shown = Text(_quote(text))
        if how:
            shown.append(f" ({how})", style="dim")
        where = _find_argument(call.arguments, text) if call.arguments else None
        return item.kind.value, shown, source, where or "arguments"
    return item.kind.value, Text(item.detail), source, ""


def _find_argument(arguments: Mapping[str, Any], text: str) -> str | None:
    """The JSON pointer of the first argument value that holds ``text`` verbatim, if any."""
    needle = text.strip()
    for pointer, value in _walk(arguments, "", 0):
        if needle and needle in value:
            return pointer
    return None


def _walk(value: Any, pointer: str, depth: int) -> Iterator[tuple[str, str]]:
    if depth > _MAX_ARGUMENT_DEPTH:
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from _walk(item, f"{pointer}/{key}", depth + 1)
    elif isinstance(value, list | tuple):
        for position, item in enumerate(value):
            yield from _walk(item, f"{pointer}/{position}", depth + 1)
    elif isinstance(value, str):
        yield pointer or "/", value


# -- small pieces -------------------------------------------------------------------------------------------


class _Fields(dict[str, str]):
    """Format fields; a field a wording names but the decision lacks stays as its name."""

    def __missing__(self, key: str) -> str:
        return key


def _grid(*headers: str, wrapped: int | None = None) -> Table:
    """A table; with ``wrapped``, only that column wraps and the others keep their width."""
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold")
    for position, header in enumerate(headers):
        fixed = wrapped is not None and position != wrapped
        table.add_column(header, overflow="fold", no_wrap=fixed, ratio=None if fixed else 1)
    return table


def _by_id(report: SessionReport, call_id: str | None) -> CallReport | None:
    return next((c for c in report.calls if c.call_id == call_id), None)


def _name_call(call: CallReport | None) -> str:
    return f"{call.tool} (call {call.index})" if call is not None else "an unknown call"


def _name_provenance(call: CallReport, leg: Leg) -> str:
    provenance = call.provenance.get(leg)
    return f"{provenance.source.value} {provenance.rule}" if provenance else "the session's earlier calls"


def _letters(legs: Iterable[Leg]) -> str:
    letters = {Leg.PRIVATE_DATA: "P", Leg.UNTRUSTED_CONTENT: "U", Leg.EXTERNAL_COMMUNICATION: "X"}
    return "".join(letters[leg] for leg in sort_legs(legs))


def _quote(text: str) -> str:
    flat = _NEWLINES.sub(" ⏎ ", text.strip())
    return f"“{flat if len(flat) <= _MAX_TEXT else flat[: _MAX_TEXT - 1] + '…'}”"
