"""The gate node: keep the change to code, then scan it for unsafe calls and ask, block or allow.

First the change is held to the source tree's Python (workspace/codefiles.py):
a file that is not (a dotfile, CI, editor tasks, config, a new file at an odd
place) is put back in the shadow as it was and reported as dropped, unless
the user's own goal (`request.goal`, never the model's words) names it; then
the user is asked, shown its diff (`hooks.approve` with a `non-code`
violation: the editor's Approve/Reject, the CLI's `--allow-non-code`), and
`safety = "block"` drops it without asking. An approval holds for that exact
text only. Anything dropped sends the candidate back to the test node (the
suite must pass without it). A change that rigs the verification (patches
builtins, the test framework, skips) is undone and refused (safety/rigging.py).
Then the safety scan (safety/scan.py) runs on what is left, and what it could not
check is shown as a note.
"""

from __future__ import annotations

from agent_core.events import SafetyViolation
from agent_core.models import FileChange
from agent_core.pipeline.deps import RunDeps
from agent_core.pipeline.protected_tests import write_shadow_file
from agent_core.pipeline.safety.rigging import refuse_rigging
from agent_core.pipeline.safety.scan import check_change_set
from agent_core.pipeline.state import Dropped, GateOutcome, RunState, Violation
from agent_core.workspace.changeset import compute_change_set
from agent_core.workspace.codefiles import named_in_goal, not_code_reason

DIFF_CHARS = 1500  # of each file's diff in the question to the user


def _question(change: FileChange, reason: str) -> SafetyViolation:
    diff = change.unified_diff()
    shown = diff if len(diff) <= DIFF_CHARS else diff[:DIFF_CHARS] + "\n[... diff cut]"
    return SafetyViolation(file=change.path, line=1, rule="non-code",
                           message=f"changes {change.path} ({reason}), which the goal names:\n{shown}")


async def _approved(deps: RunDeps, asked: list[tuple[FileChange, str]], before: dict[str, str | None]) -> set[str]:
    """The paths the user lets through: approved before with this very text, or now."""
    fresh = [(c, r) for c, r in asked if c.path not in before or before[c.path] != c.new]
    ok = {c.path for c, _ in asked} - {c.path for c, _ in fresh}
    if fresh and deps.settings.safety != "block" and await deps.hooks.approve([_question(c, r) for c, r in fresh]):
        ok |= {c.path for c, _ in fresh}
    return ok


async def hold_to_code(state: RunState, deps: RunDeps) -> tuple[list[Dropped], dict[str, str | None]]:
    """Put back every non-code file the user did not approve; (the files dropped now, the approved texts)."""
    workspace = deps.request.workspace.resolve()
    goal = state.get("goal_tests")
    goal_tests = goal["path"] if goal else None  # the tester's own test file of the goal
    pending = [(c, reason) for c in compute_change_set(deps.shadow).changes
               if c.path != goal_tests and (reason := not_code_reason(workspace, c))]
    asked = [(c, r) for c, r in pending if named_in_goal(c.path, deps.request.goal)]
    last = state.get("gate")
    before = dict(last["approved_files"]) if last else {}
    ok = await _approved(deps, asked, before) if asked else set()
    approved = {c.path: c.new for c, _ in asked if c.path in ok}
    dropped: list[Dropped] = []
    for change, reason in pending:
        if change.path in ok:
            continue
        why = "the user did not approve it" if (change, reason) in asked else "the goal does not name it"
        write_shadow_file(deps, change.path, change.original)
        dropped.append(Dropped(path=change.path, reason=f"{reason}; {why}"))
    if dropped:
        deps.journal.write("dropped", files=dropped)
        listed = "; ".join(f"{d['path']} ({d['reason']})" for d in dropped)
        deps.notice(f"left out of the fix: {listed}", "warning")
    return dropped, approved


async def gate(state: RunState, deps: RunDeps) -> RunState:
    """Hold the change to code, scan it; ask, block or allow per settings.safety."""
    deps.phase("gate", "checking the change for unsafe code", deps.progress(state.get("iteration", 0), 0.45))
    dropped, approved_files = await hold_to_code(state, deps)
    out = refuse_rigging(state, deps)  # a change that patches what judges the tests (pipeline/safety/rigging.py)
    if dropped:
        known = {d["path"]: d for d in state.get("dropped") or []}
        out["dropped"] = list({**known, **{d["path"]: d for d in dropped}}.values())
        out["checked"] = None  # the candidate was tested with those files: test it again without them
    scan = check_change_set(compute_change_set(deps.shadow), str(deps.request.workspace.resolve()))
    if scan.unchecked:
        deps.notice("the safety gate could not check: " + "; ".join(scan.unchecked[:5]), "warning")
    violations = scan.violations
    approved = True
    if violations:
        mode = deps.settings.safety
        approved = mode == "allow" or (mode == "ask" and await deps.hooks.approve(violations))
    found = [Violation(file=v.file, line=v.line, rule=v.rule, message=v.message) for v in violations]
    deps.journal.write("gate", violations=found, approved=approved, unchecked=scan.unchecked)
    out["gate"] = GateOutcome(violations=found, approved=approved, unchecked=scan.unchecked,
                              approved_files=approved_files)
    if not approved:
        listed = "; ".join(f"{v.file}:{v.line} {v.message}" for v in violations)
        out.update(RunState(status="error", error=f"rejected by the safety gate: {listed}"))
    return out
