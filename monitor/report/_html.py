"""The HTML report of ``trifecta report``: one self-contained file, bounded in size.

The file holds its own style sheet, SVG drawings and a short script, and fetches nothing (a Content Security
Policy forbids every request, and only the report's own style and script may run): it works from ``file://``.
Everything read from a trace is escaped.

Content: a summary of all sessions (levels, actions, top reasons, alerts), an index of all sessions (most
severe first, paginated by the script), then one collapsible section per session: its alerts, each asked call's
decision in words (:func:`render_decisions`), its capability graph (:func:`render_graph_svg`), the timeline of
its calls, and the evidence of each confirmed or denied call with the matching text marked in the call's
arguments and in the result of the call it came from (:func:`render_evidence`: near-identical rows grouped).
Alerts are listed most severe first (critical, high, warning, info), in input order within a severity. The
page reflows down to a narrow window (760 px): long ids and texts wrap, graphs scale, nothing scrolls sideways.

Bounds (:class:`HtmlLimits`): the file is at most ``max_bytes`` (16 MB by default). The index takes at most
half of it, the session sections the rest; when the sections do not all fit, the most severe sessions keep
theirs (the others stay in the index, counted in the footer). Per session at most ``max_calls`` timeline rows
and ``max_evidence`` evidence rows (and ``max_decisions`` decisions) are shown, each text cut; every cut says
how much was left out.
"""

from __future__ import annotations

import heapq
import io
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import IO

from monitor.models import Action, Alert, AnalysisSummary, Leg, Level, RecordError, SessionReport, Severity
from monitor.report._html_assets import CONTENT_SECURITY_POLICY, SCRIPT, STYLE
from monitor.report._html_evidence import (
    cut_text,
    escape_text,
    label_call,
    render_decisions,
    render_evidence,
)
from monitor.report._html_graph import render_graph_svg, select_alert_path
from monitor.report._html_texts import SessionTexts

_LEG_CSS = {
    Leg.PRIVATE_DATA: ("leg-p", "P"),
    Leg.UNTRUSTED_CONTENT: ("leg-u", "U"),
    Leg.EXTERNAL_COMMUNICATION: ("leg-x", "X"),
}
_LEVEL_RANK = {level.value: level.rank for level in Level}
_MAX_ID_CHARS = 200
_MAX_DETAIL_CHARS = 600
_MAX_ERRORS = 50
_TOP_REASONS = 12
_FOOTER_RESERVE = 4_000


@dataclass(frozen=True, slots=True)
class HtmlLimits:
    """The bounds of one report (see the module)."""

    max_bytes: int = 16_000_000
    """The file never exceeds this many bytes (UTF-8)."""
    max_calls: int = 200
    """Timeline rows per session."""
    max_evidence: int = 60
    """Evidence rows per session."""
    max_decisions: int = 30
    """Asked calls per session whose decision is told in words."""
    open_sessions: int = 3
    """Sections shown expanded when the page opens (the most severe sessions)."""


@dataclass(frozen=True, slots=True)
class _Entry:
    rank: int
    seq: int
    level: str
    legs: str
    calls: int
    confirm: int
    deny: int
    alerts: int
    session_id: str
    source: str


_e = escape_text
_cut = cut_text


def sort_alerts(alerts: Iterable[Alert]) -> list[Alert]:
    """Return ``alerts`` most severe first (critical, high, warning, info), in their order within a severity."""
    return sorted(alerts, key=lambda alert: -alert.severity.rank)


def _level(level: str) -> str:
    css = level if level in {lv.value for lv in Level} else "clean"
    return f'<span class="lvl lvl-{css}">{_e(level)}</span>'


def _legs(legs: tuple[Leg, ...] | frozenset[Leg]) -> str:
    return "".join(f'<span class="leg {_LEG_CSS[leg][0]}">{_LEG_CSS[leg][1]}</span>' for leg in Leg if leg in legs)


class HtmlReportWriter:
    """A :class:`monitor.types.ReportWriter` that writes the HTML report to ``out`` when closed.

    Sessions are rendered as they come and held within the byte budget (more severe sessions displace less
    severe ones), so memory follows the budget and a small entry per session.
    """

    def __init__(self, out: IO[str], *, title: str = "trifecta-monitor report", limits: HtmlLimits | None = None):
        self._out = out
        self._title = title
        self._limits = limits or HtmlLimits()
        self._entries: list[_Entry] = []
        self._sections: dict[int, str] = {}
        self._heap: list[tuple[int, int]] = []  # (rank, -seq) of held sections: the first is evicted first
        self._held = 0
        self._reasons: Counter[str] = Counter()
        self._alerts: Counter[str] = Counter()
        self._alert_severity: dict[str, Severity] = {}
        self._errors: list[str] = []
        self._error_count = 0

    @property
    def _section_budget(self) -> int:
        return self._limits.max_bytes // 2 - _FOOTER_RESERVE

    def write_session(self, report: SessionReport, texts: SessionTexts | None = None) -> None:
        """Add one finished session (``texts``: excerpts of its evidence, from a ``CallTextRecorder``)."""
        seq = len(self._entries)
        rank = report.level.rank
        calls = report.calls
        self._entries.append(
            _Entry(
                rank=rank,
                seq=seq,
                level=report.level.value,
                legs=_legs(report.legs),
                calls=len(calls),
                confirm=sum(c.decision.action.asked_as is Action.CONFIRM for c in calls),
                deny=sum(c.decision.action is Action.DENY for c in calls),
                alerts=len(report.alerts),
                session_id=_cut(report.session_id, _MAX_ID_CHARS),
                source=_cut(str(getattr(report, "source", None) or ""), _MAX_ID_CHARS),
            )
        )
        for call in calls:
            self._reasons.update(r.value for r in call.decision.reasons)
        for alert in report.alerts:
            self._alerts[alert.kind.value] += 1
            known = self._alert_severity.get(alert.kind.value)
            if known is None or alert.severity.rank > known.rank:
                self._alert_severity[alert.kind.value] = alert.severity
        section = render_session_section(report, seq, texts or {}, self._limits)
        self._hold(seq, rank, section)

    def _hold(self, seq: int, rank: int, section: str) -> None:
        size = len(section.encode())
        while self._held + size > self._section_budget and self._heap and self._heap[0][0] < rank:
            _, neg_seq = heapq.heappop(self._heap)
            self._held -= len(self._sections.pop(-neg_seq).encode())
        if self._held + size <= self._section_budget:
            self._sections[seq] = section
            self._held += size
            heapq.heappush(self._heap, (rank, -seq))

    def write_error(self, error: RecordError) -> None:
        """Count one rejected record (the first ones are listed)."""
        self._error_count += 1
        if len(self._errors) < _MAX_ERRORS:
            self._errors.append(_cut(f"{error.source}: {error.message}", _MAX_DETAIL_CHARS))

    def close(self, summary: AnalysisSummary) -> None:
        """Write the whole document."""
        order = sorted(self._entries, key=lambda e: (-e.rank, e.seq))
        head = (
            '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{_e(CONTENT_SECURITY_POLICY)}">'
            '<meta name="viewport" content="width=device-width,initial-scale=1">'
            f"<title>{_e(self._title)}</title><style>{STYLE}</style></head><body>"
            f"<header><h1>{_e(self._title)}</h1></header><main>"
        )
        parts = [head, self._summary(summary)]
        used = len(head.encode()) + len(parts[1].encode())
        parts.append(self._index(order, self._limits.max_bytes // 2 - used - _FOOTER_RESERVE))
        parts.append("<h2>Sessions</h2>")
        opened = 0
        for entry in order:
            section = self._sections.get(entry.seq)
            if section is None:
                continue
            if opened < self._limits.open_sessions and entry.rank > Level.CLEAN.rank:
                section = section.replace('<details class="session"', '<details class="session" open', 1)
                opened += 1
            parts.append(section)
        left = len(self._entries) - len(self._sections)
        parts.append("</main><footer>")
        if left:
            parts.append(f'<p class="more">{left} less severe sessions not detailed (size bound); see the index</p>')
        parts.append(
            f"<p>Self-contained report: nothing is fetched. At most {self._limits.max_bytes:,} bytes; "
            f"per session at most {self._limits.max_calls} calls and {self._limits.max_evidence} evidence rows.</p>"
            f"</footer><script>{SCRIPT}</script></body></html>\n"
        )
        self._out.write("".join(parts))
        self._out.flush()

    def _summary(self, summary: AnalysisSummary) -> str:
        def table(title: str, counts: list[tuple[str, int]], badge: bool = False) -> str:
            rows = "".join(
                f"<tr><td>{_level(k) if badge else _e(k)}</td><td class='num'>{v:,}</td></tr>" for k, v in counts
            )
            return f"<table><thead><tr><th>{_e(title)}</th><th>count</th></tr></thead><tbody>{rows}</tbody></table>"

        levels = sorted(summary.by_level.items(), key=lambda kv: -_LEVEL_RANK.get(kv[0], 0))
        totals = [("sessions", summary.sessions), ("calls", summary.calls), ("input errors", summary.errors)]
        parts = [
            '<section id="summary"><h2>Summary</h2><div class="cards">',
            table("totals", totals),
            table("level", levels, badge=True),
            table("action", sorted(summary.by_action.items(), key=lambda kv: -kv[1])),
            table("top reasons", self._reasons.most_common(_TOP_REASONS)),
            self._alert_table(),
            "</div>",
        ]
        if self._errors:
            items = "".join(f"<li class='mono'>{_e(text)}</li>" for text in self._errors)
            more = self._error_count - len(self._errors)
            tail = f'<p class="more">{more} more errors not shown</p>' if more else ""
            parts.append(f"<h3>Input errors</h3><ul>{items}</ul>{tail}")
        parts.append("</section>")
        return "".join(parts)

    def _alert_table(self) -> str:
        """The alerts of all sessions by kind: most severe kind first, then in the order they were first seen."""
        kinds = sorted(self._alerts, key=lambda kind: -self._alert_severity[kind].rank)
        rows = "".join(
            f"<tr><td class='kind'>{_e(kind)}</td><td class='severity'>{_severity(self._alert_severity[kind])}</td>"
            f"<td class='num'>{self._alerts[kind]:,}</td></tr>"
            for kind in kinds
        )
        return (
            '<table class="alerts"><thead><tr><th>alerts</th><th>severity</th><th>count</th></tr></thead>'
            f"<tbody>{rows}</tbody></table>"
        )

    def _index(self, order: list[_Entry], budget: int) -> str:
        rows: list[str] = []
        used = 0
        for entry in order:
            sid = _e(entry.session_id)
            link = f'<a href="#s{entry.seq}" data-open>{sid}</a>' if entry.seq in self._sections else sid
            row = (
                f"<tr><td>{_level(entry.level)}</td><td>{entry.legs}</td><td class='num'>{entry.calls}</td>"
                f"<td class='num'>{entry.confirm}</td><td class='num'>{entry.deny}</td>"
                f"<td class='num'>{entry.alerts}</td><td class='sid'>{link}</td>"
                f"<td class='mono'>{_e(entry.source)}</td></tr>"
            )
            used += len(row.encode())
            if used > budget:
                break
            rows.append(row)
        more = len(order) - len(rows)
        tail = f'<p class="more">{more} more sessions not shown (size bound)</p>' if more else ""
        return (
            '<section id="index"><h2>All sessions</h2><table data-paged><thead><tr><th>level</th><th>legs</th>'
            "<th>calls</th><th>confirm</th><th>deny</th><th>alerts</th><th>session</th><th>source</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>{tail}</section>"
        )


def _severity(severity: Severity) -> str:
    return f'<span class="sev sev-{severity.value}">{_e(severity.value)}</span>'


def render_session_section(report: SessionReport, seq: int, texts: SessionTexts, limits: HtmlLimits) -> str:
    """Return one session's collapsible section: alerts, graph, timeline and evidence."""
    by_id = {call.call_id: call for call in report.calls}
    path = set(select_alert_path(report))
    counts = f"{len(report.calls)} calls, {len(report.alerts)} alerts"
    parts = [
        f'<details class="session" id="s{seq}"><summary>{_level(report.level.value)} {_legs(report.legs)} '
        f'<span class="sid">{_e(_cut(report.session_id, _MAX_ID_CHARS))}</span> '
        f'<span class="more">{_e(counts)}</span></summary>'
    ]
    source = getattr(report, "source", None)
    if source:
        parts.append(f'<p>Source: <span class="mono">{_e(_cut(str(source), _MAX_ID_CHARS))}</span></p>')
    if report.alerts:
        rows = []
        for alert in sort_alerts(report.alerts):
            steps = " → ".join(label_call(by_id.get(c), c) for c in alert.path[:12])
            rows.append(
                f"<tr><td class='severity'>{_severity(alert.severity)}</td><td class='kind'>{_e(alert.kind.value)}"
                f"</td><td>{_e(_cut(alert.message, _MAX_DETAIL_CHARS))}</td><td>{steps}</td></tr>"
            )
        parts.append(
            '<h3>Alerts</h3><table class="alerts"><thead><tr><th>severity</th><th>kind</th><th>message</th>'
            f"<th>path</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        )
    parts.append(render_decisions(report, limits.max_decisions))
    if report.calls:
        parts.append(f'<h3>Capability graph</h3><div class="graphbox">{render_graph_svg(report)}</div>')
    parts.append(_timeline(report, path, limits))
    parts.append(render_evidence(report, by_id, texts, limits.max_evidence))
    parts.append("</details>")
    return "".join(parts)


def _timeline(report: SessionReport, path: set[str], limits: HtmlLimits) -> str:
    rows = []
    for call in report.calls[: limits.max_calls]:
        decision = call.decision
        mark = " ◆" if call.call_id in path else ""
        row_class = decision.action.asked_as.value
        rows.append(
            f'<tr class="act-{row_class}"><td class="num">{call.index}{mark}</td>'
            f"<td>{_e(_cut(call.tool, 120))}</td><td>{_e(_cut(call.server, 120))}</td><td>{_legs(call.legs)}</td>"
            f'<td class="action">{_e(decision.action.value)}</td><td>{_level(decision.level.value)}</td>'
            f"<td>{_e(', '.join(r.value for r in decision.reasons))}</td></tr>"
        )
    more = len(report.calls) - len(rows)
    tail = f'<p class="more">{more} more calls not shown</p>' if more else ""
    return (
        "<h3>Timeline</h3><table class='timeline'><thead><tr><th>#</th><th>tool</th><th>server</th><th>legs</th>"
        f"<th>action</th><th>level</th><th>reasons</th></tr></thead><tbody>{''.join(rows)}</tbody></table>{tail}"
    )


def render_html_report(
    reports: list[SessionReport],
    summary: AnalysisSummary,
    *,
    texts: dict[str, SessionTexts] | None = None,
    title: str = "trifecta-monitor report",
    limits: HtmlLimits | None = None,
) -> str:
    """Return the self-contained HTML report of ``reports`` (``texts``: evidence excerpts by session id)."""
    out = io.StringIO()
    writer = HtmlReportWriter(out, title=title, limits=limits)
    for report in reports:
        writer.write_session(report, (texts or {}).get(report.session_id))
    writer.close(summary)
    return out.getvalue()
