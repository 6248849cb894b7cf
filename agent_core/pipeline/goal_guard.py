"""Keeping the goal's tests as the tester wrote them: the files that judge a task run stay out of the coder's reach.

`pipeline/goal_tests.py` records the kept tests in `deps.extra["goal_tests"]`
(path -> text); `run_checked` calls `restore_goal_tests` around every verdict
run, so a candidate that edits them is undone and told why, as in a fix run's
`guard_verification`.
"""

from __future__ import annotations

from agent_core.pipeline.deps import RunDeps
from agent_core.workspace.shadow import write_exact


def write_shadow_file(deps: RunDeps, rel: str, text: str | None) -> None:
    """Write (or, with None, remove) `rel` in the shadow as a change of this run."""
    deps.shadow.remember(rel)
    target = deps.shadow.resolve(rel)
    if text is None:
        target.unlink(missing_ok=True)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    write_exact(target, text)


def restore_goal_tests(deps: RunDeps) -> list[str]:
    """Put the goal tests back as written; one refused-edit line per file that differed."""
    notes = []
    for rel, text in (deps.extra.get("goal_tests") or {}).items():
        if deps.shadow.current(rel) != text:
            write_shadow_file(deps, rel, text)
            why = "the goal's tests judge this run; undone"
            deps.journal.write("tool_call", tool="guard_goal_tests", args={"path": rel}, result=why, ok=False)
            notes.append(f"- {rel}: {why}")
    return notes
