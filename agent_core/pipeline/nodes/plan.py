"""The plan node: a textual pre-plan for "fix the failing tests", else the planner model's validated plan."""

from __future__ import annotations

from agent_core.agents.planner.agent import propose_plan
from agent_core.agents.planner.validation import PlanError, textual_preplan, validate_plan
from agent_core.agents.reflector.signatures import failure_text
from agent_core.pipeline.context import layout
from agent_core.pipeline.deps import RunDeps
from agent_core.pipeline.goal import editor_pointer, target_text
from agent_core.pipeline.recall import planner_hints
from agent_core.pipeline.state import RunState


def _goal_context(state: RunState, deps: RunDeps) -> str:
    parts = [layout(deps.shadow)]
    if deps.request.target_file:
        parts.append(f"The request is about {deps.request.target_file}.")
    report = state.get("baseline")
    if report and not report.ok:
        parts.append("Failing tests now:\n" + failure_text(report, limit=1500))
    hints = planner_hints(deps, state["goal"])
    if hints:
        parts.append(hints)
    return "\n\n".join(parts)


async def llm_plan(state: RunState, deps: RunDeps, extra: str = "") -> RunState:
    context = _goal_context(state, deps) + (f"\n\n{extra}" if extra else "")
    rejected: str | None = None
    for _attempt in range(2):  # a plan that fails validation is re-requested once, with the error
        proposal = await propose_plan(
            deps.llm, deps.prompts["planner"], goal=state["goal"], context=context, rejected=rejected
        )
        try:
            plan = validate_plan(proposal)
        except PlanError as exc:
            rejected = str(exc)
            deps.journal.write("plan", plan=proposal.model_dump(mode="json"), error=rejected)
            continue
        deps.journal.write("plan", plan=plan.model_dump(mode="json"), source="llm")
        return RunState(plan=plan, plan_source="llm", fresh_plan=True)
    return RunState(status="error", error=rejected)


async def plan(state: RunState, deps: RunDeps) -> RunState:
    """A textual pre-plan for 'fix the failing tests', else the planner model."""
    deps.phase("planning", "planning", 15)
    report = state.get("baseline")
    pointer = editor_pointer(deps.request, target_text(deps.request, deps.shadow))
    quick = textual_preplan(deps.request.goal, report, pointer) if state.get("kind") == "fix" else None
    if quick is not None:
        deps.journal.write("plan", plan=quick.model_dump(mode="json"), source="textual")
        return RunState(plan=quick, plan_source="textual", fresh_plan=True)
    return await llm_plan(state, deps)
