"""A gen-tests run's report: coverage before and after per line, and coverage.py's own HTML reports linked.

A real `agentls gen-tests` run (scripted tester, real sandbox) on a module
whose existing test covers `clamp`'s first branch only; the generated test
covers the other two. The run's folder keeps coverage.py's HTML report of
each measurement, and the run report links both and marks each statement.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

from agent_core.cli import main
from agent_core.report import write_report
from testkit.project_support import make_project

SHOP = '''def clamp(x, lo, hi):
    """Clamp x into [lo, hi]."""
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x
'''
EXISTING = "from shop import clamp\n\n\ndef test_low():\n    assert clamp(-1, 0, 5) == 0\n"
GENERATED = {
    "tests": [
        {
            "name": "test_clamp_high_and_inside",
            "kind": "pytest",
            "target": "clamp",
            "rationale": "the other branches",
            "code": "from shop import clamp\n\n\ndef test_clamp_high_and_inside():\n"
            "    assert clamp(9, 0, 5) == 5\n    assert clamp(3, 0, 5) == 3\n",
        }
    ]
}


def test_gen_tests_report_shows_coverage_before_and_after(scripted_llm, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    workspace = make_project(
        tmp_path / "shopws",
        {
            "shop.py": SHOP,
            "tests/test_low.py": EXISTING,
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["."]\n',
        },
    )
    scripted_llm.add("tester", GENERATED)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(
            [
                "gen-tests",
                str(workspace / "shop.py"),
                "--target",
                "clamp",
                "--json",
                "--base-url",
                scripted_llm.base_url,
            ]
        )
    assert code == 0, err.getvalue()
    summary = json.loads(out.getvalue().strip().splitlines()[-1])
    assert summary["tests_kept"] == 1 and 0 < summary["coverage"]["before"] < summary["coverage"]["after"] == 100.0
    run_dir = next((workspace / ".agentls" / "runs").iterdir())
    for phase in ("before", "after"):
        index = run_dir / f"coverage-{phase}" / "index.html"
        assert index.is_file() and "coverage" in index.read_text(encoding="utf-8").lower()
        assert list((run_dir / f"coverage-{phase}").glob("*shop_py.html")), "coverage.py's per-file, per-line page"

    _, page_path = write_report(workspace, run_dir.name, tmp_path / "elsewhere" / "report.html")
    page = page_path.read_text(encoding="utf-8")
    hrefs = re.findall(r'<li><a href="([^"]+)">coverage (before|after)</a>', page)
    assert [phase for _, phase in hrefs] == ["before", "after"]
    for href, _ in hrefs:
        assert (page_path.parent / href).resolve().is_file(), href
    by_line = {int(n): s for s, n in re.findall(r'<span class="cov-(\w+)" data-line="(\d+)">', page)}
    assert by_line[1] == "kept" and by_line[3] == "kept" and by_line[4] == "kept"
    assert by_line[5] == by_line[6] == by_line[7] == "new" and by_line[2] == "none"
    assert "0 line(s) newly run" not in page and "3 line(s) newly run" in page
    assert 'class="badge ok"' in page
