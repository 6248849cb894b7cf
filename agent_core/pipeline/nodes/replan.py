"""The replan node: the same failure came back twice, so the planner is asked for a different plan."""

from __future__ import annotations

from agent_core.agents.reflector.signatures import failure_text
from agent_core.pipeline.deps import RunDeps
from agent_core.pipeline.nodes.plan import llm_plan
from agent_core.pipeline.state import RunState


def _replan_context(state: RunState) -> str:
    """The failed plan, the failing output, the last reflection and unapplied edits (seeds 001 and 003)."""
    report = state["report"]
    assert report is not None  # a replan follows a failing test run
    old = state["plan"]
    assert old is not None  # a replan follows a plan that was tried
    lines = [
        f"The previous plan did not work; the same failure repeated twice in a row.\nFailed plan "
        f"(approach: {old.approach or '-'}):"
    ]
    lines += [f"- {s.id}: {s.description} (files: {', '.join(s.files) or '-'})" for s in old.subtasks]
    lines += ["Failing test output:", failure_text(report, limit=1200)]
    r = state.get("reflection")
    if r:
        where = f" in {r['file']}" if r.get("file") else ""
        lines.append(
            f"Last analysis ({r.get('confidence')} confidence): {r.get('hypothesis')}"
            f"\nSuggested change{where}: {r.get('change') or '-'}"
        )
    if state.get("tool_errors"):
        lines.append("Edits that could not be applied:\n" + "\n".join(state["tool_errors"]))
    lines.append("Propose a different approach.")
    return "\n".join(lines)


async def replan(state: RunState, deps: RunDeps) -> RunState:
    """The same failure came back twice: ask for a different plan."""
    deps.phase(
        "replanning",
        f"replanning ({state.get('revisions', 0) + 1}/{deps.settings.max_revisions})",
        deps.progress(state.get("iteration", 0), 0),
    )
    out = await llm_plan(state, deps, _replan_context(state))
    out.update(RunState(revisions=state.get("revisions", 0) + 1, reflection=state.get("reflection")))
    return out
