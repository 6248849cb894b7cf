"""Per-test results whatever runs pytest: make, timeout, env, uv and tox, in the real bubblewrap sandbox.

The plugin is loaded through the environment, so each wrapper's failing test
comes back with its node id, its line in the test file and the line in the
code under test. uv, tox and pytest-xdist are not in the sandbox, so those
tests put the tool inside the workspace (wrapper_tools.py); with xdist the
tests run in worker processes and the controller reports them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sandbox_support import make_backend
from wrapper_tools import install_tox, install_uv, install_xdist

from agent_core.testing.runner import run_tests

PROJECT = {
    "pkg/__init__.py": "",
    "pkg/stats.py": "def mean(values):\n    total = sum(values)\n    return total / len(values)\n",
    "tests/test_stats.py": (
        "from pkg.stats import mean\n"     # 1
        "\n\n"                              # 2-3
        "def test_empty():\n"               # 4
        "    values = []\n"                 # 5
        "    assert mean(values) == 0\n"    # 6
        "\n\n"                              # 7-8
        "def test_pair():\n"                # 9
        "    assert mean([1, 3]) == 2\n"    # 10
    ),
    "pyproject.toml": (
        '[project]\nname = "proj"\nversion = "0"\nrequires-python = ">=3.11"\n\n'
        "[tool.uv]\npackage = false\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n"
    ),
    "Makefile": "test:\n\tpython3 -m pytest -q\n",
    "tox.ini": "[tox]\nno_package = true\n\n[testenv]\nskip_install = true\ncommands = python -m pytest {posargs}\n",
}
def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


WRAPPERS = {
    "make test": None,
    "timeout 60 python3 -m pytest": None,
    "env X=1 python3 -m pytest tests": None,
    "tools/uv run python -m pytest": install_uv,
    "tools/tox -e py": install_tox,
    "tools/pytest -n 2": install_xdist,
}


@pytest.mark.parametrize("command", list(WRAPPERS))
async def test_wrapper_yields_located_failures(workspace: Path, command: str) -> None:
    _write(workspace, PROJECT)
    install = WRAPPERS[command]
    if install is not None:
        install(workspace)
    report = await run_tests(make_backend("bubblewrap", timeout_s=180), workspace, command, timeout_s=180)
    assert (report.passed, report.failed, report.errors) == (1, 1, 0), report.output
    assert report.exit_code not in (0, None) and not report.ok
    [failure] = report.failures
    assert failure.nodeid == "tests/test_stats.py::test_empty"
    assert (failure.file, failure.line, failure.kind) == ("tests/test_stats.py", 6, "failure")
    assert (failure.source_file, failure.source_line) == ("pkg/stats.py", 3)
    assert "ZeroDivisionError" in failure.message
    assert report.slowest_pass_s is not None and report.slowest_pass_s >= 0
    assert not list(workspace.glob(".agentls")), "the per-run plugin directory is removed"


async def test_select_runs_only_the_named_tests_through_a_wrapper(workspace: Path) -> None:
    _write(workspace, PROJECT)
    report = await run_tests(make_backend("bubblewrap"), workspace, "make test", timeout_s=60,
                             select=["tests/test_stats.py::test_pair"])
    assert (report.passed, report.failed, report.errors) == (1, 0, 0), report.output
    assert "1 deselected" in report.output


async def test_a_command_that_is_not_pytest_is_judged_by_its_exit_code(workspace: Path) -> None:
    _write(workspace, {"Makefile": "test:\n\t@echo checking\n\t@false\n"})
    report = await run_tests(make_backend("bubblewrap"), workspace, "make test", timeout_s=60)
    assert (report.passed, report.failed, report.errors, report.failures) == (0, 1, 0, [])
    assert report.exit_code == 2 and "checking" in report.output


@pytest.mark.parametrize("command", ["make test", "python3 -m pytest"])
async def test_stop_after_ends_the_session_at_the_first_failed_test_whatever_runs_pytest(workspace: Path,
                                                                                      command: str) -> None:
    _write(workspace, PROJECT)  # test_empty fails, test_pair after it passes
    report = await run_tests(make_backend("bubblewrap"), workspace, command, timeout_s=60, stop_after=1)
    assert (report.passed, report.failed) == (0, 1), report.output
    assert [f.nodeid for f in report.failures] == ["tests/test_stats.py::test_empty"]
    assert "stopping after 1 failures" in report.output, report.output
