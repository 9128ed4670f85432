"""The design lives in the repository: docs/design.md, and every reference to it names a section it has.

No file under ``monitor/``, ``tests/``, ``docs/``, ``bench/`` or ``rules/`` cites a design document kept elsewhere.
A reference written ``docs/design.md, "Section"`` (or ``docs/design.md, "A" and "B"``) names headings of
docs/design.md, and a link ``design.md#anchor`` names one of its anchors.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.test_docs import read_anchors, slug_heading, strip_code

ROOT = Path(__file__).resolve().parents[1]
DESIGN = ROOT / "docs" / "design.md"
SCANNED = ("monitor", "tests", "docs", "bench", "rules")
SUFFIXES = {".py", ".md", ".yaml", ".yml", ".txt", ".toml", ".json", ".jsonl", ".cfg", ".ini"}
OUTSIDE = ("DESIGN" + " §", "DESIGN" + ".md")  # split so that this file does not cite them itself

_QUOTED_REF = re.compile(r'docs/design\.md,\s*((?:"[^"]+"(?:\s*(?:,|and|;)\s*)?)+)')
_NAME = re.compile(r'"([^"]+)"')
_ANCHOR_LINK = re.compile(r"design\.md#([\w-]+)")
_LINE_BREAK = re.compile(r"\s*\n\s*(?:#\s*)?")


def scanned_files(root: Path = ROOT) -> list[Path]:
    """The README and the text files of the scanned folders, this test itself left out."""
    this = Path(__file__).resolve()
    return [p for p in [root / "README.md"] if p.is_file()] + [
        path
        for folder in SCANNED
        for path in sorted((root / folder).rglob("*"))
        if path.is_file() and path.suffix in SUFFIXES and "__pycache__" not in path.parts and path.resolve() != this
    ]


def design_headings(design: Path = DESIGN) -> set[str]:
    """The text of every heading of docs/design.md."""
    text = strip_code(design.read_text(encoding="utf-8"))
    return {m[1].strip() for m in re.finditer(r"^#{1,6} (.+)$", text, re.M)}


def find_outside_citations(root: Path = ROOT) -> list[str]:
    """``file:line`` of every mention of the design document kept outside the repository."""
    found = []
    for path in scanned_files(root):
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if any(word in line for word in OUTSIDE):
                found.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
    return found


def find_bad_references(root: Path = ROOT, design: Path = DESIGN) -> list[str]:
    """References to docs/design.md whose section or anchor it does not have."""
    headings = design_headings(design)
    anchors = read_anchors(design)
    assert {slug_heading(h) for h in headings} <= anchors
    bad = []
    for path in scanned_files(root):
        text = _LINE_BREAK.sub(" ", path.read_text(encoding="utf-8", errors="replace"))
        for match in _QUOTED_REF.finditer(text):
            bad += [f"{path.relative_to(root)}: {name!r}" for name in _NAME.findall(match[1]) if name not in headings]
        bad += [f"{path.relative_to(root)}: #{a}" for a in _ANCHOR_LINK.findall(text) if a not in anchors]
    return bad


def test_no_file_cites_a_design_document_kept_elsewhere() -> None:
    found = find_outside_citations()
    assert found == [], "cite docs/design.md instead:\n" + "\n".join(found)


def test_every_reference_to_docs_design_names_a_section_it_has() -> None:
    bad = find_bad_references()
    assert bad == [], "no such section of docs/design.md:\n" + "\n".join(bad)


def test_references_are_found_in_code_comments_and_docs(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "design.md").write_text("# Design\n\n## Classification\n\n## Rule files\n")
    (tmp_path / "monitor").mkdir()
    (tmp_path / "monitor" / "a.py").write_text(
        '"""Layers (docs/design.md, "Classification" and "Rule files")."""\n'
        '# wrapped (docs/design.md, "Rule\n# files"), then a bad one (docs/design.md, "Classifying")\n'
    )
    (tmp_path / "docs" / "page.md").write_text("[x](design.md#classification) [y](design.md#rules)\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "b.py").write_text("# see " + OUTSIDE[0] + "3\n")
    assert sorted(find_bad_references(tmp_path, tmp_path / "docs" / "design.md")) == [
        "docs/page.md: #rules",
        "monitor/a.py: 'Classifying'",
    ]
    assert find_outside_citations(tmp_path) == ["tests/b.py:1: # see " + OUTSIDE[0] + "3"]
