"""The README is a front page and the documentation is one connected set of pages.

The README stays short (at most 300 lines), links every page of ``docs/``, and every relative link of the README and
of the pages reaches a file that exists and, with an anchor, a heading of that file. The README's Python example
runs as written.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))

_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)


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
