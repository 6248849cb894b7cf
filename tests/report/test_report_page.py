"""`agentls report`: where the page goes, what it holds, and that journal text cannot become markup."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import html
import io
import json
import re
from pathlib import Path

from report_support import HOSTILE, ReportedRun

from agent_core.cli import main
from agent_core.report import render_report


def cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["report", *args])
    return code, out.getvalue(), err.getvalue()


def test_latest_run_by_default_into_its_folder(reported_run: ReportedRun):
    code, out, _ = cli("--workspace", str(reported_run.workspace))
    assert code == 0
    path = Path(out.strip())
    assert path == reported_run.workspace / ".agentls" / "runs" / reported_run.run_id / "report.html"
    assert f"Run {reported_run.run_id}" in path.read_text(encoding="utf-8")


def test_named_run_to_a_file_with_json(reported_run: ReportedRun, tmp_path: Path):
    target = tmp_path / "out" / "run.html"
    code, out, _ = cli(reported_run.run_id, "--workspace", str(reported_run.workspace), "--html", str(target),
                       "--json")
    assert code == 0
    assert json.loads(out) == {"schema": 1, "run_id": reported_run.run_id, "path": str(target)}
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_unknown_run_and_empty_workspace_are_bad_input(reported_run: ReportedRun, tmp_path: Path):
    code, out, err = cli("nope", "--workspace", str(reported_run.workspace), "--json")
    assert code == 2 and "no run 'nope'" in json.loads(out)["error"] and reported_run.run_id in err
    code, _, err = cli("--workspace", str(tmp_path))
    assert code == 2 and "no runs recorded" in err


def test_hostile_journal_text_is_escaped(reported_run: ReportedRun):
    _, page = render_report(reported_run.workspace, reported_run.run_id)
    assert page.count("<script") == 1, "only the report's own script tag"
    assert "<img" not in page and "<svg onload" not in page and "onerror=\"" not in page
    assert "&lt;/script&gt;&lt;script&gt;window.__pwned = 1&lt;/script&gt;&lt;img src=x onerror=" in page
    assert html.unescape(page).count(HOSTILE) >= 4, "the hostile text is there, as text: prompts, answer, tests"
    assert "sk-test-SECRET" not in page


def test_csp_admits_exactly_the_inline_style_and_script(reported_run: ReportedRun):
    _, page = render_report(reported_run.workspace, reported_run.run_id)
    csp = html.unescape(re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1))
    style = re.search(r"<style>(.*?)</style>", page, re.DOTALL).group(1)
    script = re.search(r"<script>(.*?)</script>", page, re.DOTALL).group(1)

    def digest(text: str) -> str:
        return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()

    assert f"style-src '{digest(style)}'" in csp and f"script-src '{digest(script)}'" in csp
    assert "default-src 'none'" in csp and "unsafe" not in csp


def test_page_holds_path_timeline_prompts_diffs_tests_and_verdict(reported_run: ReportedRun):
    _, page = render_report(reported_run.workspace, reported_run.run_id)
    path = re.search(r'<ol class="path">(.*?)</ol>', page, re.DOTALL).group(1)
    assert re.findall(r"<li>(\w+)</li>", path) == ["baseline", "search", "plan", "code", "gate", "test", "reflect",
                                                   "code", "gate", "test", "finalize"]
    assert page.count('<details class="step"') == 11
    assert 'data-from="test" data-to="reflect"' in page and 'data-from="reflect" data-to="code"' in page
    assert 'data-node="code" data-visits="2"' in page and 'data-node="replan" data-visits="0"' in page
    assert page.count('<details class="fold prompt">') == 4, "coder twice, reflector, explainer"
    assert '<span class="del">-    return a - b</span><span class="add">+    return a + b</span>' in page
    assert '<span class="add">+    return a * b</span>' in page, "the first, wrong attempt's diff"
    assert "test_calc.py::test_add" in page and "assert -1 == 5" in page
    assert 'id="verdict-badge">fixed<' in page and "add subtracted. It now adds" in page
