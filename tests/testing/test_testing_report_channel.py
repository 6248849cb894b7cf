"""The report channel cannot be forged from the code under test (issue 38).

The token is on no environment or command line a test can read, and no descriptor a test can reopen gives
it back; a report forged anyway (here with the token taken from the plugin's own memory) and cut short by
`os._exit(0)` disagrees with pytest's JUnit XML and exit status and is no clean run. Real bubblewrap runs of
the real runner; the cross-check's rules as a table.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_core.checks.trustprobes import FORGE_CODE, FORGE_PROJECT
from agent_core.models import TestReport as Report
from agent_core.sandbox.bubblewrap import BubblewrapSandbox, probe_bwrap
from agent_core.sandbox.cleanup import make_temp_dir, remove_temp_dir
from agent_core.settings import SandboxSettings
from agent_core.testing.crosscheck import disagreement
from agent_core.testing.runner import run_tests
from project_support import make_project

bwrap = pytest.mark.skipif(not probe_bwrap()[0], reason="bubblewrap cannot run here")

# The token as a leak would give it (read from the plugin's reporter object), the same forged records, os._exit.
FROM_MEMORY = FORGE_CODE.replace(
    'lines = []\n',
    'import gc\nfound = {o.token for o in gc.get_objects() if type(o).__name__ == "Reporter"}\nlines = []\n')


@pytest.fixture
def private(tmp_path: Path) -> Iterator[Path]:
    """A private copy's folder (the sandbox refuses the user's own files)."""
    base = make_temp_dir("chtest")
    try:
        yield base / "proj"
    finally:
        remove_temp_dir(base)


@bwrap
async def test_records_forged_with_every_token_a_test_can_find_are_no_clean_pass(private: Path):
    workspace = make_project(private, FORGE_PROJECT)
    report = await run_tests(BubblewrapSandbox(SandboxSettings(timeout_s=60)), workspace, "pytest")
    # no candidate is the token: every forged record is dropped, and the session never finished
    assert report.passed == 0 and report.errors >= 1, report.failures
    assert any("ended before pytest finished its session" in f.message for f in report.failures), report.failures


@bwrap
async def test_a_report_forged_with_a_leaked_token_disagrees_with_pytests_own_witnesses(private: Path):
    workspace = make_project(private, {**FORGE_PROJECT, "calc.py": FROM_MEMORY})
    report = await run_tests(BubblewrapSandbox(SandboxSettings(timeout_s=60)), workspace, "pytest")
    assert report.passed == 3, "the forged records carry the run's token: they count"
    assert report.errors >= 1, report.failures
    assert any("wrote no JUnit XML" in f.message for f in report.failures), report.failures


JUNIT_TWO = ('<testsuite><testcase classname="test_calc" name="test_add" file="test_calc.py"/>'
             '<testcase classname="test_calc" name="test_mul" file="test_calc.py"/></testsuite>')
JUNIT_FAILED = ('<testsuite><testcase classname="test_calc" name="test_add" file="test_calc.py">'
                '<failure message="boom">boom</failure></testcase></testsuite>')


@pytest.mark.parametrize(("passed", "failed", "junit", "exit_code", "why"), [
    (2, 0, JUNIT_TWO, 0, None),
    (2, 0, "", 0, "wrote no JUnit XML"),
    (3, 0, JUNIT_TWO, 0, "disagree with pytest's JUnit XML"),
    (1, 0, JUNIT_FAILED, 0, "disagree with pytest's JUnit XML"),
    (2, 0, JUNIT_TWO, 1, "pytest exited with 1"),
    (0, 1, JUNIT_FAILED, 0, "pytest exited 0 although"),
    (0, 1, JUNIT_FAILED, 1, None),
    (0, 0, "<testsuite/>", 5, None),
    (2, 0, "<testsuite", 0, "cannot be read"),
])
def test_the_cross_check_table(tmp_path: Path, passed: int, failed: int, junit: str, exit_code: int,
                               why: str | None):
    found = disagreement(Report(passed=passed, failed=failed), junit, exit_code, tmp_path)
    assert (found is None) if why is None else (found is not None and why in found), found
