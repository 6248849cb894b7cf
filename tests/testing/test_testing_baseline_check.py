"""What is and is not a broken baseline.

The check itself; the end-to-end stop is in tests/pipeline/test_pipeline_broken_baseline.py.
"""

from __future__ import annotations

from pathlib import Path

from agent_core.models import TestFailure as Failure
from agent_core.models import TestReport as Report
from agent_core.testing.baseline_check import broken_baseline, project_packages


def _project(root: Path) -> Path:
    for rel in ("src/mypkg/__init__.py", "tests/test_a.py", "tool.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("")
    return root


def _collect_error(file: str, message: str) -> Failure:
    return Failure(nodeid=file, file=file, line=1, message=f"collection error: {message}", kind="error")


def test_project_packages_cover_flat_and_src_layouts(tmp_path: Path) -> None:
    assert project_packages(_project(tmp_path)) == {"mypkg", "tool"}


def test_a_missing_submodule_of_the_project_is_a_bug_not_the_environment(tmp_path: Path) -> None:
    report = Report(errors=1, exit_code=1, failures=[
        _collect_error("tests/test_a.py", "ModuleNotFoundError: No module named 'mypkg.missing'")])
    assert broken_baseline(report, _project(tmp_path), "pytest") is None


def test_a_missing_third_party_module_is_not_the_projects_import(tmp_path: Path) -> None:
    report = Report(errors=1, exit_code=1, failures=[
        _collect_error("tests/test_a.py", "ModuleNotFoundError: No module named 'requests'")])
    assert broken_baseline(report, _project(tmp_path), "pytest") is None


def test_a_declared_dependency_the_environment_lacks_stops_the_run(tmp_path: Path) -> None:
    project = _project(tmp_path)
    (project / "pyproject.toml").write_text('[project]\nname = "mypkg"\ndependencies = ["Requests>=2", "attrs"]\n')
    report = Report(errors=2, exit_code=2, failures=[
        _collect_error("tests/test_a.py", "ModuleNotFoundError: No module named 'requests'"),
        _collect_error("tests/test_b.py", "ModuleNotFoundError: No module named 'requests.adapters'")])
    found = broken_baseline(report, project, "pytest")
    assert found is not None and "lacks the project's declared dependency `requests`" in found
    assert "every test file (2)" in found and ".venv/bin/pip install -e ." in found
    typo = Report(errors=1, exit_code=2, failures=[
        _collect_error("tests/test_a.py", "ModuleNotFoundError: No module named 'reqeusts'")])
    assert broken_baseline(typo, project, "pytest") is None, "an undeclared name may be a typo the run can fix"


def test_failing_tests_and_timeouts_are_ordinary_baselines(tmp_path: Path) -> None:
    failing = Report(failed=1, exit_code=1, failures=[
        Failure(nodeid="tests/test_a.py::test_x", file="tests/test_a.py", line=3, message="assert 1 == 2")])
    timed_out = Report(errors=1, exit_code=None, timed_out=True)
    assert broken_baseline(failing, _project(tmp_path), "pytest") is None
    assert broken_baseline(timed_out, _project(tmp_path), "pytest") is None


def test_a_conftest_that_cannot_import_the_project_stops_pytest_with_exit_4(tmp_path: Path) -> None:
    report = Report(errors=1, exit_code=4, output="ImportError while loading conftest '/w/tests/conftest.py'.\n"
                    "E   ModuleNotFoundError: No module named 'mypkg'")
    error = broken_baseline(report, _project(tmp_path), "pytest")
    assert error is not None and "cannot import `mypkg`" in error and "pytest cannot start" in error


def test_a_make_recipe_whose_program_is_missing_cannot_start(tmp_path: Path) -> None:
    report = Report(failed=1, exit_code=2, output="make: pytest: No such file or directory\n"
                    "make: *** [Makefile:2: test] Error 127")
    error = broken_baseline(report, _project(tmp_path), "make test")
    assert error is not None and "`make test` cannot start" in error and "`pytest` or a program" in error


def test_the_missing_program_is_named_whatever_reported_it(tmp_path: Path) -> None:
    outputs = {
        "bwrap: execvp nonexistent-python: No such file or directory": "nonexistent-python",
        "timeout: failed to run command \u2018python\u2019: No such file or directory": "python",
        "env: \u2018pytest\u2019: No such file or directory": "pytest",
        "prlimit: failed to execute tox: No such file or directory": "tox",
        "sh: 1: hatch: not found": "hatch",
    }
    for output, word in outputs.items():
        error = broken_baseline(Report(failed=1, exit_code=127, output=output), _project(tmp_path), "cmd")
        assert error is not None and f"`{word}` or a program it runs is missing" in error, (output, error)
