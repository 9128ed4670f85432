"""Tool entries and tool-list files for the lint tests, and running lint over them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from monitor.lint import LintFinding, LintReport, lint_paths

PROJECT = Path(__file__).resolve().parents[2]
MCPDESC = PROJECT.parent / "shared" / "data" / "mcpdesc"

CLEAN_READ = {"readOnlyHint": True, "openWorldHint": False}
CLEAN_WRITE = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}


def tool(name: str = "read_notes", description: str = "Reads the notes.", **fields: Any) -> dict[str, Any]:
    """A tool entry; ``annotations`` defaults to a clean read-only, closed-world set."""
    raw: dict[str, Any] = {"name": name, "description": description, "inputSchema": {"type": "object"}}
    raw["annotations"] = fields.pop("annotations", dict(CLEAN_READ))
    raw.update(fields)
    if raw["annotations"] is None:
        del raw["annotations"]
    return raw


def write_json(path: Path, doc: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def lint_doc(tmp_path: Path, doc: Any, name: str = "tools.json") -> LintReport:
    return lint_paths([write_json(tmp_path / name, doc)])


def lint_tools(tmp_path: Path, *tools: dict[str, Any], version: str | None = "2025-06-18") -> list[LintFinding]:
    doc: dict[str, Any] = {"server": "demo", "tools": list(tools)}
    if version is not None:
        doc["protocolVersion"] = version
    report = lint_doc(tmp_path, doc)
    assert not report.input_errors
    return list(report.findings)


def ids(findings: list[LintFinding]) -> list[str]:
    return [f.id for f in findings]
