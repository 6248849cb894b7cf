"""The run report in a real headless browser: Debian's Chromium, driven by Playwright.

Playwright only drives the browser here (`executable_path`): no browser is
downloaded. The page must load without console errors or network requests,
run its own script (the CSP admits it by hash), draw the diagram and the
diffs, and show the hostile journal text as text without running any of it.
Set AGENTLS_REPORT_SCREENSHOT=path.png to keep the screenshot to look at.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright
from report_support import HOSTILE, ReportedRun

from agent_core.report import write_report

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    assert path, "Chromium is missing: apt-get install chromium (scripts/test.sh installs it)"
    return path


@pytest.fixture
def page_in_browser(reported_run: ReportedRun, tmp_path: Path):
    _, html = write_report(reported_run.workspace, reported_run.run_id, tmp_path / "report.html")
    problems: list[str] = []
    requests: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("console", lambda m: problems.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda exc: problems.append(f"pageerror: {exc}"))
        page.on("request", lambda r: requests.append(r.url))
        page.goto(html.as_uri(), wait_until="load")
        yield page, problems, requests, tmp_path
        browser.close()


def test_loads_clean_and_runs_only_its_own_script(page_in_browser):
    page, problems, requests, _ = page_in_browser
    assert problems == []
    assert len(requests) == 1 and requests[0].startswith("file://"), "no request beyond the page itself"
    assert page.evaluate("document.body.dataset.script") == "ran", "the CSP admits the report's own script"
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.locator("img, iframe, object, embed, [onerror], [onload]").count() == 0
    assert page.locator("script").count() == 1


def test_diagram_and_diffs_are_rendered(page_in_browser):
    page, _, _, _ = page_in_browser
    graph = page.locator("svg#graph")
    box = graph.bounding_box()
    assert box and box["width"] > 600 and box["height"] > 150
    assert page.locator("svg#graph g.gnode").count() == 12
    visits = dict(
        page.eval_on_selector_all("svg#graph g.gnode", "gs => gs.map(g => [g.dataset.node, +g.dataset.visits])")
    )
    assert visits["code"] == 2 and visits["test"] == 2 and visits["reflect"] == 1 and visits["replan"] == 0
    assert page.locator("svg#graph path.edge").count() == 10  # distinct hops of the run, START and END included
    diff = page.locator("#final-diff").inner_text()
    assert "-    return a - b" in diff and "+    return a + b" in diff
    assert page.locator("#final-diff .add").evaluate("e => getComputedStyle(e).backgroundColor") != "rgba(0, 0, 0, 0)"


def test_prompts_fold_and_hold_the_hostile_text_as_text(page_in_browser):
    page, problems, _, tmp_path = page_in_browser
    prompt = page.locator("details.prompt").first
    assert prompt.evaluate("d => d.open") is False, "prompts start folded"
    page.click("button[data-fold=open]")
    assert prompt.evaluate("d => d.open") is True
    texts = page.eval_on_selector_all(
        "details.prompt pre, details.answer pre, .failure pre", "ps => ps.map(p => p.textContent)"
    )
    assert sum(HOSTILE in t for t in texts) >= 3, "prompts, the reflector's answer and the failure message"
    assert page.evaluate("typeof window.__pwned") == "undefined" and problems == []
    shot = tmp_path / "report.png"
    page.screenshot(path=str(shot), full_page=True)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 50_000
    if os.environ.get("AGENTLS_REPORT_SCREENSHOT"):
        shutil.copy(shot, os.environ["AGENTLS_REPORT_SCREENSHOT"])
