"""Classification of tool calls into the three legs (DESIGN §3)."""

from monitor.classify.engine import CallClassification, Classifier, classify_result_hints
from monitor.classify.heuristics import HEURISTICS, Heuristic, match_heuristics, tokenize_name
from monitor.classify.layers import OverrideMatch, OverrideSource, PinMismatch, SessionFacts, ToolContext

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
