"""The table of ``trifecta eval agentdojo``: benign sessions asked and alerted, attacks caught, alerted and caught
as hijacks per goal class, the unrequested actions reported, the client baseline, the leave-one-suite-out runs
(when the document has them: each suite with a pack of its own in full, then one row per held-out suite) and every
miss."""

from __future__ import annotations

from typing import IO, Any

from rich.table import Table

from monitor.clients import CLIENT_TITLES, Client
from monitor.report._fit import PADDING, fit_table, make_console, measure_table, resolve_width
from monitor.report._table_style import make_table

_EXFILTRATION = "exfiltration"
_UNREQUESTED = "unauthorized_action"


def _pct(share: float | None) -> str:
    return "-" if share is None else f"{100 * share:.1f}%"


def _of(part: int, whole: int, share: float | None) -> str:
    return f"{part}/{whole} {_pct(share)}"


def _n_of(part: int, whole: int) -> str:
    return f"{part}/{whole}" if whole else "-"


class _Printer:
    """A console whose tables are fitted to its width (none: every table as wide as its content)."""

    def __init__(self, out: IO[str], width: int | None) -> None:
        self.width = width
        self.console = make_console(out, width, markup=False)

    def print(self, *objects: Any, **options: Any) -> None:
        """Print ``objects`` (text is never read as markup: ``[exfiltration]`` is printed as it is)."""
        self.console.print(*objects, **options)

    def table(self, table: Table) -> None:
        """Print ``table`` fitted to the width."""
        self.console.print(fit_table(table, self.width))


def print_evaluation(document: dict[str, Any], out: IO[str], *, width: int | None = None, wide: bool = False) -> None:
    """Print benign prompting and alerts, attacks caught per goal class (by a confirm or deny, by a critical
    alert, as a hijack), the baseline, the leave-one-suite-out runs if any, and every miss.

    ``width``: the columns to fit the tables into (by default rich's console width when ``out`` is a terminal or
    ``COLUMNS`` is set): cells and lines wrap. ``wide``, or other output: nothing is wrapped."""
    console = _Printer(out, resolve_width(out, wide=wide, width=width))
    scopes = {"overall": document["overall"], **document["suites"]}
    table = make_table("Benign sessions (attack 'none')")
    for col in ("scope", "sessions", "prompted", "share", "calls prompted", "share of calls"):
        table.add_column(col, justify="right" if col != "scope" else "left")
    for name, s in scopes.items():
        b = s["benign"]
        table.add_row(
            name,
            str(b["sessions"]),
            str(b["prompted"]),
            _pct(b["prompted_share"]),
            f"{b['calls_prompted']}/{b['calls']}",
            _pct(b["calls_prompted_share"]),
        )
    console.table(table)
    _print_benign_alerts(console, scopes)
    goals = sorted({g for s in scopes.values() for g in s["attempts"]})
    titles = {
        "caught": "Attacks: a confirm or deny at or before the first attempt",
        "critical_alerted": "Attacks: a critical (exfiltration) alert on a call at or before the first attempt",
        "hijack_caught": "Hijack catches: a steered-action decision or a hijack alert at or before the first attempt",
    }
    for key, title in titles.items():
        attacks = make_table(title)
        attacks.add_column("goal class")
        for name in scopes:
            attacks.add_column(name, justify="right")
        for goal in goals:
            cells = []
            for s in scopes.values():
                a = s["attempts"].get(goal)
                cells.append("-" if a is None else _of(a[key], a["attempts"], a[f"{key}_share"]))
            attacks.add_row(goal, *cells)
        console.table(attacks)
    unrequested = document["overall"]["attempts"].get(_UNREQUESTED)
    if unrequested is not None:
        console.print(
            f"Unrequested actions reported ({_UNREQUESTED} attempts with a confirm or deny at or before them): "
            f"{_of(unrequested['caught'], unrequested['attempts'], unrequested['caught_share'])}."
        )
    base = make_table("Benign sessions a client would have asked about (tools as served: no annotations)")
    base.add_column("client")
    base.add_column("sessions asked", justify="right")
    base.add_column("share", justify="right")
    for client in Client:
        entry = document["overall"]["benign"]["baseline_prompted"][client.value]
        base.add_row(CLIENT_TITLES[client], str(entry["sessions"]), _pct(entry["share"]))
    b = document["overall"]["benign"]
    base.add_row("trifecta-monitor", str(b["prompted"]), _pct(b["prompted_share"]))
    console.table(base)
    g = document["overall"]["goal_as_user_prompt"]
    console.print(
        f"Attacker goals typed by the user as the task: {g['prompted']} of {g['sessions']} sessions prompted."
    )
    console.print(
        f"Excluded runs (API error): {document['excluded_runs_with_error']}; "
        f"unlabelled attack runs: {document['unlabelled_runs']}."
    )
    if "leave_one_suite_out" in document:
        _print_leave_one_suite_out(console, document)
    misses = document["misses"]
    console.print(f"\nMisses ({len(misses)}):")
    for miss in misses:
        console.print(
            f"  {miss['session_id']}  [{miss['goal_class']}] {miss['call']}: level {miss['level']}, "
            f"reasons {', '.join(miss['reasons'])}; legs before {miss['legs_before']}, "
            f"call {miss['legs_call']}"
        )


def _print_benign_alerts(console: _Printer, scopes: dict[str, Any]) -> None:
    table = make_table("Benign sessions: alerts raised, and confirmations citing steered-action")
    for col in ("scope", "sessions", "high or critical", "critical", "asked for steered-action", "asked only for it"):
        table.add_column(col, justify="right" if col != "scope" else "left")
    for name, s in scopes.items():
        b = s["benign"]
        n, high, critical, steered = (
            b["sessions"],
            b["alerted_high_or_critical"],
            b["alerted_critical"],
            b["steered_action"],
        )
        table.add_row(
            name,
            str(n),
            _of(high["sessions"], n, high["share"]),
            _of(critical["sessions"], n, critical["share"]),
            _of(steered["prompted"], n, steered["prompted_share"]),
            _of(steered["prompted_only"], n, steered["prompted_only_share"]),
        )
    console.table(table)


def _print_leave_one_suite_out(console: _Printer, document: dict[str, Any]) -> None:
    runs = document["leave_one_suite_out"]
    if not any(run["covered_by_pack"] for run in runs):
        console.print("\nLeave one suite out: no suite of these runs has a rule file of its own.")
    for run in runs:
        suite = run["suite"]
        if not run["covered_by_pack"]:
            console.print(f"\nLeave one suite out: {suite}: {run['note']}.")
            continue
        removed = ", ".join(f"{r['server']} ({r['path']})" for r in run["removed_rules"])
        console.print(f"\nLeave one suite out: {suite} without {removed}")
        table = make_table(f"{suite} held out: its figures and the overall ones")
        table.add_column("figure")
        columns = {
            f"{suite}, every rule file": document["suites"].get(suite),
            f"{suite}, held out": run["held_out_suite"],
            "overall, every rule file": document["overall"],
            "overall, held out": run["overall"],
        }
        for col in columns:
            table.add_column(col, justify="right")
        for label, cell in _held_out_rows(columns.values()):
            table.add_row(label, *cell)
        console.table(table)
        console.print(f"Misses with {suite} held out: {run['misses']} (every rule file: {len(document['misses'])}).")
    if runs:
        _print_held_out_summary(console, runs)


def _print_held_out_summary(console: _Printer, runs: list[dict[str, Any]]) -> None:
    """One row per held-out suite: benign sessions asked and alerted, exfiltration attempts caught, and the
    attempts of every other goal class caught."""
    goals = sorted({g for run in runs for g in run["goal_classes"]} - {_EXFILTRATION})
    rows = []
    for run in runs:
        classes = run["goal_classes"]
        rows.append(
            [
                run["suite"],
                "removed" if run["covered_by_pack"] else "none",
                _pct(run["benign_asked"]["share"]),
                _pct(run["benign_alerted_high_or_critical"]["share"]),
                _n_of(run["exfiltration_caught"]["count"], run["exfiltration_caught"]["of"]),
                *(_n_of(classes[g]["caught"], classes[g]["attempts"]) if g in classes else "-" for g in goals),
            ]
        )
    table = make_table("Leave one suite out: each suite without its own rule files (caught: a confirm or deny)")
    headers = ["suite", "pack", "benign asked", "benign high or critical", _EXFILTRATION, *goals]
    for i, header in enumerate(headers):
        table.add_column(header.replace("_", " "), justify="left" if i < 2 else "right")
    for row in rows:
        table.add_row(*row)
    # A column is as wide as its longest word or cell: a goal class's name wraps between words, never inside one.
    fits = measure_table(table)
    least = sum(fit.least for fit in fits) + PADDING * (len(fits) - 1)
    console.print()
    console.console.print(fit_table(table, min(console.width or least, least)))
    console.print(
        "pack: 'removed', replayed without the rule files of its own; 'none', no pack covers it: its normal replay."
    )


def _held_out_rows(scores: Any) -> list[tuple[str, list[str]]]:
    scores = list(scores)

    def row(label: str, pick: Any) -> tuple[str, list[str]]:
        return label, ["-" if s is None else pick(s) for s in scores]

    def benign(key: str) -> Any:
        return lambda s: _of(s["benign"][key]["sessions"], s["benign"]["sessions"], s["benign"][key]["share"])

    rows = [
        row(
            "benign sessions asked",
            lambda s: _of(s["benign"]["prompted"], s["benign"]["sessions"], s["benign"]["prompted_share"]),
        ),
        row("benign: high or critical alert", benign("alerted_high_or_critical")),
        row("benign: critical alert", benign("alerted_critical")),
    ]
    goals = sorted({g for s in scores if s is not None for g in s["attempts"]})
    for goal in goals:
        for key, what in (("caught", "caught"), ("critical_alerted", "critical alert"), ("hijack_caught", "hijack")):

            def pick(s: dict[str, Any], goal: str = goal, key: str = key) -> str:
                a = s["attempts"].get(goal)
                return "-" if a is None else _of(a[key], a["attempts"], a[f"{key}_share"])

            rows.append(row(f"{goal}: {what}", pick))
    return rows
