"""``trifecta lint`` over the real tool lists in ../shared/data/mcp-servers: the table in docs/lint-corpus.md is
what lint gives today, and a few findings on real tools are exactly what they should be."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from monitor.lint import LintReport, LintSeverity, lint_paths
from monitor.report import lint_markdown_table

pytestmark = pytest.mark.shared_data

PROJECT = Path(__file__).resolve().parents[2]
MCP_SERVERS = PROJECT.parent / "shared" / "data" / "mcp-servers"
DOC = PROJECT / "docs" / "lint-corpus.md"
_TABLE = re.compile(r"<!-- lint-corpus-table:start -->\n(.*?)<!-- lint-corpus-table:end -->", re.DOTALL)


@pytest.fixture(scope="module")
def corpus() -> LintReport:
    files = sorted(MCP_SERVERS.glob("*.json")) if MCP_SERVERS.is_dir() else []
    assert files, (
        f"shared data missing: expected the tool lists in {MCP_SERVERS.resolve()} "
        "(../shared/data/mcp-servers relative to the project root; see ../shared/data/README.md)"
    )
    report = lint_paths([MCP_SERVERS])
    assert len(report.listings) == len(files)
    return report


def _listing(report: LintReport, server: str) -> tuple[list[dict[str, object]], list[tuple[str, str, str]]]:
    """The raw tools of a server file and its findings as (tool, id, pointer)."""
    listing = next(x for x in report.listings if x.server == server)
    tools = json.loads(Path(listing.file).read_text(encoding="utf-8"))["tools"]
    return tools, [(f.tool or "", f.id, f.pointer) for f in listing.findings]


def test_doc_table_is_what_lint_gives(corpus: LintReport) -> None:
    match = _TABLE.search(DOC.read_text(encoding="utf-8"))
    assert match, f"{DOC} has no lint-corpus-table markers"
    assert match.group(1) == lint_markdown_table(corpus), (
        "docs/lint-corpus.md is out of date; regenerate the table (see the snippet in the doc)"
    )


def test_every_file_is_read(corpus: LintReport) -> None:
    assert corpus.input_errors == ()
    assert sum(x.tools for x in corpus.listings) == 406
    assert not corpus.has_errors and corpus.exit_code == 0


def test_fetch_is_read_only_and_open_world(corpus: LintReport) -> None:
    tools, findings = _listing(corpus, "fetch")
    assert [t["name"] for t in tools] == ["fetch"]
    assert tools[0]["annotations"] == {
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": True,
        "readOnlyHint": True,
    }
    # It gets exactly the two "meaningless on a read-only tool" warnings ...
    assert findings == [
        ("fetch", "hint-ignored-when-read-only", "/tools/0/annotations/destructiveHint"),
        ("fetch", "hint-ignored-when-read-only", "/tools/0/annotations/idempotentHint"),
    ]
    # ... and none of the others: every hint is there, 'fetch' in the name agrees with openWorldHint true, a
    # read-only tool is not asked for destructive/idempotent hints, and its description (which addresses the
    # model) holds none of the poisoning patterns.
    assert {f[1] for f in findings}.isdisjoint(
        {"hint-missing", "network-name-closed-world", "read-name-not-read-only", "instruction-in-description"}
    )


@pytest.mark.parametrize("server", ["currents", "elasticsearch", "github-archived", "slack-archived"])
def test_a_server_without_annotations_gets_four_missing_hints_per_tool(corpus: LintReport, server: str) -> None:
    tools, findings = _listing(corpus, server)
    assert all("annotations" not in t for t in tools)
    expected = [
        (str(t["name"]), "hint-missing", f"/tools/{i}/annotations/{hint}")
        for i, t in enumerate(tools)
        for hint in ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
    ]
    assert findings == expected


def test_archived_servers_speak_an_old_protocol_but_send_no_annotations(corpus: LintReport) -> None:
    archived = [x for x in corpus.listings if x.server and x.server.endswith("-archived")]
    assert len(archived) == 7 and {x.protocol_version for x in archived} == {"2024-11-05"}
    assert all(f.id == "hint-missing" for x in archived for f in x.findings)
    assert all("2025-03-26" in f.hint for x in archived for f in x.findings)


def test_filesystem_is_clean(corpus: LintReport) -> None:
    _, findings = _listing(corpus, "filesystem")
    assert findings == []


def test_word_contradictions_on_real_tools(corpus: LintReport) -> None:
    found = sorted(
        (f.server or "", f.tool or "", f.id, f.pointer.rsplit("/", 1)[1])
        for f in corpus.findings
        if f.id in ("destructive-name-not-destructive", "read-name-not-read-only", "network-name-closed-world")
    )
    assert found == [
        ("github", "update_issue_type", "destructive-name-not-destructive", "description"),
        ("playwright", "browser_hide_highlight", "destructive-name-not-destructive", "description"),
        ("supabase", "get_project_url", "network-name-closed-world", "name"),
    ]


def test_no_errors_and_no_poisoning_in_the_corpus(corpus: LintReport) -> None:
    assert corpus.count(LintSeverity.ERROR) == 0
    assert not [f for f in corpus.findings if f.id in ("instruction-in-description", "hidden-unicode")]
