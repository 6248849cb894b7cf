"""What a run takes from the project's memory and what it leaves there.

- The planner gets recalled patterns as hints, labelled as such: past verified
  fixes of similar tasks in this project, to weigh against this task's
  failures, never a plan to copy (`planner_hints`).
- Only a verified run stores a pattern, with its minimal verified diff: each
  part of the change (a hunk, or a created or deleted file) is left out in
  turn and kept out when the tests still pass without it, so what an attempt
  added on the way (`+import time`) is not remembered as the fix
  (`remember_outcome`). An unfixed run stores no pattern: its failing test
  reports are already in the failure memory, unresolved, as failures to avoid.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent_core.models import ChangeSet, FileChange, TestReport
from agent_core.pipeline.deps import RunDeps
from agent_core.pipeline.state import RunState
from agent_core.pipeline.timebudget import time_is_up
from agent_core.workspace.changeset import apply_text_edits, file_change
from agent_core.workspace.shadow import write_exact
from agent_core.workspace.testfiles import restore_protected

HINT_DIFF_CHARS = 800
MAX_PARTS = 8  # a change with more parts is stored whole rather than re-tested part by part
MIN_TEST_BOUND_S = 5.0  # each re-test is bounded by 3x the verifying run's duration, at least this


def planner_hints(deps: RunDeps, goal: str, limit: int = 2) -> str:
    """Recalled verified patterns of this project as a labelled hint paragraph, or ''."""
    found = [p for p in deps.memory.similar_patterns(goal, limit=limit) if p.outcome in ("fixed", "ok")]
    if not found:
        return ""
    lines = [("Hints from this project's memory (similar past tasks whose change the tests verified). "
              "A hint, not the plan: plan from this task's goal and failing tests, and use a hint only where it fits.")]
    for p in found:
        lines.append(f"- past task: {p.goal}\n  its plan: {p.plan}")
        if p.diff:
            lines.append("  its verified change:\n" + "\n".join("    " + line for line in
                                                               p.diff[:HINT_DIFF_CHARS].splitlines()))
    return "\n".join(lines)


@dataclass(frozen=True)
class _Part:
    """One separable part of a change: edit `index` of file `file`, or a whole created/deleted file (index 0)."""

    file: int
    index: int


def _parts(change_set: ChangeSet) -> list[_Part]:
    return [_Part(f, i) for f, c in enumerate(change_set.changes)
            for i in range(len(c.edits) if c.kind == "modify" else 1)]


def _text(change: FileChange, file: int, kept: set[_Part]) -> str | None:
    """The file's text with only the `kept` parts of its change applied (None: absent)."""
    if change.kind != "modify":
        return change.new if _Part(file, 0) in kept else change.original
    edits = [e for i, e in enumerate(change.edits) if _Part(file, i) in kept]
    return apply_text_edits(change.original or "", edits)


def _write(deps: RunDeps, change_set: ChangeSet, kept: set[_Part]) -> None:
    for file, change in enumerate(change_set.changes):
        target = deps.shadow.resolve(change.path)
        text = _text(change, file, kept)
        if text is None:
            target.unlink(missing_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            write_exact(target, text)


def _diff(change_set: ChangeSet, kept: set[_Part]) -> str:
    changes = [file_change(c.path, c.original, _text(c, f, kept)) for f, c in enumerate(change_set.changes)]
    return ChangeSet(changes=[c for c in changes if c is not None]).unified_diff()


async def minimal_verified_diff(deps: RunDeps, change_set: ChangeSet, verified: TestReport) -> str:
    """The verified change without the parts the tests pass without (each left out and re-tested once)."""
    parts = _parts(change_set)
    if len(parts) < 2 or len(parts) > MAX_PARTS:
        return change_set.unified_diff()
    bound = min(deps.settings.sandbox.timeout_s, max(MIN_TEST_BOUND_S, 3 * verified.duration_s))
    kept = set(parts)
    try:
        for part in parts:
            if time_is_up(deps):  # the run's time budget: no test run starts after it; the rest is kept
                break
            trial = kept - {part}
            _write(deps, change_set, trial)
            report = await deps.run_tests(deps.sandbox, deps.shadow.root, deps.settings.test_command, bound)
            if report.ok and trial:
                kept = trial
    finally:
        _write(deps, change_set, set(parts))  # the shadow holds the whole verified change again
        restore_protected(deps.shadow.root, deps.shadow.verification)
    deps.journal.write("memory_minimize", parts=len(parts), kept=len(kept))
    return _diff(change_set, kept)


async def remember_outcome(state: RunState, deps: RunDeps, status: str, change_set: ChangeSet) -> None:
    """A verified run's pattern (minimal verified diff) and resolved failures; nothing more for an unfixed one."""
    if status not in ("fixed", "ok") or not deps.settings.memory.enabled:
        return
    verified = state["report"]
    assert verified is not None  # a fixed run's last report passed
    diff = await minimal_verified_diff(deps, change_set, verified)
    plan = state.get("plan")
    plan_text = "; ".join(s.description for s in plan.subtasks) if plan else ""
    deps.memory.record_pattern(state.get("kind", "fix"), state["goal"], plan_text, change_set.files, status, diff)
    if state.get("recorded"):
        deps.memory.resolve_failures(sorted(set(state["recorded"])), diff)
