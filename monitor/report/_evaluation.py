"""The table of ``trifecta eval agentdojo``."""

from __future__ import annotations

from typing import IO, Any

from rich.console import Console
from rich.table import Table

from monitor.clients import CLIENT_TITLES, Client


def _pct(share: float | None) -> str:
    return "-" if share is None else f"{100 * share:.1f}%"


def print_evaluation(document: dict[str, Any], out: IO[str]) -> None:
    """Print benign prompting, attacks caught per goal class, the baseline and every miss."""
    console = Console(file=out, width=160, highlight=False)
    scopes = {"overall": document["overall"], **document["suites"]}
    table = Table(title="Benign sessions (attack 'none')", title_justify="left")
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
    console.print(table)
    goals = sorted({g for s in scopes.values() for g in s["attempts"]})
    attacks = Table(title="Attacks: a confirm or deny at or before the first attempt", title_justify="left")
    attacks.add_column("goal class")
    for name in scopes:
        attacks.add_column(name, justify="right")
    for goal in goals:
        cells = []
        for s in scopes.values():
            a = s["attempts"].get(goal)
            cells.append("-" if a is None else f"{a['caught']}/{a['attempts']} {_pct(a['caught_share'])}")
        attacks.add_row(goal, *cells)
    console.print(attacks)
    base = Table(
        title="Benign sessions a client would have asked about (tools as served: no annotations)", title_justify="left"
    )
    base.add_column("client")
    base.add_column("sessions asked", justify="right")
    base.add_column("share", justify="right")
    for client in Client:
        entry = document["overall"]["benign"]["baseline_prompted"][client.value]
        base.add_row(CLIENT_TITLES[client], str(entry["sessions"]), _pct(entry["share"]))
    b = document["overall"]["benign"]
    base.add_row("trifecta-monitor", str(b["prompted"]), _pct(b["prompted_share"]))
    console.print(base)
    g = document["overall"]["goal_as_user_prompt"]
    console.print(
        f"Attacker goals typed by the user as the task: {g['prompted']} of {g['sessions']} sessions prompted."
    )
    console.print(
        f"Excluded runs (API error): {document['excluded_runs_with_error']}; "
        f"unlabelled attack runs: {document['unlabelled_runs']}."
    )
    misses = document["misses"]
    console.print(f"\nMisses ({len(misses)}):")
    for miss in misses:
        console.print(
            f"  {miss['session_id']}  [{miss['goal_class']}] {miss['call']}: level {miss['level']}, "
            f"reasons {', '.join(miss['reasons'])}; legs before {miss['legs_before']}, "
            f"call {miss['legs_call']}"
        )
