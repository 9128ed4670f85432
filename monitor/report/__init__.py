"""Output formats: what ``trifecta analyze``, ``lint``, ``clients`` and ``eval`` (AgentDojo runs, scenarios) print.

Writers of ``analyze`` (:class:`TableWriter`, :class:`JsonDocumentWriter`, :class:`JsonLinesWriter`) implement
:class:`monitor.types.ReportWriter` and stream sessions as they finish. Lint reports go out as a table, JSON or
SARIF 2.1.0; client tables (computed in :mod:`monitor.clients`) as a table or JSON. Nothing here decides
anything: it renders values computed on lower floors.
"""

from monitor.models import REASON_WORDING, ReasonWording
from monitor.report._clients import clients_to_json, render_clients
from monitor.report._document import JsonDocumentWriter, JsonLinesWriter, hash_ruleset, session_to_json, summary_to_json
from monitor.report._evaluation import print_evaluation
from monitor.report._explain import find_call, render_explanation, word_reason
from monitor.report._fit import fit_table, make_console, resolve_width
from monitor.report._html import HtmlLimits, HtmlReportWriter, render_html_report
from monitor.report._html_texts import CallTextRecorder
from monitor.report._lint import lint_markdown_table, lint_to_json, lint_to_sarif, print_lint_table
from monitor.report._sarif import SarifWriter
from monitor.report._scenarios import print_scenarios, scenarios_to_json
from monitor.report._table import TableWriter, format_leg_letters
from monitor.report._table_style import ACTION_STYLE, LEVEL_STYLE, style_level

__all__ = [
    "ACTION_STYLE",
    "CallTextRecorder",
    "HtmlLimits",
    "HtmlReportWriter",
    "JsonDocumentWriter",
    "JsonLinesWriter",
    "LEVEL_STYLE",
    "REASON_WORDING",
    "ReasonWording",
    "SarifWriter",
    "TableWriter",
    "clients_to_json",
    "find_call",
    "fit_table",
    "format_leg_letters",
    "hash_ruleset",
    "lint_markdown_table",
    "lint_to_json",
    "lint_to_sarif",
    "make_console",
    "print_evaluation",
    "print_lint_table",
    "print_scenarios",
    "render_clients",
    "render_explanation",
    "render_html_report",
    "resolve_width",
    "scenarios_to_json",
    "session_to_json",
    "style_level",
    "summary_to_json",
    "word_reason",
]
