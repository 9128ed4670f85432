"""The decision policy: from a call's facts to ``allow``, ``confirm``, ``review`` or ``deny``, with reasons.

The session engine gathers the facts (:class:`CallFacts`: what the context holds before the call, what the call
is, where it sends, what it carries, what the user's words ask for, and what ``reviewed-only`` reads, each a group
of its own); the policy only reads them, so the same facts always give the same decision. What it decides, row
by row (the gates, the verdicts of the table, the overlays that never weaken it, and the level each gives), is
docs/decisions.md; why, docs/design.md ("Who may read it"); the ``reviewed-only`` application policy,
docs/policy.md.
"""

from monitor.decide._decide import decide, decide_on_monitor_error, decide_trifecta
from monitor.decide._facts import (
    CallFacts,
    CargoFacts,
    ContextFacts,
    IntentFacts,
    RequestFacts,
    ReviewFacts,
    RouteFacts,
)
from monitor.decide._policy import Policy, PolicyMode, Scope, load_scope
from monitor.decide._table import FINDINGS, VERDICTS, CallView, Finding, Verdict, find_verdict, view_call

__all__ = [
    "CallFacts",
    "CallView",
    "CargoFacts",
    "ContextFacts",
    "FINDINGS",
    "Finding",
    "IntentFacts",
    "Policy",
    "PolicyMode",
    "RequestFacts",
    "ReviewFacts",
    "RouteFacts",
    "Scope",
    "VERDICTS",
    "Verdict",
    "decide",
    "decide_on_monitor_error",
    "decide_trifecta",
    "find_verdict",
    "load_scope",
    "view_call",
]
