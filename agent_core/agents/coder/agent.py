"""The coder call: one step with its files and feedback in, search/replace edits out."""

from __future__ import annotations

from agent_core.agents.coder.prompt import SYSTEM
from agent_core.agents.coder.schema import CoderOutput
from agent_core.agents.render import render
from agent_core.llm.base import LLMClient


async def write_edits(
    llm: LLMClient, template: str, *, task: str, files: str, failure: str, hypothesis: str, tool_errors: str = "",
    temperature: float | None = None,
) -> CoderOutput:
    """Ask the coder model for the edits of one step."""
    text = render(template, {"task": task, "files": files, "failure": failure, "hypothesis": hypothesis})
    if tool_errors:
        text += f"\nYour previous edits could not be applied:\n{tool_errors}\n"
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]
    return await llm.structured("coder", messages, CoderOutput, temperature=temperature)
