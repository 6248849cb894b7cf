"""A project pinned to another Python by pyenv's `.python-version`, with no pytest of its own.

The machine's `python3` is a pyenv shim: asked in the project, it is the
pinned version. Its tests run with that interpreter in the sandbox, with
agentls' pure-Python pytest and coverage added (so the failing test is
localized and the search fixes it); a Python older than that pytest
supports stops at the baseline with the cause and the fix, before any
model call. Uses the interpreters pyenv has on this machine kind (2.7 and 3.6-3.13).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from testkit.project_support import make_project

PYENV_VERSIONS = Path.home() / ".pyenv" / "versions"
SRC_LAYOUT = {
    "pyproject.toml": '[project]\nname = "shop"\nversion = "0.1"\n',
    "src/shop/__init__.py": "",
    "src/shop/cart.py": "def total(prices, discount=0.0):\n    return round(sum(prices) * (1 + discount), 2)\n",
    "tests/test_cart.py": ("import sys\n\nfrom shop.cart import total\n\n\ndef test_total():\n"
                           "    print('python', sys.version_info[:2])\n    assert total([10.0, 10.0], 0.25) == 15.0\n"),
    ".agentls.toml": '[sandbox]\nbackend = "bubblewrap"\n',
}


def _pyenv_python(wanted) -> tuple[str, str] | None:
    """(version, its python) of a pyenv interpreter whose (major, minor) satisfies `wanted` and has no pytest."""
    if not PYENV_VERSIONS.is_dir():
        return None
    for version_dir in sorted(PYENV_VERSIONS.iterdir()):
        python = version_dir / "bin" / "python3"
        parts = version_dir.name.split(".")
        if not python.exists() or len(parts) < 2 or not all(p.isdigit() for p in parts[:2]):
            continue
        if wanted((int(parts[0]), int(parts[1]))):
            has_pytest = subprocess.run([str(python), "-c", "import pytest"], capture_output=True, check=False)
            if has_pytest.returncode != 0:
                return version_dir.name, str(python)
    return None


@pytest.fixture(autouse=True)
def _search_on_with_pyenv_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """The search on, and `python3` the pyenv shim, as in a shell where pyenv is set up."""
    monkeypatch.setenv("AGENTLS_SEARCH", "1")
    shims = PYENV_VERSIONS.parent / "shims"
    monkeypatch.setenv("PATH", f"{shims}:{PYENV_VERSIONS.parent / 'bin'}:{os.environ.get('PATH', '')}")


def test_a_newer_pinned_python_runs_the_tests_and_the_search_fixes_it(tmp_path: Path, scripted_llm, run_fix):
    found = _pyenv_python(lambda v: v >= (3, 12))
    assert found is not None, "this machine kind's pyenv has 3.12.1 and 3.13.0 without pytest; none was found"
    version, _ = found
    project = make_project(tmp_path / "proj", {**SRC_LAYOUT, ".python-version": version + "\n"})

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--apply")

    assert run.code == 0 and run.json["status"] == "fixed", run.stderr
    assert scripted_llm.requests == [], "found by the search, no model call"
    assert "(1 - discount)" in (project / "src" / "shop" / "cart.py").read_text()
    report = next(r for r in _journal(project, run.json["run_id"]) if r["type"] == "test_report")["report"]
    major, minor = version.split(".")[:2]
    assert report["failed"] == 1 and f"python ({major}, {minor})" in report["output"], "the pinned Python ran them"


def test_a_pinned_python_too_old_for_pytest_stops_at_the_baseline(tmp_path: Path, scripted_llm, run_fix):
    found = _pyenv_python(lambda v: (3, 6) <= v < (3, 10))
    assert found is not None, "this machine kind's pyenv has 3.6-3.9 without pytest; none was found"
    version, python = found
    project = make_project(tmp_path / "proj", {**SRC_LAYOUT, ".python-version": version + "\n"})

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json")

    assert run.code == 2 and run.json["status"] == "error", run.stdout + run.stderr
    assert f"the project's interpreter {python} has no pytest" in run.json["error"]
    assert f"{python} -m pip install pytest" in run.json["error"]
    assert scripted_llm.requests == []


def _journal(project: Path, run_id: str) -> list[dict]:
    import json

    path = project / ".agentls" / "runs" / run_id / "journal.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]
