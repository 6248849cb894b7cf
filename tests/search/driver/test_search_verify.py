"""A candidate's whole-suite run (single_edit._verify), in the real bubblewrap sandbox: one failed test refuses a
candidate, so the run ends there (VERIFY_STOP_AFTER), the tests after it, a hanging one among them, never run; a
right candidate runs every test and stays in the shadow."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest

from agent_core import models
from agent_core.sandbox.factory import make_sandbox
from agent_core.search.candidate import Mutant
from agent_core.search.driver import single_edit
from agent_core.search.driver.localizing import SearchDeps
from agent_core.settings import Settings
from agent_core.testing.judged import SuiteRun, judged_run
from agent_core.testing.runner import run_tests
from agent_core.workspace.shadow import ShadowWorkspace

pytestmark = pytest.mark.e2e  # a real sandbox

SIGN = "def sign(x):\n    if x > 0:\n        return 1\n    return -1\n"  # sign(0) is -1: the bug
TESTS = ("import time\n\nfrom sign import sign\n\n\n"
         "def test_zero():\n    assert sign(0) == 0\n\n\n"
         "def test_positive():\n    assert sign(5) == 1\n\n\n"
         "def test_negative():\n    assert sign(-5) == -1\n\n\n"
         "def test_negative_slowly():\n    while sign(-2) != -1:\n        time.sleep(0.1)\n")
RIGHT = Mutant("sign.py", 4, "    return -1 if x < 0 else 0", "the fix")
# passes test_zero and test_positive, fails test_negative, and makes test_negative_slowly loop until its bound
BROKEN = Mutant("sign.py", 4, "    return 0", "`-1` -> `0`")


def _verify(project: Path, mutant: Mutant) -> tuple[models.TestReport, models.TestReport | None, list[str], str]:
    """(the baseline, `mutant`'s verified report or None, the tests that refused it, sign.py afterwards)."""
    settings = Settings.model_validate({"test_command": "pytest -q", "sandbox": {"backend": "bubblewrap"}})

    async def go() -> tuple[models.TestReport, models.TestReport | None, list[str], str]:
        with ShadowWorkspace(project) as shadow:
            sandbox = make_sandbox(settings.sandbox)
            deps = cast(SearchDeps, SimpleNamespace(settings=settings, sandbox=sandbox, shadow=shadow,
                                                    run_tests=run_tests))
            baseline = (await judged_run(SuiteRun(sandbox, shadow.root, "pytest -q", 60.0), None)).report
            refusing: list[str] = []
            report = await single_edit._verify(deps, mutant, baseline, refusing)
            return baseline, report, refusing, (shadow.root / "sign.py").read_text()

    return asyncio.run(go())


def _project(tmp_path: Path) -> Path:
    (tmp_path / "sign.py").write_text(SIGN)
    (tmp_path / "test_sign.py").write_text(TESTS)
    return tmp_path


def test_a_refused_candidate_s_run_ends_at_its_first_failed_test(tmp_path: Path):
    baseline, report, refusing, after = _verify(_project(tmp_path), BROKEN)

    assert (baseline.passed, baseline.failed) == (3, 1), "test_zero fails at the baseline"
    assert report is None, "refused"
    assert [nodeid for nodeid in refusing if "::" in nodeid] == ["test_sign.py::test_negative"], \
        ("the run ended at its first failed test: the looping test after it never ran", refusing)
    assert after == SIGN, "the shadow is restored exactly"


def test_a_right_candidate_runs_every_test(tmp_path: Path):
    _, report, refusing, after = _verify(_project(tmp_path), RIGHT)

    assert report is not None and report.ok and (report.passed, report.failed) == (4, 0), report
    assert refusing == [] and "return -1 if x < 0 else 0" in after, "kept in the shadow"
