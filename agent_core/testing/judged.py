"""One judged test run: what judges the run put back around it, the run, its verdict against the baseline.

Every test run that can decide whether a change is a fix goes through
`judged_run`, in this order:

1. `before` puts the files that judge a run (the tests, the test
   configuration, a task's goal tests) back as the caller found them, and
   names each one that differed;
2. the tests run once (`SuiteRun`: the sandbox, the command, the run's and
   each test's time bound);
3. `after` puts them back again and names each one the code under test
   changed while the tests ran;
4. with a baseline, the report is judged against it (`verdict.judge`, the one
   rule of a verified fix), and a run during which the code changed what
   judges it verifies nothing (`verdict.distrust`).

The callers differ only in what they protect and how they say so: a guard is
any function that restores the protected files and returns the paths it
restored (the pipeline journals each one; a patch check refuses the verdict;
a one-line candidate edits no protected file and passes none). Without a
baseline the report is returned as the tests gave it.

A candidate's whole-suite run takes its time bounds from bounds.py
(`verify_bounds`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from agent_core.models import TestReport
from agent_core.sandbox.base import Sandbox
from agent_core.testing.runner import run_tests
from agent_core.testing.verdict import CHANGED_DURING_RUN, distrust, judge

Guard = Callable[[], Sequence[str]]  # puts the protected files back; the paths that differed


class RunTests(Protocol):
    """The test runner's signature (`runner.run_tests`; a run's dependencies may hold another one)."""

    def __call__(self, sandbox: Sandbox, workspace: Path, test_command: str, timeout_s: float | None, *,
                 select: Sequence[str], test_timeout_s: float | None, paced: bool,
                 stop_after: int = 0) -> Awaitable[TestReport]: ...


@dataclass(frozen=True)
class SuiteRun:
    """One run of the project's tests: where, with which command, and its time bounds."""

    sandbox: Sandbox
    root: Path
    command: str
    timeout_s: float  # the whole run's bound
    test_timeout_s: float | None = None  # each test's bound (`runner.per_test_bound`, `bounds.verify_bounds`)
    select: Sequence[str] = ()  # node ids: only these run, and only they are judged
    paced: bool = False  # the per-test bound is derived, a cap under which it follows the passing tests
    stop_after: int = 0  # > 0: the run ends after that many failed tests (it only has to say whether all pass)
    runner: RunTests = run_tests


@dataclass
class JudgedRun:
    """What one judged run found."""

    report: TestReport  # judged against the baseline (the tests' own report without one)
    raw: TestReport  # the report as the tests gave it
    undone: list[str] = field(default_factory=list)  # what `before` put back
    changed: list[str] = field(default_factory=list)  # what the code under test changed during the run (undone)


async def judged_run(run: SuiteRun, baseline: TestReport | None, *, before: Guard | None = None,
                     after: Guard | None = None) -> JudgedRun:
    """Run the tests with the protected files put back around them, and judge the report (module docstring)."""
    undone = list(before()) if before is not None else []
    raw = await run.runner(run.sandbox, run.root, run.command, run.timeout_s, select=list(run.select),
                           test_timeout_s=run.test_timeout_s, paced=run.paced, stop_after=run.stop_after)
    changed = list(after()) if after is not None else []
    if baseline is None:
        return JudgedRun(raw, raw, undone, changed)
    report = judge(raw.model_copy(deep=True), baseline, run.select)
    if changed:  # a test file the run had not collected yet may have judged this very run
        distrust(report, CHANGED_DURING_RUN)
    return JudgedRun(report, raw, undone, changed)
