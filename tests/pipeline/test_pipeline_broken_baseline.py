"""A broken baseline ends the run before any model call, with the cause and the fix, and exit code 2.

`agentls fix` runs in-process against the scripted endpoint (which counts the
requests it gets) with the real bubblewrap sandbox.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine_support import CALC, journal_records, make_project

BUBBLEWRAP = '[sandbox]\nbackend = "bubblewrap"\n'
# A package under lib/ (setup.py's package_dir={"": "lib"}): it imports only once the project is installed.
# (A src/ layout is put on PYTHONPATH by the sandbox itself.)
UNINSTALLED = {
    "lib/mypkg/__init__.py": "def double(x):\n    return x + x\n",
    "tests/test_double.py": "from mypkg import double\n\n\ndef test_double():\n    assert double(2) == 4\n",
    "tests/test_more.py": "import mypkg\n\n\ndef test_more():\n    assert mypkg.double(0) == 0\n",
}


@pytest.mark.parametrize(
    ("files", "test_command", "expected"),
    [
        (CALC, "nonexistent-python -m pytest",
         ["cannot start in the sandbox", "nonexistent-python", "set test_command"]),
        (UNINSTALLED, "pytest tests",
         ["the sandbox's Python cannot import `mypkg`", "every test file (2)",
          "set sandbox.python", "create .venv"]),
        ({"calc.py": CALC["calc.py"]}, "python -m pytest", ["collected no tests", "exit 5"]),
    ],
    ids=["missing-interpreter", "unimportable-project", "no-tests"],
)
def test_broken_baseline_stops_before_any_model_call(tmp_path: Path, scripted_llm, run_fix, files, test_command,
                                                     expected) -> None:
    project = make_project(tmp_path / "proj", {**files, ".agentls.toml": f'test_command = "{test_command}"\n'
                                               + BUBBLEWRAP})
    scripted_llm.default("coder", {"edits": [], "explanation": "must not be asked"})

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json")

    assert run.code == 2, run.stdout + run.stderr
    out = run.json
    assert out["status"] == "error" and out["iterations"] == 0
    for part in expected:
        assert part in out["error"], out["error"]
    assert scripted_llm.requests == [], "no model call"
    types = [r["type"] for r in journal_records(project, out["run_id"])]
    assert "baseline_broken" in types and "llm_call" not in types and "plan" not in types


def test_real_failing_tests_are_not_a_broken_baseline(project: Path, scripted_llm, run_fix) -> None:
    (project / ".agentls.toml").write_text('test_command = "python -m pytest"\n' + BUBBLEWRAP)
    scripted_llm.default("coder", {"edits": [], "explanation": "no idea"})
    scripted_llm.default("reflector", {"hypothesis": "unsure", "file": "calc.py", "change": "?", "confidence": "low"})
    scripted_llm.default("planner", {"approach": "retry", "subtasks": [
        {"id": "t1", "description": "fix add in calc.py", "files": ["calc.py"]}]})

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json")

    assert run.json["status"] == "unfixed" and run.code == 1
    assert scripted_llm.requests_for("coder"), "the model was asked"
