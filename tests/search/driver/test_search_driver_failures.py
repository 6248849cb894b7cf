"""The search never switches off silently: a project's terminal addopts still search, a failing driver is said.

`addopts = -vvv --tb=native` (common) once made every search driver run a pytest usage error (the driver
ran with `-p no:terminal`) and the search reported `tried: 0`. A driver that fails for any other reason
is an error in the journal's records and in the run's result, and the run goes on to the model.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from project_support import journal_records, make_project

pytestmark = pytest.mark.e2e  # every test here runs a real sandbox

CLAMP = {
    "pyproject.toml": '[project]\nname = "clamp"\nversion = "0.1"\n\n'
                      '[tool.pytest.ini_options]\naddopts = "-vvv --tb=native"\n',
    "clamp.py": "def clamp(x, lo, hi):\n    if x < lo:\n        return lo\n    if x > hi:\n        return x\n"
                "    return x\n",
    "test_clamp.py": (
        "from clamp import clamp\n\n\ndef test_high():\n    assert clamp(9, 0, 5) == 5\n\n\n"
        "def test_low():\n    assert clamp(-1, 0, 5) == 0\n\n\ndef test_mid():\n    assert clamp(3, 0, 5) == 3\n"
    ),
}
# Fault injection: a conftest that refuses the search driver alone stands for any driver crash or usage error
# the project's own test runs do not have.
REFUSES_THE_DRIVER = (
    "import sys\n\nimport pytest\n\n\ndef pytest_configure(config):\n"
    "    if sys.argv[0].endswith('driver.py'):\n"
    "        raise pytest.UsageError('this conftest refuses the search driver')\n"
)
MEAN = {  # the traceback names the faulty line: suspects without coverage, so the search tries mutants
    "conftest.py": REFUSES_THE_DRIVER,
    "stats.py": "def mean(xs):\n    total = sum(xs)\n    return total / len(x)\n",
    "test_stats.py": "from stats import mean\n\n\ndef test_mean():\n    assert mean([1, 2, 3]) == 2\n",
}
MODEL_FIX = {"edits": [{"path": "stats.py", "search": "len(x)", "replace": "len(xs)"}], "explanation": "xs"}


@pytest.fixture(autouse=True)
def _search_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTLS_SEARCH", "1")  # the suite's default is off (tests/conftest.py)


def _records(project: Path, run_id: str, kind: str) -> list[dict]:
    return [r for r in journal_records(project, run_id) if r["type"] == kind]


def test_terminal_addopts_still_search_and_fix_a_one_token_bug(tmp_path: Path, scripted_llm, run_fix) -> None:
    project = make_project(tmp_path / "clamp", CLAMP)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json")

    assert run.code == 0 and run.json["status"] == "fixed", run.stdout + run.stderr
    assert scripted_llm.requests == [], "a one-token bug costs no model call"
    (localized,) = _records(project, run.json["run_id"], "localize")
    assert localized["evidence"] == "coverage" and "error" not in localized
    (search,) = _records(project, run.json["run_id"], "search")
    assert search["found"]["after"] == "        return hi" and search["tried"] >= 1


def test_a_failing_driver_is_an_error_in_the_journal_and_the_result(tmp_path: Path, scripted_llm, run_fix) -> None:
    project = make_project(tmp_path / "stats", MEAN)
    scripted_llm.add("coder", MODEL_FIX)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json")

    assert run.code == 0 and run.json["status"] == "fixed", run.stdout + run.stderr
    (localized,) = _records(project, run.json["run_id"], "localize")
    assert localized["evidence"] == "traceback"
    assert "pytest exited with status 4 before running any test" in localized["error"]
    assert "this conftest refuses the search driver" in localized["error"], "pytest's own words come with it"
    searches = _records(project, run.json["run_id"], "search")
    assert searches and searches[0]["stopped"] == "error" and searches[0]["tried"] == 0
    assert "this conftest refuses the search driver" in searches[0]["error"]
    summary = json.loads((project / ".agentls" / "runs" / run.json["run_id"] / "summary.json").read_text())
    assert summary["extra"]["search_error"].startswith("trying mutants: pytest exited with status 4")
