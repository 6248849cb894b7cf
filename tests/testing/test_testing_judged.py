"""One judged test run (testing/judged.py), on a real project in the bubblewrap sandbox: the guards around the
run, the verdict against the baseline, a run that rewrites its own test distrusted; and the time bounds of a
candidate's whole-suite run."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_core import models
from agent_core.sandbox.bubblewrap import BubblewrapSandbox
from agent_core.settings import SandboxSettings, Settings
from agent_core.testing.bounds import VERIFY_MIN_S, verify_bounds
from agent_core.testing.judged import SuiteRun, judged_run
from agent_core.testing.verdict import CHANGED_DURING_RUN
from agent_core.workspace.shadow import ShadowWorkspace
from agent_core.workspace.testfiles import restore_protected

TEST = "def test_add():\n    from calc import add\n    assert add(2, 3) == 5\n"
SKIPPED = "import pytest\n\n\n@pytest.mark.skip\ndef test_add():\n    pass\n"
# the code under test passes and, while the tests run, makes its test pass whatever it does
RIGGING = ("def add(a, b):\n"
           "    with open('test_calc.py', 'w') as f:\n"
           "        f.write('def test_add():\\n    pass\\n')\n"
           "    return a + b\n")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (tmp_path / "test_calc.py").write_text(TEST)
    return tmp_path


def _suite(shadow: ShadowWorkspace) -> SuiteRun:
    return SuiteRun(BubblewrapSandbox(SandboxSettings(timeout_s=60)), shadow.root, "pytest", 60.0)


def _restore(shadow: ShadowWorkspace) -> list[str]:
    return restore_protected(shadow.root, shadow.verification)


async def _baseline(shadow: ShadowWorkspace) -> models.TestReport:
    run = await judged_run(_suite(shadow), None)
    assert (run.report.passed, run.report.failed) == (0, 1) and run.report is run.raw, "not judged: no baseline"
    return run.report


async def test_a_run_that_changes_its_own_test_verifies_nothing(project: Path):
    with ShadowWorkspace(project) as shadow:
        baseline = await _baseline(shadow)
        (shadow.root / "calc.py").write_text(RIGGING)
        run = await judged_run(_suite(shadow), baseline, after=lambda: _restore(shadow))
        assert run.raw.ok and (run.raw.passed, run.raw.failed) == (1, 0), "the tests themselves passed"
        assert run.changed == ["test_calc.py"] and (shadow.root / "test_calc.py").read_text() == TEST
        assert not run.report.ok and CHANGED_DURING_RUN in [f.message for f in run.report.failures]
        (shadow.root / "calc.py").write_text("def add(a, b):\n    return a + b\n")
        run = await judged_run(_suite(shadow), baseline, after=lambda: _restore(shadow))
        assert run.report.ok and run.report.passed == 1 and run.changed == []


async def test_the_guard_before_puts_the_test_back_and_the_verdict_follows_the_baseline(project: Path):
    with ShadowWorkspace(project) as shadow:
        baseline = await _baseline(shadow)
        (shadow.root / "test_calc.py").write_text(SKIPPED)  # a candidate that skips the failing test
        run = await judged_run(_suite(shadow), baseline, before=lambda: _restore(shadow),
                               after=lambda: _restore(shadow))
        assert run.undone == ["test_calc.py"] and run.changed == []
        assert (run.raw.failed, run.report.failed) == (1, 1), "the test ran as the project wrote it, and failed"
        (shadow.root / "test_calc.py").write_text(SKIPPED)  # unguarded, the skip runs: the verdict refuses it
        run = await judged_run(_suite(shadow), baseline)
        assert (run.raw.failed, run.raw.skipped, run.raw.failures) == (0, 1, [])
        assert not run.report.ok and "a skip is not a pass" in run.report.failures[-1].message


def test_a_candidates_run_is_bounded_by_the_baselines_time():
    settings = Settings(sandbox=SandboxSettings(timeout_s=300))
    assert verify_bounds(settings, None) == (300, None)
    quick = models.TestReport(passed=3, duration_s=2.0, slowest_pass_s=0.1)
    assert verify_bounds(settings, quick) == (VERIFY_MIN_S + 8.0, 2.0), "4x the baseline's 2 s + 30 s; 10x 0.1 s"
    slow = models.TestReport(passed=3, duration_s=100.0, slowest_pass_s=1.0)
    assert verify_bounds(settings, slow)[0] == 300, "never past the run's timeout"
