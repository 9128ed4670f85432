"""The HTML report in a real headless Chromium (Debian's ``chromium``, driven by Playwright), opened from file://.

These tests fail, never skip, when the browser is missing: install it with ``apt-get install chromium`` and
``pip install -e '.[test]'`` (Playwright; it drives the system browser and downloads none). Set
``TRIFECTA_CHROMIUM`` to use another Chromium binary. ``UPDATE_SCREENSHOTS=1`` rewrites the README's
screenshot (docs/images/report-github.png).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

PROJECT = Path(__file__).resolve().parents[2]
SAMPLES = PROJECT / "samples" / "sessions"
ARCHIVE = PROJECT / ".." / "shared" / "data" / "agentdojo" / "dev-runs.tar.gz"
SCREENSHOT = PROJECT / "docs" / "images" / "report-github.png"
INSTALL = (
    "the browser tests need Debian's chromium and the Python playwright package: "
    "`apt-get install chromium` and `pip install -e '.[test]'` (or set TRIFECTA_CHROMIUM to a Chromium binary)"
)


def _chromium() -> str:
    path = os.environ.get("TRIFECTA_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not path or not Path(path).exists():
        pytest.fail(f"no chromium found: {INSTALL}", pytrace=False)
    return path


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless Chromium (the system one: Playwright downloads nothing)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail(f"playwright is not installed: {INSTALL}", pytrace=False)
    executable = _chromium()
    args = ["--no-sandbox"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
    with sync_playwright() as pw:
        instance = pw.chromium.launch(executable_path=executable, args=args)
        yield instance
        instance.close()


class Page:
    """A page opened from file:// that logs every request (and refuses all but the document) and every error."""

    def __init__(self, browser: Any, path: Path, *, height: int = 1100) -> None:
        self.url = path.resolve().as_uri()
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.context = browser.new_context(viewport={"width": 1280, "height": height})
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))

        def dismiss(dialog: Any) -> None:
            self.dialogs.append(dialog.message)
            dialog.dismiss()

        self.page.on("dialog", dismiss)
        self.page.goto(self.url, wait_until="load", timeout=120_000)

    def _route(self, route: Any) -> None:
        if route.request.url == self.url:
            route.continue_()
        else:
            route.abort()

    def close(self) -> None:
        """Close the page's context."""
        self.context.close()


def run_report(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """Run ``trifecta report`` in a child process."""
    code = "import sys; from monitor.cli._report import report; report(sys.argv[1:])"
    return subprocess.run(
        [sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, timeout=1800, check=False
    )


def _session_ids() -> list[str]:
    import json

    ids = []
    for path in sorted(SAMPLES.glob("*.jsonl")):
        first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
        ids.append(first["session_id"])
    return ids


@pytest.fixture(scope="module")
def samples_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of the bundled sample sessions."""
    out = tmp_path_factory.mktemp("report") / "samples.html"
    result = run_report(SAMPLES, "-o", out)
    assert result.returncode == 0, result.stderr
    return out


def test_every_sample_session_is_rendered_with_its_graph_and_evidence_and_nothing_is_fetched(
    browser: Any, samples_report: Path, tmp_path: Path
) -> None:
    view = Page(browser, samples_report)
    page = view.page
    ids = _session_ids()
    assert len(ids) == 6
    summaries = page.locator("details.session > summary .sid").all_inner_texts()
    assert sorted(summaries) == sorted(ids)
    assert page.locator("#index tbody tr").count() == len(ids)
    incident = page.locator("details.session", has=page.locator("summary .sid", has_text="github-public-issue"))
    incident.evaluate("e => { e.open = true; e.scrollIntoView(); }")
    graph = incident.locator("svg.graph")
    assert graph.is_visible()
    assert graph.locator("g.node.call.path").count() == 3
    assert graph.locator("path.flow.path").count() >= 1
    marks = incident.locator("table.ev mark")
    assert marks.count() >= 10
    assert marks.first.is_visible()
    box = marks.first.bounding_box()
    assert box is not None and box["width"] > 0 and box["height"] > 0
    assert "registry.internal.acme.io" in incident.locator("table.ev").inner_text()
    assert page.locator("details.session svg.graph").count() == len(ids)
    incident.locator("h3", has_text="Capability graph").evaluate("e => e.scrollIntoView()")
    shot = tmp_path / "report-github.png"
    page.screenshot(path=str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    if os.environ.get("UPDATE_SCREENSHOTS"):
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, SCREENSHOT)
    assert view.requests == [view.url]
    assert view.errors == []
    view.close()


def test_markup_from_the_trace_never_runs_in_the_browser(browser: Any, tmp_path: Path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("html_units", Path(__file__).with_name("test_html.py"))
    assert spec is not None and spec.loader is not None
    units = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(units)
    HOSTILE, write_hostile_trace = units.HOSTILE, units.write_hostile_trace
    trace = tmp_path / "hostile.jsonl"
    write_hostile_trace(trace)
    out = tmp_path / "hostile.html"
    assert run_report(trace, "-o", out).returncode == 0
    view = Page(browser, out)
    assert view.dialogs == []
    assert view.page.locator("img").count() == 0
    assert view.page.locator("script").count() == 1
    assert HOSTILE in view.page.locator("details.session > summary .sid").first.inner_text()
    assert view.requests == [view.url]
    assert view.errors == []
    view.close()


@pytest.mark.shared_data
@pytest.mark.skipif(
    not os.environ.get("TRIFECTA_FULL_REPORT"), reason="the report of all AgentDojo dev runs: TRIFECTA_FULL_REPORT=1"
)
def test_the_report_of_all_agentdojo_dev_runs_stays_bounded_opens_and_scrolls(browser: Any, tmp_path: Path) -> None:
    if not ARCHIVE.is_file():
        pytest.fail(f"the AgentDojo dev runs are missing: {ARCHIVE.resolve()}", pytrace=False)
    with tarfile.open(ARCHIVE) as archive:
        runs = sum(1 for m in archive if m.isfile() and m.name.endswith(".json"))
    out = tmp_path / "dev.html"
    result = run_report(ARCHIVE, "-o", out)
    assert result.returncode == 0, result.stderr[-2000:]
    assert out.stat().st_size <= 16_000_000
    reported = int(result.stderr.rsplit(": ", 1)[1].split()[0])
    assert reported >= runs
    view = Page(browser, out, height=900)
    page = view.page
    assert page.locator("#summary").is_visible()
    assert page.locator("#index tbody tr").count() >= runs * 0.99
    assert page.locator(".pager").first.is_visible()
    page.locator(".pager button", has_text="next").first.click()
    page.mouse.wheel(0, 20_000)
    page.keyboard.press("End")
    height = page.evaluate("document.documentElement.scrollHeight")
    assert page.evaluate("window.scrollY") > 0 and height > 900
    assert page.locator("details.session").count() > 0
    assert view.requests == [view.url]
    assert view.errors == []
    view.close()
