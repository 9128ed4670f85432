"""The linter: reads tool lists with the ingest tool-list reader and runs the validators over each tool."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from monitor.ingest import ToolList, ToolListProblem, read_tool_lists
from monitor.lint._catalogue import LintSeverity
from monitor.lint._findings import LintFinding, LintReport, ListingLint, fingerprint
from monitor.lint._labels import add_label_findings
from monitor.lint._poisoning import scanned_texts
from monitor.lint._protocol import VALIDATORS, ListingNoteValidator
from monitor.lint._validators import (
    LintedTool,
    MemberValidator,
    TextValidator,
    ToolValidator,
    Validator,
    annotation_members,
)

_UNREADABLE_HINT = "Give a tools/list result, a tools array, a tool, an MCP JSON-RPC log or a folder of them."


class Linter:
    """Runs a set of validators over every tool of a tool list.

    ``validators`` are validator classes, in report order (default: :data:`VALIDATORS`); each tool list
    gets fresh instances.
    """

    def __init__(self, validators: Iterable[type[Validator]] = VALIDATORS) -> None:
        self.validators = tuple(validators)

    def lint_paths(self, paths: Iterable[str | Path]) -> LintReport:
        """Lint every tool list in ``paths`` (files or folders, read recursively). Never raises on bad input:
        what cannot be read is an ``input-unreadable`` finding."""
        lists, problems = read_tool_lists(paths)
        listings = add_label_findings([self.lint_listing(tool_list) for tool_list in lists], lists)
        return LintReport(
            listings=tuple(listings),
            input_errors=tuple(unreadable_input(problem) for problem in problems),
        )

    def lint_listing(self, listing: ToolList) -> ListingLint:
        """Return the findings of one tool list, tool by tool."""
        validators = [make() for make in self.validators]
        # Rules of the whole list (its protocol version) first, also for a list without tools.
        findings = [f for v in validators if isinstance(v, ListingNoteValidator) for f in v.check_listing(listing)]
        findings.extend(
            finding
            for raw, pointer in zip(listing.tools, listing.tool_pointers, strict=True)
            for finding in run_validators(validators, LintedTool.of(listing, raw, pointer))
        )
        return ListingLint(
            file=listing.file,
            line=listing.line,
            server=listing.server,
            protocol_version=listing.protocol_version,
            tools=len(listing.tools),
            findings=tuple(findings),
        )


def run_validators(validators: Sequence[Validator], tool: LintedTool) -> Iterator[LintFinding]:
    """Yield the findings of ``validators`` on ``tool``, in their order; consecutive member (text) validators
    are run member by member (text by text)."""
    runnable = [v for v in validators if tool.name is not None or v.checks_nameless]
    for stage in _stages(runnable):
        if isinstance(stage, _OnMembers):
            for member in annotation_members(tool):
                for member_validator in stage.validators:
                    yield from member_validator.check(tool, member)
        elif isinstance(stage, _OnTexts):
            for text in scanned_texts(tool.raw, tool.pointer):
                for text_validator in stage.validators:
                    yield from text_validator.check(tool, text)
        else:
            yield from stage.check(tool)


@dataclass
class _OnMembers:
    validators: list[MemberValidator]


@dataclass
class _OnTexts:
    validators: list[TextValidator]


def _stages(validators: Sequence[Validator]) -> list[ToolValidator | _OnMembers | _OnTexts]:
    """Group consecutive member validators, and consecutive text validators, into one stage each."""
    stages: list[ToolValidator | _OnMembers | _OnTexts] = []
    for validator in validators:
        last = stages[-1] if stages else None
        if isinstance(validator, MemberValidator):
            if isinstance(last, _OnMembers):
                last.validators.append(validator)
            else:
                stages.append(_OnMembers([validator]))
        elif isinstance(validator, TextValidator):
            if isinstance(last, _OnTexts):
                last.validators.append(validator)
            else:
                stages.append(_OnTexts([validator]))
        else:
            assert isinstance(validator, ToolValidator)
            stages.append(validator)
    return stages


def unreadable_input(problem: ToolListProblem) -> LintFinding:
    """Return the ``input-unreadable`` finding of a file (or log line) that holds no readable tool list."""
    return LintFinding(
        id="input-unreadable",
        severity=LintSeverity.ERROR,
        file=problem.file,
        line=problem.line,
        pointer="",
        message=problem.message,
        hint=_UNREADABLE_HINT,
        fingerprint=fingerprint("input-unreadable", problem.file, str(problem.line or "")),
    )


def lint_paths(paths: Iterable[str | Path]) -> LintReport:
    """Lint every tool list in ``paths`` with every validator (see :meth:`Linter.lint_paths`)."""
    return Linter().lint_paths(paths)


def lint_listing(listing: ToolList) -> ListingLint:
    """Lint one tool list with every validator: each tool, then duplicate names within the list."""
    return Linter().lint_listing(listing)


def lint_tool(raw: Any, pointer: str, listing: ToolList) -> list[LintFinding]:
    """Return the findings of one raw tool entry found at ``pointer`` of ``listing``, on its own."""
    return list(run_validators([make() for make in VALIDATORS], LintedTool.of(listing, raw, pointer)))
