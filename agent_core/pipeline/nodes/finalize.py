"""The finalize node: the run's status from the last sandboxed test report; a verified outcome goes to memory."""

from __future__ import annotations

from agent_core.pipeline.deps import RunDeps
from agent_core.pipeline.recall import remember_outcome
from agent_core.pipeline.state import RunState
from agent_core.workspace.changeset import compute_change_set


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
    await remember_outcome(state, deps, status, compute_change_set(deps.shadow))
    return RunState(status=status)
