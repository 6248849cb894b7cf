"""The baseline node: the tests run once before any change; their failing output guides planner and coder."""

from __future__ import annotations

from agent_core.pipeline.attempts import first_state
from agent_core.pipeline.deps import RunDeps
from agent_core.pipeline.nodes.reflect import record_failures
from agent_core.pipeline.protected_tests import protect_collected
from agent_core.pipeline.routers import no_tests_yet
from agent_core.pipeline.state import RunState, stored
from agent_core.pipeline.testrun import run_and_report
from agent_core.testing.baseline_check import broken_baseline


async def baseline(state: RunState, deps: RunDeps) -> RunState:
    """Run the tests once before any change: the failing output guides planner and coder."""
    deps.phase("testing", "running the tests before any change", 3)
    report, _ = await run_and_report(deps, None)  # nothing changed yet: nothing to put back
    protect_collected(deps, report)  # what the project's pytest collects is a test file (protected_tests.py)
    broken = broken_baseline(report, deps.shadow.root, deps.settings.test_command)
    goal_tests_judge = deps.settings.verify.goal_tests and bool((deps.request.goal or "").strip())
    if broken and not (
        goal_tests_judge and no_tests_yet(report)
    ):  # specify.py  # an environment problem, not failing tests: stop before any model call
        deps.journal.write("baseline_broken", error=broken)
        return RunState(baseline=stored(report), report=stored(report), status="error", error=broken,
                        error_kind="config")
    recorded = [] if report.ok else record_failures(deps, report)
    return RunState(baseline=stored(report), report=stored(report), recorded=recorded, best=first_state(report))
