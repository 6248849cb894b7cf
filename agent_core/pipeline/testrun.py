"""The one way the pipeline runs the project's tests on the shadow.

Every run that can decide a verdict (the test node's, and a sampled
candidate's failing-tests and whole-suite runs) goes through `run_checked`,
a judged run (testing/judged.py) with the pipeline's guards: the files that
judge a run are put back as the run found them before and after it, each
change journalled (pipeline/protected_tests.py), and each test gets the
per-test time bound derived from the baseline (testing/runner.py
`per_test_bound`), so a hang costs seconds and a candidate cannot rig its own
verification; in a fix run the report is judged against the baseline
(testing/verdict.py: the baseline's failing tests must pass, not skip or
vanish), and a run during which the code under test changed a test file or
the test configuration verifies nothing. The goal's generated tests are
kept as written (pipeline/protected_tests.py), and a fix of another tool's
diagnostic is re-checked with that tool (pipeline/toolcheck.py): its
remaining findings join the report as failures.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_core.events import TestReportEvent
from agent_core.models import TestReport
from agent_core.pipeline.deps import RunDeps
from agent_core.pipeline.protected_tests import guard_verification, restore_goal_tests, tests_protected
from agent_core.pipeline.timebudget import check_time
from agent_core.pipeline.toolcheck import recheck
from agent_core.testing.judged import SuiteRun, judged_run
from agent_core.testing.linters import is_tool_nodeid
from agent_core.testing.runner import per_test_bound


async def run_checked(
    deps: RunDeps, baseline: TestReport | None, *, select: Sequence[str] = (), timeout_s: float | None = None,
) -> tuple[TestReport, list[str]]:
    """(report, refused-edit lines): the tests run with the project's own test setup restored around them."""
    s = deps.settings
    check_time(deps)  # no verdict run starts once the run's time budget is spent (TimeBudgetSpent)
    select = [node for node in select if not is_tool_nodeid(node)]  # a tool's finding is re-checked below
    suite = SuiteRun(deps.sandbox, deps.shadow.root, s.test_command, timeout_s or s.sandbox.timeout_s,
                     per_test_bound(baseline, s.sandbox.test_timeout_s, s.sandbox.timeout_s), select,
                     paced=not s.sandbox.test_timeout_s, runner=deps.run_tests)  # paced: a derived bound
    run = await judged_run(  # judged only where the tests are the specification (testing/judged.py)
        suite, baseline if tests_protected(deps.request) else None,
        before=lambda: guard_verification(deps, "since the last test run") + restore_goal_tests(deps),
        after=lambda: guard_verification(deps, "by the code during the test run"))
    undone = run.undone + run.changed + restore_goal_tests(deps)
    return await recheck(deps, run.report), undone


async def run_and_report(deps: RunDeps, baseline: TestReport | None) -> tuple[TestReport, list[str]]:
    """`run_checked` on the whole suite, its report journaled and shown to the front end (baseline and test nodes)."""
    report, undone = await run_checked(deps, baseline)
    deps.journal.write("test_report", report=report.model_dump(mode="json"))
    deps.hooks.emit(TestReportEvent(run_id=deps.run_id, report=report))
    return report, undone
