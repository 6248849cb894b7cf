"""The finalize node: the run's status from the last sandboxed test report; a verified outcome goes to memory.

A fix is reported only when it is one: the change set the project would get
is not empty, and the tests that failed at the baseline fail again on the
code as the run found it (one sandboxed run of those tests, the shadow's
files put back for it and restored after). A test that passes without the
change is flaky or stateful (it fails the first time it runs, then passes; a
hostile repository can ship one), and whatever the search or the coder
changed did not fix it: the run ends `unfixed`, with a warning and a journal
record saying why. So does a change that passes by swallowing the tests'
errors (safety/swallows.py: a `return` in a `finally:`, an `__exit__`
returning True, an added broad `except`), whoever made it; and a fix whose
change only adds an early `return` says so (`caveat`).
"""

from __future__ import annotations

from agent_core.models import TestReport
from agent_core.pipeline.checkpoint import restore_shadow, rewind_shadow, shadow_files
from agent_core.pipeline.deps import RunDeps
from agent_core.pipeline.recall import remember_outcome
from agent_core.pipeline.safety.swallows import early_return_note, failing_types, swallowing
from agent_core.pipeline.state import RunState
from agent_core.testing.linters import is_tool_nodeid
from agent_core.testing.runner import per_test_bound
from agent_core.workspace.changeset import compute_change_set

# The tests that failed pass, and nothing the project would get changed: a flaky test, or state outside the
# project's copy (what the file tools refuse to write: workspace/tools.py). Not a fix to report.
NO_CHANGE = ("the tests passed, but with no change the project would get (a flaky test, or something outside "
             "the project's copy made them pass): not reported as a fix")
NOT_REPRODUCED = ("the tests that failed pass without the change too (a flaky or stateful test): the change is not "
                  "reported as a fix")


async def finalize(state: RunState, deps: RunDeps) -> RunState:
    """Decide the status from the last sandboxed test report; a verified outcome goes to memory (recall.py)."""
    deps.phase("finalizing", "finalizing", 97)
    if state.get("found_by") in ("search", "infill"):  # a verified fix by the search (its own edit or the
        # model's fill of a hole): remembered like any verified change
        status, out = await _confirmed(state, deps, state["status"])
        await remember_outcome(state, deps, status, compute_change_set(deps.shadow))
        return out if status == state["status"] else RunState(**out, status=status, found_by=None)
    if state.get("status"):
        status, out = await _confirmed(state, deps, state["status"])  # a verifier's round the time budget ended
        return out if status == state["status"] else RunState(**out, status=status)
    report = state.get("report")
    passed = bool(report and report.ok)
    if state.get("iteration", 0) == 0:
        return RunState(status="passed" if passed else "failed")  # nothing was attempted
    status, out = await _confirmed(state, deps,
                                   ("fixed" if state.get("kind") == "fix" else "ok") if passed else "unfixed")
    await remember_outcome(state, deps, status, compute_change_set(deps.shadow))
    return RunState(**out, status=status)


async def _confirmed(state: RunState, deps: RunDeps, status: str) -> tuple[str, RunState]:
    """`status`, or `unfixed` for a `fixed` that changes nothing, swallows the tests' errors, or whose failing
    tests pass without it; with the state keys that say why (`refused`) or what to know (`caveat`)."""
    if status != "fixed":
        return status, RunState()
    why, out = None, RunState()
    changes = compute_change_set(deps.shadow)
    if not changes.changes:
        why, record = NO_CHANGE, "no_change"
    elif found := swallowing(changes, failing_types(state.get("baseline"))):
        why, record = f"the change is {found[0]}", "refused"
        out["refused"] = [*(state.get("refused") or []), why]
    elif not await _reproduces(state.get("baseline"), deps):
        why, record = NOT_REPRODUCED, "not_reproduced"
    if why is None:
        if caveat := early_return_note(changes):
            deps.journal.write("caveat", reason=caveat)
            deps.notice(caveat, "warning")
            out["caveat"] = caveat
        return status, out
    deps.journal.write(record, reason=why)
    deps.notice(why, "warning")
    return "unfixed", out


async def _reproduces(baseline: TestReport | None, deps: RunDeps) -> bool:
    """Whether the baseline's failing tests fail again on the files as the run found them."""
    failing = sorted({f.nodeid for f in baseline.failures if not is_tool_nodeid(f.nodeid)}) if baseline else []
    if not failing:
        return True
    shadow, s = deps.shadow, deps.settings
    now = shadow_files(shadow)
    try:
        rewind_shadow(shadow, {})  # every file the run touched as the run found it
        report = await deps.run_tests(deps.sandbox, shadow.root, s.test_command, s.sandbox.timeout_s,
                                      select=failing,
                                      test_timeout_s=per_test_bound(baseline, s.sandbox.test_timeout_s,
                                                                    s.sandbox.timeout_s),
                                      paced=not s.sandbox.test_timeout_s)
    finally:
        restore_shadow(shadow, now)
    deps.journal.write("reproduced", tests=len(failing), failed=not report.ok, duration_s=report.duration_s)
    return not report.ok

