"""The text behind each piece of evidence, for the HTML report: excerpts of a call's arguments and of the result
of the call the evidence names, with the matching text marked.

A :class:`CallTextRecorder` wraps a record stream, keeps the arguments and results of the sessions still open
(each cut to :data:`MAX_TEXT_CHARS`), and when a session is reported keeps only short excerpts around what the
evidence of its decided calls names; memory follows the sessions still open.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from monitor.models import Action, Evidence, EvidenceKind, Record, SessionReport, ToolCall, ToolResult

MAX_TEXT_CHARS = 200_000
"""Arguments and results longer than this are cut before they are searched."""
EXCERPT_CONTEXT = 100
"""Characters kept on each side of a match in an excerpt."""
MAX_MATCH_CHARS = 400
_MAX_DECODE_DEPTH = 3
"""A matched text longer than this is shown cut."""


@dataclass(frozen=True, slots=True)
class Excerpt:
    """A piece of text around a match: ``before``, the ``match`` itself, ``after`` (cut marks included)."""

    before: str
    match: str
    after: str


@dataclass(frozen=True, slots=True)
class EvidenceTexts:
    """What one evidence item names, and where it was found: in the arguments, in the source's result."""

    needle: str
    arguments: Excerpt | None
    source: Excerpt | None


SessionTexts = dict[tuple[str, int], EvidenceTexts]
"""Per (call id, evidence position): the texts of the evidence of a session's decided calls."""


def extract_needle(evidence: Evidence) -> str:
    """Return the text an evidence item says was found (its ``detail`` without the kind-specific suffix)."""
    if evidence.kind in (EvidenceKind.DESTINATION, EvidenceKind.FRAGMENT, EvidenceKind.STEERING):
        return evidence.split_detail().text
    return ""


def cut_excerpt(text: str, needle: str) -> Excerpt | None:
    """Return the excerpt of ``text`` around the first ``needle`` (exact, then ignoring case and spacing)."""
    if not needle:
        return None
    at = text.find(needle)
    end = at + len(needle)
    if at < 0:  # the engine compares text with spacing and case normalised: so does the search
        words = needle.split()
        found = re.search(r"\s+".join(re.escape(w) for w in words), text, re.IGNORECASE) if words else None
        if found is None:
            return None
        at, end = found.span()
    start, stop = max(0, at - EXCERPT_CONTEXT), min(len(text), end + EXCERPT_CONTEXT)
    match = text[at:end]
    if len(match) > MAX_MATCH_CHARS:
        match = match[:MAX_MATCH_CHARS] + "…"
    return Excerpt(
        before=("…" if start else "") + text[start:at],
        match=match,
        after=text[end:stop] + ("…" if stop < len(text) else ""),
    )


def _decode(text: str) -> Any:
    """A string that holds a JSON object or array (a common tool result), decoded; else the string."""
    if text[:1] in ("{", "[") and len(text) <= MAX_TEXT_CHARS:
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            return text
    return text


def _flatten(value: Any, prefix: str, out: list[str], budget: list[int], depth: int = 0) -> None:
    if budget[0] <= 0:
        return
    if isinstance(value, str) and depth < _MAX_DECODE_DEPTH:
        decoded = _decode(value.strip())
        if not isinstance(decoded, str):
            _flatten(decoded, prefix, out, budget, depth + 1)
            return
    if isinstance(value, dict):
        for key, item in value.items():
            _flatten(item, f"{prefix}.{key}" if prefix else str(key), out, budget, depth)
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            _flatten(item, f"{prefix}[{i}]", out, budget, depth)
    else:
        text = value if isinstance(value, str) else orjson.dumps(value, default=str).decode()
        line = f"{prefix}: {text}" if prefix else text
        out.append(line)
        budget[0] -= len(line) + 1


def flatten_text(value: Any) -> str:
    """Return a value as readable text (one ``path: value`` line per leaf, strings unquoted), cut to the bound."""
    if value is None:
        return ""
    lines: list[str] = []
    try:
        _flatten(value, "", lines, [MAX_TEXT_CHARS])
    except (TypeError, ValueError, RecursionError):
        return str(value)[:MAX_TEXT_CHARS]
    return "\n".join(lines)[:MAX_TEXT_CHARS]


class CallTextRecorder:
    """Keeps the arguments and results of open sessions; :meth:`take` turns a reported session's into excerpts."""

    def __init__(self, records: Iterable[Record]) -> None:
        self._records = records
        self._arguments: dict[str, dict[str, str]] = {}
        self._results: dict[str, dict[str, str]] = {}

    @property
    def current(self) -> str | None:
        """The input being read, when the wrapped stream names it."""
        current = getattr(self._records, "current", None)
        return current if isinstance(current, str) else None

    def __iter__(self) -> Iterator[Record]:
        """Yield the records unchanged, keeping the texts of calls and results."""
        for record in self._records:
            if isinstance(record, ToolCall) and record.call_id:
                self._arguments.setdefault(record.session_id, {})[record.call_id] = flatten_text(record.arguments)
            elif isinstance(record, ToolResult):
                self._results.setdefault(record.session_id, {})[record.call_id] = flatten_text(record.result)
            yield record

    def take(self, report: SessionReport) -> SessionTexts:
        """Forget the session's texts; return the excerpts the evidence of its confirmed or denied calls names."""
        arguments = self._arguments.pop(report.session_id, {})
        results = self._results.pop(report.session_id, {})
        texts: SessionTexts = {}
        for call in report.calls:
            if call.decision.action is Action.ALLOW:
                continue
            for position, item in enumerate(call.decision.evidence):
                needle = extract_needle(item)
                if not needle:
                    continue
                source = results.get(item.from_call) if item.from_call else None
                texts[(call.call_id, position)] = EvidenceTexts(
                    needle=needle,
                    arguments=cut_excerpt(arguments.get(call.call_id, ""), needle),
                    source=cut_excerpt(source, needle) if source else None,
                )
        return texts
