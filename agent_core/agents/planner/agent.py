"""The planner call: goal and context in, an unvalidated `PlannerOutput` out."""

from __future__ import annotations

from agent_core.agents.planner.prompt import SYSTEM
from agent_core.agents.planner.schema import PlannerOutput
from agent_core.agents.render import render
from agent_core.llm.base import LLMClient


async def propose_plan(
    llm: LLMClient, template: str, *, goal: str, context: str, rejected: str | None = None
) -> PlannerOutput:
    """Ask the planner model for steps; `rejected` explains why the previous plan was refused."""
    text = render(template, {"goal": goal, "context": context})
    if rejected:
        text += f"\nYour previous plan was rejected: {rejected}\nReturn a corrected plan.\n"
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]
    return await llm.structured("planner", messages, PlannerOutput)
