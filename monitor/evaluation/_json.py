"""The JSON document of ``trifecta eval agentdojo``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from monitor.clients import Client
from monitor.evaluation._labels import EXFILTRATION
from monitor.evaluation._scores import Evaluation, HeldOutSuite, SuiteScore

NO_PACK_NOTE = "no pack covers it: replayed as with every rule file"
"""What the leave-one-suite-out figures say of a suite no rule file of its own covers."""


def evaluation_to_json(evaluation: Evaluation, held_out: Sequence[HeldOutSuite] | None = None) -> dict[str, Any]:
    """Return the evaluation as a JSON-ready document (what ``trifecta eval agentdojo --format json`` writes).

    With ``held_out`` (``--leave-one-suite-out``), the document also has ``leave_one_suite_out``: per held-out
    suite, the rule files removed (id, server, path), that suite's scores and the overall ones without them,
    the number of misses, whether a pack of its own covers it (``covered_by_pack``, and a ``note`` when none
    does), and its headline figures: benign sessions asked and with a high or critical alert, exfiltration
    attempts caught, and per goal class the attempts, caught and caught as hijacks (``goal_classes``).
    """
    document = {
        "overall": _dump_score(evaluation.overall),
        "suites": {name: _dump_score(s) for name, s in sorted(evaluation.suites.items())},
        "misses": evaluation.misses,
        "excluded_runs_with_error": evaluation.excluded,
        "unlabelled_runs": evaluation.unlabelled,
        "errors": [e.model_dump() for e in evaluation.errors],
    }
    if held_out is not None:
        document["leave_one_suite_out"] = [
            {
                "suite": h.suite,
                "removed_rules": [
                    {"id": str(r.rule.id), "server": r.rule.server, "path": str(r.path)} for r in h.removed
                ],
                "held_out_suite": _dump_score(h.evaluation.suites.get(h.suite, SuiteScore())),
                "overall": _dump_score(h.evaluation.overall),
                "misses": len(h.evaluation.misses),
                **_summarize_held_out(h),
            }
            for h in held_out
        ]
    return document


def _dump_score(s: SuiteScore) -> dict[str, Any]:
    return {
        "benign": {
            "sessions": s.benign_sessions,
            "prompted": s.benign_prompted,
            "prompted_share": _share(s.benign_prompted, s.benign_sessions),
            "calls": s.benign_calls,
            "calls_prompted": s.benign_calls_prompted,
            "calls_prompted_share": _share(s.benign_calls_prompted, s.benign_calls),
            "baseline_prompted": {
                c.value: {
                    "sessions": s.baseline_prompted[c.value],
                    "share": _share(s.baseline_prompted[c.value], s.benign_sessions),
                }
                for c in Client
            },
            "alerted_high_or_critical": _count(s.benign_alerted_high, s.benign_sessions),
            "alerted_critical": _count(s.benign_alerted_critical, s.benign_sessions),
            "steered_action": {
                "prompted": s.benign_prompted_steered,
                "prompted_share": _share(s.benign_prompted_steered, s.benign_sessions),
                "prompted_only": s.benign_prompted_only_steered,
                "prompted_only_share": _share(s.benign_prompted_only_steered, s.benign_sessions),
            },
        },
        "goal_as_user_prompt": {"sessions": s.goal_prompt_sessions, "prompted": s.goal_prompt_prompted},
        "attempts": {
            goal: {
                "attempts": n,
                "caught": s.caught[goal],
                "caught_share": _share(s.caught[goal], n),
                "critical_alerted": s.critical_alerted[goal],
                "critical_alerted_share": _share(s.critical_alerted[goal], n),
                "hijack_caught": s.hijack_caught[goal],
                "hijack_caught_share": _share(s.hijack_caught[goal], n),
            }
            for goal, n in sorted(s.attempts.items())
        },
    }


def _count(part: int, whole: int) -> dict[str, Any]:
    return {"sessions": part, "share": _share(part, whole)}


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _summarize_held_out(held: HeldOutSuite) -> dict[str, Any]:
    """The held-out suite's headline figures (the compact leave-one-suite-out table's row)."""
    s = held.evaluation.suites.get(held.suite, SuiteScore())
    exfiltration = s.attempts[EXFILTRATION]
    return {
        "covered_by_pack": held.covered,
        **({} if held.covered else {"note": NO_PACK_NOTE}),
        "benign_asked": _part(s.benign_prompted, s.benign_sessions),
        "benign_alerted_high_or_critical": _part(s.benign_alerted_high, s.benign_sessions),
        "exfiltration_caught": _part(s.caught[EXFILTRATION], exfiltration),
        "goal_classes": {
            goal: {
                "attempts": n,
                "caught": s.caught[goal],
                "caught_share": _share(s.caught[goal], n),
                "hijack_caught": s.hijack_caught[goal],
                "hijack_caught_share": _share(s.hijack_caught[goal], n),
            }
            for goal, n in sorted(s.attempts.items())
        },
    }


def _part(part: int, whole: int) -> dict[str, Any]:
    return {"count": part, "of": whole, "share": _share(part, whole)}
