"""Classification of tool calls into the three legs (DESIGN §3)."""

from monitor.classify._engine import CallClassification, Classifier, classify_result_hints
from monitor.classify._heuristics import HEURISTICS, Heuristic, match_heuristics, tokenize_name
from monitor.classify._layers import OverrideMatch, OverrideSource, PinMismatch, SessionFacts, ToolContext

__all__ = [
    "CallClassification",
    "Classifier",
    "HEURISTICS",
    "Heuristic",
    "OverrideMatch",
    "OverrideSource",
    "PinMismatch",
    "SessionFacts",
    "ToolContext",
    "classify_result_hints",
    "match_heuristics",
    "tokenize_name",
]
