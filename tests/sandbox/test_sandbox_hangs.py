"""Hangs cost seconds: the per-test bound stops a looping test inside pytest and names where it hung.

Each run's own timeout is far above the bound, so a report that is not
`timed_out` shows the bound did the stopping; the failure's location is the
line of the code under test that was running.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sandbox_support import make_backend
from wrapper_tools import install_xdist

from agent_core.models import TestReport as Report
from agent_core.testing.runner import per_test_bound, run_tests

LOOP = {
    "pkg/__init__.py": "",
    "pkg/count.py": (
        "def countdown(n):\n"          # 1
        "    while n != 0:\n"          # 2
        "        n -= 2\n"             # 3
        "    return n\n"               # 4
    ),
    "tests/test_count.py": (
        "from pkg.count import countdown\n\n\n"
        "def test_odd():\n"            # 4
        "    assert countdown(3) == 0\n"   # 5
        "\n\n"
        "def test_even():\n"           # 8
        "    assert countdown(4) == 0\n"   # 9
    ),
}
STUBBORN = {  # swallows every exception, the bound's included: only the faulthandler backstop ends it
    "pkg/__init__.py": "",
    "pkg/spin.py": (
        "import time\n"                # 1
        "\n\n"
        "def spin():\n"                # 4
        "    while True:\n"            # 5
        "        try:\n"               # 6
        "            time.sleep(0.05)\n"   # 7
        "        except BaseException:\n"  # 8
        "            pass\n"           # 9
    ),
    "tests/test_spin.py": "from pkg.spin import spin\n\n\ndef test_spin():\n    spin()\n",
}


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


@pytest.mark.parametrize("command", ["python -m pytest", "timeout 100 python3 -m pytest"])
async def test_an_infinite_loop_fails_its_test_at_the_looping_line(workspace: Path, command: str) -> None:
    _write(workspace, LOOP)
    report = await run_tests(make_backend("bubblewrap", timeout_s=120), workspace, command, timeout_s=120,
                             test_timeout_s=2)
    assert not report.timed_out, "the run's own timeout did not have to fire"
    assert (report.passed, report.failed, report.errors) == (1, 1, 0), report.output
    [failure] = report.failures
    assert failure.nodeid == "tests/test_count.py::test_odd"
    assert (failure.file, failure.line) == ("tests/test_count.py", 5)
    assert failure.source_file == "pkg/count.py" and failure.source_line in (2, 3)
    assert "per-test bound" in failure.message
    assert "agentls_report_plugin" not in (failure.source_file or "")
    assert report.slowest_fail_s is None, "a test stopped by the bound does not raise the next bound"


async def test_xdist_workers_apply_the_bound_and_the_selection(workspace: Path) -> None:
    _write(workspace, {**LOOP, "tests/test_more.py": "def test_unselected():\n    assert False\n"})
    install_xdist(workspace)
    report = await run_tests(make_backend("bubblewrap", timeout_s=120), workspace, "tools/pytest -n 2 tests",
                             timeout_s=120, test_timeout_s=2, select=["tests/test_count.py"])
    assert not report.timed_out and "2 workers" in report.output, report.output
    assert (report.passed, report.failed, report.errors) == (1, 1, 0), report.output
    [failure] = report.failures
    assert failure.nodeid == "tests/test_count.py::test_odd" and "per-test bound" in failure.message
    assert failure.source_file == "pkg/count.py" and failure.source_line in (2, 3)


async def test_a_test_that_swallows_the_stop_is_ended_and_located_from_its_stack(workspace: Path) -> None:
    _write(workspace, STUBBORN)
    report = await run_tests(make_backend("bubblewrap", timeout_s=120), workspace, "python -m pytest",
                             timeout_s=120, test_timeout_s=1)
    assert not report.timed_out
    assert (report.passed, report.failed, report.errors) == (0, 0, 1), report.output
    [failure] = report.failures
    assert failure.nodeid == "tests/test_spin.py::test_spin" and failure.kind == "error"
    assert (failure.file, failure.line) == ("tests/test_spin.py", 5)
    assert (failure.source_file, failure.source_line) == ("pkg/spin.py", 7)
    assert "Timeout" in failure.message and 'File "' in failure.traceback


def test_the_bound_comes_from_the_baseline() -> None:
    assert per_test_bound(Report(passed=3, slowest_pass_s=0.01)) == 2.0, "at least 2 s"
    assert per_test_bound(Report(passed=3, slowest_pass_s=1.5)) == 15.0, "10x the slowest passing test"
    assert per_test_bound(Report(failed=2), run_timeout_s=300) == 60.0, "nothing passed: a fifth of the run"
    assert per_test_bound(None, run_timeout_s=300) == 60.0
    assert per_test_bound(Report(passed=1, slowest_pass_s=9.0), setting=4.0) == 4.0, "the setting wins"
    slow_failing = Report(passed=3, failed=1, slowest_pass_s=0.01, slowest_fail_s=2.0)
    assert per_test_bound(slow_failing) == 7.0, "a slow failing test may take 3x (+1 s) its time once fixed"


async def test_a_slow_failing_tests_time_is_reported(workspace: Path) -> None:
    _write(workspace, {"tests/test_slow.py": (
        "import time\n\n\ndef test_slow():\n    time.sleep(1.2)\n    assert False\n\n\n"
        "def test_fast():\n    assert time.monotonic() > 0\n")})
    report = await run_tests(make_backend("bubblewrap", timeout_s=120), workspace, "python -m pytest",
                             timeout_s=120)
    assert (report.passed, report.failed) == (1, 1), report.output
    assert report.slowest_fail_s is not None and report.slowest_fail_s >= 1.2
    assert per_test_bound(report) >= 3 * 1.2 + 1


def test_the_runner_and_the_plugin_agree_on_their_variables() -> None:
    from agent_core.testing import pytest_plugin, runner

    assert (runner.REPORT_VAR, runner.SELECT_VAR, runner.TIMEOUT_VAR, runner.HANG_SUFFIX) == (
        pytest_plugin.REPORT_VAR, pytest_plugin.SELECT_VAR, pytest_plugin.TIMEOUT_VAR, pytest_plugin.HANG_SUFFIX)
