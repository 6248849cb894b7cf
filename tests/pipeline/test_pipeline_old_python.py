"""A project with its own old venv (Python 3.7 with pytest 7.4.4, Python 3.6 with pytest 3.10.1, from PyPI, no
coverage.py): the sandbox runs its tests as on a workstation and the search still localizes from per-test lines
and fixes the bug. agentls' pytest plugin goes in without annotations (3.6 has no postponed ones, pytest 3.10
no `pytest.Config`).

The bug shows only as an assertion in the test: the traceback names no line of the code, so without per-test
lines there are no suspects and no search (4 of 14 real bugs were so). agentls' coverage.py needs a newer
Python; the driver records the lines with its own tracer (search/inside/driver_trace.py). The suite also checks the
run's account: `Path.expanduser()` without HOME raised `KeyError: getpwuid()` on 3.7 in the sandbox.

Each venv is built once per machine (~40 s, tests/old_python.py) and copied into each project.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from old_python import copy_venv_into
from project_support import journal_records, make_project

PROJECT = {
    "shop/__init__.py": "",
    "shop/cart.py": "def total(prices, discount=0.0):\n    return round(sum(prices) * (1 + discount), 2)\n",
    "tests/test_cart.py": (
        "import sys\n\nfrom shop.cart import total\n\n\n"
        "def test_discount():\n    print('python', sys.version_info[:2])\n"
        "    assert total([10.0, 10.0], 0.25) == 15.0\n\n\n"
        "def test_no_discount():\n    assert total([1.0, 2.0]) == 3.0\n"
    ),
    "tests/test_home.py": (
        "import os\nimport pwd\nfrom pathlib import Path\n\n\n"
        "def test_home_without_the_variable(monkeypatch):\n"
        "    monkeypatch.delenv('HOME')\n"
        "    assert Path('~/.shoprc').expanduser().parent == Path(pwd.getpwuid(os.getuid()).pw_dir)\n"
    ),
}


@pytest.fixture(autouse=True)
def _search_on_in_bubblewrap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTLS_SEARCH", "1")  # the suite's default is off (tests/conftest.py)
    monkeypatch.setenv("AGENTLS_SANDBOX__BACKEND", "bubblewrap")


@pytest.fixture(params=["py3.7.16-pytest7.4.4", "py3.6.15-pytest3.10.1"])
def old_project(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    root = make_project(tmp_path / "shop", PROJECT)
    copy_venv_into(root, request.param)
    missing = subprocess.run([str(root / ".venv" / "bin" / "python"), "-c", "import coverage"], capture_output=True)
    assert missing.returncode != 0, "the venv has no coverage.py of its own: the tracer is what records"
    return root


def test_an_old_venv_gets_per_test_lines_and_the_search_fixes_an_assertion_in_the_test(
    old_project: Path, scripted_llm, run_fix
) -> None:
    run = run_fix(str(old_project), "--base-url", scripted_llm.base_url, "--json", "--apply")

    assert run.code == 0 and run.json["status"] == "fixed", run.stdout + run.stderr
    assert scripted_llm.requests == [], "found by the search, no model call"
    assert "(1 - discount)" in (old_project / "shop" / "cart.py").read_text()
    records = journal_records(old_project, run.json["run_id"])
    baseline = next(r for r in records if r["type"] == "test_report")["report"]
    assert baseline["failed"] == 1 and baseline["passed"] == 2, "the home test passes in the sandbox on 3.7"
    python = (old_project / ".venv" / "pyvenv.cfg").read_text().split("version = ")[1].split(".")[:2]
    assert f"python ({python[0]}, {python[1]})" in baseline["output"], "the venv's Python ran them"
    assert python in (["3", "7"], ["3", "6"])
    (localized,) = [r for r in records if r["type"] == "localize"]
    assert localized["evidence"] == "coverage" and localized["recorder"].startswith("agentls' line tracer")
    assert localized["suspects"][0]["file"] == "shop/cart.py" and localized["suspects"][0]["lines"] == [2]
