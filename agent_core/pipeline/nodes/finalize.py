"""The finalize node: the run's status from the last sandboxed test report; a verified outcome goes to memory."""

from __future__ import annotations

from agent_core.pipeline.deps import RunDeps
from agent_core.pipeline.recall import remember_outcome
from agent_core.pipeline.state import RunState
from agent_core.workspace.changeset import compute_change_set

# The tests that failed pass, and nothing the project would get changed: a flaky test, or state outside the
# project's copy (what the file tools refuse to write: workspace/tools.py). Not a fix to report.
NO_CHANGE = ("the tests passed, but with no change the project would get (a flaky test, or something outside "
             "the project's copy made them pass): not reported as a fix")


async def finalize(state: RunState, deps: RunDeps) -> RunState:
    """Decide the status from the last sandboxed test report; a verified outcome goes to memory (recall.py)."""
    deps.phase("finalizing", "finalizing", 97)
    if state.get("found_by") == "search":  # a verified single-edit fix: remembered like any verified change
        await remember_outcome(state, deps, state["status"], compute_change_set(deps.shadow))
        return RunState()
    if state.get("status"):
        return RunState()
    report = state.get("report")
    passed = bool(report and report.ok)
    if state.get("iteration", 0) == 0:
        return RunState(status="passed" if passed else "failed")  # nothing was attempted
    status = ("fixed" if state.get("kind") == "fix" else "ok") if passed else "unfixed"
    change = compute_change_set(deps.shadow)
    if status == "fixed" and not change.changes:
        deps.journal.write("no_change", reason=NO_CHANGE)
        deps.notice(NO_CHANGE, "warning")
        status = "unfixed"
    await remember_outcome(state, deps, status, change)
    return RunState(status=status)
