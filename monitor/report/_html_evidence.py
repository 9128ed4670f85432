"""The parts of a session's HTML section that explain its asked calls: each decision in words, and the evidence.

Decisions: per confirmed, reviewed or denied call, the one line :meth:`Decision.describe` gives (what the call
would do, why the monitor asks or blocks) and, reason by reason, what would change the decision (the words of
``trifecta explain``, :func:`word_reason`).

Evidence: one row per evidence item, the matching text marked in the call's arguments and in the result of the
call it came from. Identical rows are one row with their count; more than :data:`GROUP_SHOWN` items of one
kind from one earlier call (14 fragments of one result, say) are one group, headed "14 fragments from #1 tool",
whose first rows are shown and the others are behind a ``<details>`` expander ("11 more fragments"): every row
is still in the file.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from html import escape

from monitor.models import Action, CallReport, Evidence, EvidenceKind, SessionReport
from monitor.report._explain import word_reason
from monitor.report._html_texts import Excerpt, SessionTexts, cut_excerpt, extract_needle, flatten_text

GROUP_SHOWN = 3
"""Rows of a group shown before its expander."""
_MAX_DETAIL_CHARS = 600
_NOUNS = {
    EvidenceKind.FRAGMENT: ("fragment", "fragments"),
    EvidenceKind.DESTINATION: ("destination", "destinations"),
    EvidenceKind.STEERING: ("steering value", "steering values"),
    EvidenceKind.UNEXAMINED: ("unexamined content", "unexamined contents"),
    EvidenceKind.SCOPE: ("scope finding", "scope findings"),
    EvidenceKind.RETRY: ("earlier attempt", "earlier attempts"),
}
_COLUMNS = (
    '<colgroup><col class="c-call"><col class="c-kind"><col class="c-ev"><col><col class="c-from"><col></colgroup>'
)


def escape_text(value: object) -> str:
    """Return ``value`` as HTML text (quotes escaped too)."""
    return escape(str(value), quote=True)


def cut_text(text: str, limit: int) -> str:
    """Return ``text``, or its first ``limit`` characters and how many were left out."""
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more characters)"


def label_call(call: CallReport | None, call_id: str | None) -> str:
    """Return a call as ``#index tool (server)``, or its bare id when the session has no such call."""
    if call is None:
        return f'<span class="mono">{escape_text(cut_text(call_id or "", 80))}</span>' if call_id else ""
    return (
        f"#{call.index} {escape_text(cut_text(call.tool, 80))} "
        f"<span class='more'>({escape_text(cut_text(call.server, 80))})</span>"
    )


def _marked(excerpt: Excerpt | None) -> str:
    if excerpt is None:
        return '<span class="more">not found as such</span>'
    return f"{escape_text(excerpt.before)}<mark>{escape_text(excerpt.match)}</mark>{escape_text(excerpt.after)}"


def _mark_in(text: str, needle: str) -> str:
    at = text.find(needle) if needle else -1
    if at < 0:
        return escape_text(text)
    return f"{escape_text(text[:at])}<mark>{escape_text(needle)}</mark>{escape_text(text[at + len(needle) :])}"


def _is_asked(call: CallReport) -> bool:
    return call.decision.action is not Action.ALLOW


def render_decisions(report: SessionReport, limit: int) -> str:
    """Return, for the first ``limit`` asked or denied calls, the decision in one line and what would change it."""
    asked = [call for call in report.calls if _is_asked(call)]
    if not asked:
        return ""
    tools = {call.call_id: call.tool for call in report.calls}
    parts = ["<h3>Why the monitor asks or blocks</h3><div class='decisions'>"]
    for call in asked[:limit]:
        decision = call.decision
        changes = "".join(
            f"<li><code>{escape_text(reason.value)}</code> {escape_text(word_reason(reason, call, report))}</li>"
            for reason in decision.reasons
        )
        parts.append(
            f'<div class="decision act-{decision.action.asked_as.value}"><p><strong>{label_call(call, call.call_id)}'
            f'</strong> <span class="action">{escape_text(decision.action.value)}</span></p>'
            f'<p class="describe">{escape_text(decision.describe(call.tool, tools))}</p>'
        )
        if changes:
            parts.append(f"<p class='more'>What would change the decision:</p><ul class='changes'>{changes}</ul>")
        parts.append("</div>")
    if len(asked) > limit:
        parts.append(f'<p class="more">{len(asked) - limit} more decisions not shown</p>')
    parts.append("</div>")
    return "".join(parts)


@dataclass(slots=True)
class _Row:
    """One evidence row after the call cell: its kind, its other cells, and how many identical items it stands for."""

    item: Evidence
    cells: str
    count: int = 1


def _render_cells(
    call: CallReport, position: int, item: Evidence, by_id: dict[str, CallReport], texts: SessionTexts
) -> str:
    found = texts.get((call.call_id, position))
    needle = found.needle if found else extract_needle(item)
    detail = _mark_in(cut_text(item.detail, _MAX_DETAIL_CHARS), needle)
    if found:
        arguments = _marked(found.arguments)
    elif getattr(call, "arguments", None):  # the report's own (bounded) copy of the arguments
        arguments = _marked(cut_excerpt(flatten_text(getattr(call, "arguments", None)), needle))
    else:
        arguments = ""
    source = _marked(found.source) if found and item.from_call else ""
    return (
        f"<td class='text'>{detail}</td><td class='text mono'>{arguments}</td>"
        f"<td>{label_call(by_id.get(item.from_call or ''), item.from_call)}</td><td class='text mono'>{source}</td>"
    )


def _render_row(row: _Row, call_cell: str, css: str) -> str:
    count = f' <span class="count">&times;{row.count}</span>' if row.count > 1 else ""
    return f'<tr class="{css}"><td>{call_cell}</td><td>{escape_text(row.item.kind.value)}{count}</td>{row.cells}</tr>'


def _group_rows(rows: list[_Row]) -> list[list[_Row]]:
    """Identical rows merged (counted), then the rows of one kind from one call together, in first-seen order."""
    unique: dict[tuple[EvidenceKind, str], _Row] = {}
    for row in rows:
        seen = unique.get((row.item.kind, row.cells))
        if seen is None:
            unique[(row.item.kind, row.cells)] = row
        else:
            seen.count += row.count
    groups: dict[tuple[EvidenceKind, str | None], list[_Row]] = {}
    for row in unique.values():
        groups.setdefault((row.item.kind, row.item.from_call), []).append(row)
    return list(groups.values())


def _count_items(count: int, kind: EvidenceKind, more: str = "") -> str:
    """``14 fragments``, ``1 more fragment``: the wording of the JSON output's abridgements (``12 more items``)."""
    singular, plural = _NOUNS.get(kind, (f"{kind.value} item", f"{kind.value} items"))
    return f"{count} {more}{singular if count == 1 else plural}"


def _render_group(call: CallReport, group: list[_Row], by_id: dict[str, CallReport]) -> str:
    call_cell = (
        f'{label_call(call, call.call_id)}<br><span class="lvl">{escape_text(call.decision.action.value)}</span>'
    )
    if len(group) <= GROUP_SHOWN:
        return "<tbody>" + "".join(_render_row(row, call_cell, "evrow") for row in group) + "</tbody>"
    first = group[0].item
    items = sum(row.count for row in group)
    source = label_call(by_id.get(first.from_call or ""), first.from_call)
    head = _count_items(items, first.kind) + (f" from {source}" if source else "")
    hidden = group[GROUP_SHOWN:]
    rest = "".join(_render_row(row, "", "evrow gitem") for row in hidden)
    more = _count_items(sum(row.count for row in hidden), first.kind, "more ")
    return (
        f'<tbody class="evgroup"><tr class="ghead"><td>{call_cell}</td><td>{escape_text(first.kind.value)}</td>'
        f'<td colspan="4"><strong>{head}</strong></td></tr>'
        + "".join(_render_row(row, "", "evrow gitem") for row in group[:GROUP_SHOWN])
        + f'<tr class="grest"><td colspan="6"><details><summary>{more}</summary>'
        f'<table class="ev">{_COLUMNS}<tbody>{rest}</tbody></table></details></td></tr></tbody>'
    )


def _collect_rows(
    report: SessionReport, by_id: dict[str, CallReport], texts: SessionTexts, limit: int
) -> Iterator[tuple[CallReport, list[_Row]]]:
    """Per asked call, its rows (evidence that names a source call first); at most ``limit`` in all."""
    taken = 0
    for call in report.calls:
        if not _is_asked(call):
            continue
        items = sorted(enumerate(call.decision.evidence), key=lambda pi: pi[1].from_call is None)
        rows = [
            _Row(item, _render_cells(call, position, item, by_id, texts)) for position, item in items[: limit - taken]
        ]
        taken += len(rows)
        if rows:
            yield call, rows


def render_evidence(report: SessionReport, by_id: dict[str, CallReport], texts: SessionTexts, limit: int) -> str:
    """Return the evidence table of the session's asked calls: at most ``limit`` items, grouped (see the module)."""
    total = sum(len(call.decision.evidence) for call in report.calls if _is_asked(call))
    if not total:
        return ""
    bodies: list[str] = []
    shown = 0
    for call, rows in _collect_rows(report, by_id, texts, limit):
        shown += len(rows)
        bodies.extend(_render_group(call, group, by_id) for group in _group_rows(rows))
    more = total - shown
    tail = f'<p class="more">{more} more evidence rows not shown</p>' if more else ""
    return (
        f'<h3>Evidence</h3><table class="ev">{_COLUMNS}<thead><tr><th>call</th><th>kind</th><th>evidence</th>'
        f"<th>in the arguments</th><th>from</th><th>in its result</th></tr></thead>{''.join(bodies)}</table>{tail}"
    )
