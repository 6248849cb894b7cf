"""A project whose pytest addopts run its suite under pytest-cov and across pytest-xdist workers (common in real
projects): the search's driver still collects per-test coverage in one process and tries its mutants there.

Before, pytest-cov's own coverage took the tracer (no per-test lines: no suspects) and xdist's workers ran the
tests away from the driver's process, so a one-token bug went to the model. The project's venv is built as a
user's would be (`python -m venv`, pip from PyPI); the bubblewrap sandbox runs it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_core.sandbox.bubblewrap import probe_bwrap
from testkit.project_support import make_project

pytestmark = pytest.mark.skipif(not probe_bwrap()[0], reason="bubblewrap cannot run here")

FILES = {
    "pyproject.toml": (
        '[project]\nname = "calc"\nversion = "0.1"\n\n'
        '[tool.pytest.ini_options]\naddopts = "--cov=calc --cov-report=term-missing -n 2"\n'
        'testpaths = ["tests"]\npythonpath = ["src"]\n\n'
        '[tool.agentls.sandbox]\nbackend = "bubblewrap"\ntimeout_s = 120\n'
    ),
    "src/calc/__init__.py": (
        "def clamp(x, lo, hi):\n    if x < lo:\n        return lo\n    if x > hi:\n        return x\n    return x\n"
    ),
    "tests/test_calc.py": (
        "from calc import clamp\n\n\ndef test_low():\n    assert clamp(-1, 0, 5) == 0\n\n\n"
        "def test_high():\n    assert clamp(9, 0, 5) == 5\n\n\ndef test_mid():\n    assert clamp(3, 0, 5) == 3\n"
    ),
}


@pytest.fixture(autouse=True)
def _search_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTLS_SEARCH", "1")  # the suite's default is off (tests/conftest.py)


@pytest.fixture(scope="module")
def plugin_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_project(tmp_path_factory.mktemp("plugins") / "calc", FILES)
    subprocess.run([sys.executable, "-m", "venv", str(root / ".venv")], check=True, timeout=300)
    pip = [str(root / ".venv" / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, "pytest", "pytest-cov", "pytest-xdist"], check=True, timeout=600)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}  # as a user's shell has it
    host = subprocess.run([str(root / ".venv" / "bin" / "python"), "-m", "pytest"], cwd=root, capture_output=True,
                          text=True, timeout=300, env=env)
    assert "[gw" in host.stdout and "coverage:" in host.stdout, "the suite really runs on workers under pytest-cov"
    return root


def test_the_search_localizes_and_fixes_under_the_projects_cov_and_xdist_addopts(
    plugin_project: Path, scripted_llm, run_fix
) -> None:
    run = run_fix(str(plugin_project), "--base-url", scripted_llm.base_url, "--json")

    assert run.code == 0, run.stderr
    out = run.json
    assert out["status"] == "fixed" and out["files_changed"] == ["src/calc/__init__.py"], out
    assert scripted_llm.requests == [], "a one-token bug costs no model call"
    journal = plugin_project / ".agentls" / "runs" / out["run_id"] / "journal.jsonl"
    records = [json.loads(line) for line in journal.read_text().splitlines()]
    (localized,) = [r for r in records if r["type"] == "localize"]
    assert localized["evidence"] == "coverage" and localized["tests_covered"] == 3
    assert localized["suspects"][0]["function"] == "clamp" and localized["suspects"][0]["lines"][0] == 5
    (search,) = [r for r in records if r["type"] == "search"]
    assert search["found"]["after"] == "        return hi", search
