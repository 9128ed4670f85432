"""The README is a front page and the documentation is one connected set of pages.

The README stays short (at most 300 lines), links every page of ``docs/``, and every relative link of the README and
of the pages reaches a file that exists and, with an anchor, a heading of that file. The README's Python example
runs as written. The Python blocks of the README and the pages import only the stable modules that
docs/architecture.md lists, and each of those imports and has a sorted ``__all__``.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
ARCHITECTURE = DOCS / "architecture.md"

_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_PYTHON_FENCE = re.compile(r"^\s*```\s*(?:python|py|pycon)\s*$")
_STABLE_ITEM = re.compile(r"^- ((?:`[\w.]+`(?:, )?)+):")
_IMPORT_LINE = re.compile(r"^\s*(?:(?:>>>|\.\.\.)\s+)?(?:from\s+([\w.]+)\s+import\s+(.*)|import\s+(.+))$")


def strip_code(text: str) -> str:
    """Return ``text`` without its fenced code blocks, where brackets are code, not links."""
    return _FENCE.sub("", text)


def slug_heading(heading: str) -> str:
    """Return the anchor GitHub gives a Markdown heading: lower case, punctuation dropped, spaces as hyphens."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def read_anchors(page: Path) -> set[str]:
    """Return the anchors of every heading of ``page`` (a repeated heading gets ``-1``, ``-2``, …)."""
    anchors: set[str] = set()
    seen: dict[str, int] = {}
    for line in strip_code(page.read_text(encoding="utf-8")).splitlines():
        match = re.match(r"^#{1,6} (.+)$", line)
        if match:
            slug = slug_heading(match[1])
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def read_links(page: Path) -> list[str]:
    """Return the relative link targets of ``page``, outside code blocks."""
    text = strip_code(page.read_text(encoding="utf-8"))
    targets = [a or b for a, b in _LINK.findall(text)]
    return [t for t in targets if not re.match(r"^[a-z][a-z0-9+.-]*:", t)]


def test_the_readme_is_a_front_page() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines; reference material belongs in docs/"


def test_the_readme_links_every_page_of_the_docs() -> None:
    linked = {(README.parent / target.split("#")[0]).resolve() for target in read_links(README)}
    unlinked = [page.name for page in PAGES if page.resolve() not in linked]
    assert unlinked == [], f"docs pages the README does not link: {unlinked}"


@pytest.mark.parametrize("page", [README, *PAGES], ids=lambda p: p.name)
def test_every_relative_link_reaches_its_file_and_heading(page: Path) -> None:
    broken = []
    for target in read_links(page):
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no file {file}")
        elif anchor and file.suffix == ".md" and anchor not in read_anchors(file):
            broken.append(f"{target}: no heading with anchor #{anchor} in {file.name}")
    assert broken == [], f"{page.name} has broken links:\n  " + "\n  ".join(broken)


def test_the_link_checker_sees_a_broken_link(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A page\n\n## Two words\n", encoding="utf-8")
    page = tmp_path / "b.md"
    page.write_text("[ok](a.md#two-words) [gone](c.md) [bad](a.md#three)\n```\n[code](x.md)\n```\n", encoding="utf-8")
    assert read_links(page) == ["a.md#two-words", "c.md", "a.md#three"]
    assert read_anchors(tmp_path / "a.md") == {"a-page", "two-words"}
    assert slug_heading("Many cores: `--jobs` and `--dask`") == "many-cores---jobs-and---dask"


def test_the_readme_python_example_allows_the_send_the_user_asked_for() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 1, "the README shows one Python example"
    asked: list[str] = []
    tools = [
        {"name": "read_inbox", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}},
        {"name": "send_email", "inputSchema": {"type": "object"}, "annotations": {"openWorldHint": True}},
    ]
    namespace: dict[str, Any] = {
        "tools_list_result": {"tools": tools},
        "ask_user": asked.append,
        "call_tool_result": {"content": [{"type": "text", "text": "sent"}]},
    }
    exec(compile(blocks[0], "README.md", "exec"), namespace)
    assert namespace["decision"].action == "allow", namespace["decision"]
    assert asked == [], "the user typed the recipient: nothing should be asked"


def read_stable_modules(page: Path = ARCHITECTURE) -> list[str]:
    """Return the modules listed under the "Stable modules" heading of ``page``: the backticked names that open
    each item of its list (``- `monitor.a`, `monitor.b`: what they hold``)."""
    match = re.search(r"^## Stable modules\n(.*?)(?=^## |\Z)", page.read_text(encoding="utf-8"), re.S | re.M)
    assert match, f"{page.name} has no section 'Stable modules'"
    modules = []
    for line in match[1].splitlines():
        item = _STABLE_ITEM.match(line)
        if item:
            modules += re.findall(r"`([\w.]+)`", item[1])
    return modules


def read_python_imports(page: Path) -> list[tuple[int, str]]:
    """Return ``(line, module)`` for each ``monitor`` module an import line of a Python block of ``page`` names;
    ``from monitor.x import _y`` names the private module ``monitor.x._y``."""
    found: list[tuple[int, str]] = []
    in_python = in_block = False
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip().startswith("```"):
            in_python, in_block = (False, False) if in_block else (bool(_PYTHON_FENCE.match(line)), True)
            continue
        match = _IMPORT_LINE.match(line) if in_python else None
        if not match:
            continue
        if match[1]:
            names = [n.strip(" ()").split(" as ")[0].strip() for n in match[2].split(",")]
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            modules = [f"{match[1]}.{n}" for n in private] or [match[1]]
        else:
            modules = [n.strip().split(" as ")[0].strip() for n in match[3].split(",")]
        found += [(number, m) for m in modules if m.split(".")[0] == "monitor"]
    return found


def test_the_stable_modules_import_and_each_has_a_sorted_all() -> None:
    stable = read_stable_modules()
    assert {"monitor", "monitor.errors", "monitor.models", "monitor.otel", "monitor.testing", "monitor.types"} <= set(
        stable
    )
    for name in stable:
        exported = list(importlib.import_module(name).__all__)
        assert exported == sorted(exported), f"{name}.__all__ is not sorted"


@pytest.mark.parametrize("page", [README, *PAGES], ids=lambda p: p.name)
def test_python_blocks_import_only_stable_modules(page: Path) -> None:
    stable = set(read_stable_modules())
    wrong = [f"{page.name}:{line}: {module}" for line, module in read_python_imports(page) if module not in stable]
    assert wrong == [], (
        "a Python block imports a module outside 'Stable modules' (docs/architecture.md): import from a stable "
        "module, or list the module there if users need it:\n  " + "\n  ".join(wrong)
    )


EXAMPLES = sorted((ROOT / "docs" / "examples").glob("*.py"))


def read_script_imports(script: Path) -> list[tuple[int, str]]:
    """Return ``(line, module)`` for each ``monitor`` module a script imports (``from monitor.x import _y`` names
    ``monitor.x._y``)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(script.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            private = [f"{node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
            found += [(node.lineno, m) for m in private or [node.module]]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
    return [(line, m) for line, m in found if m.split(".")[0] == "monitor"]


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.name)
def test_example_scripts_import_only_stable_modules(script: Path) -> None:
    stable = set(read_stable_modules())
    wrong = [f"{script.name}:{line}: {module}" for line, module in read_script_imports(script) if module not in stable]
    assert wrong == [], "an example imports a module outside 'Stable modules':\n  " + "\n  ".join(wrong)


def test_the_script_import_reader_names_private_modules(tmp_path: Path) -> None:
    script = tmp_path / "a.py"
    script.write_text("import json\nfrom monitor import SessionMonitor\nfrom monitor.otel import _child, x\n")
    assert read_script_imports(script) == [(2, "monitor"), (3, "monitor.otel._child")]


def test_the_import_reader_sees_python_blocks_only(tmp_path: Path) -> None:
    page = tmp_path / "a.md"
    page.write_text(
        "from monitor.session import X\n```python\nfrom monitor import SessionMonitor\n"
        "import json, monitor.models as m\n"
        "from monitor.otel import _child, read_legs\n    from monitor.decide import (\n```\n```console\n"
        "from monitor.cli import main\n```\n```py\n>>> import monitor.session._state\n```\n"
        "## Stable modules\n\n- `monitor`, `monitor.models`: x\n- `monitor.otel`: y\n\nNot `monitor.cli`.\n",
        encoding="utf-8",
    )
    assert read_python_imports(page) == [
        (3, "monitor"),
        (4, "monitor.models"),
        (5, "monitor.otel._child"),
        (6, "monitor.decide"),
        (12, "monitor.session._state"),
    ]
    assert read_stable_modules(page) == ["monitor", "monitor.models", "monitor.otel"]
