"""The test node: the project's tests in the sandbox on the shadow, judged against the baseline."""

from __future__ import annotations

from agent_core.agents.reflector.signatures import report_signature
from agent_core.events import TestReportEvent
from agent_core.models import TestReport
from agent_core.pipeline.attempts import keep_or_rewind
from agent_core.pipeline.deps import RunDeps
from agent_core.pipeline.protected_tests import guard_verification
from agent_core.pipeline.state import RunState, stored
from agent_core.pipeline.testrun import run_and_report
from agent_core.workspace.changeset import compute_change_set


def _reuse(state: RunState, deps: RunDeps) -> TestReport | None:
    """The whole suite's report the code node already ran on this very shadow (a verified candidate), if any."""
    report = state.get("checked")
    if report is None:
        return None
    deps.journal.write("test_report", report=report.model_dump(mode="json"), reused=True)
    deps.hooks.emit(TestReportEvent(run_id=deps.run_id, report=report))
    return report


async def test(state: RunState, deps: RunDeps) -> RunState:
    """Run the tests in the sandbox on the shadow workspace."""
    iteration = state.get("iteration", 0)
    deps.phase(
        "testing", f"testing (iteration {iteration + 1}/{deps.settings.max_iterations})", deps.progress(iteration, 0.55)
    )
    # A candidate the code node already verified on this very shadow is not run again, unless the files that
    # judge a run had to be put back since (then its report is not to be trusted).
    undone = guard_verification(deps, "since the last test run")
    report = None if undone else _reuse(state, deps)
    if report is None:
        report, more = await run_and_report(deps, state.get("baseline"))
        undone += more
    diff = compute_change_set(deps.shadow).unified_diff()
    out = RunState(report=stored(report), iteration=iteration + 1, checked=None, last_diff=diff)
    if undone:
        out["tool_errors"] = [*(state.get("tool_errors") or []), *undone]
    if not report.ok:
        out["signatures"] = [*(state.get("signatures") or []), report_signature(report)]
        out.update(keep_or_rewind(deps.shadow, state, report, diff))
    return out
