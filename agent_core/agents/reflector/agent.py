"""The reflector call: a classified failure in, a specific hypothesis out."""

from __future__ import annotations

from agent_core.agents.reflector.prompt import SYSTEM
from agent_core.agents.reflector.schema import Reflection
from agent_core.agents.render import render
from agent_core.llm.base import LLMClient


async def diagnose(
    llm: LLMClient, template: str, *, category: str, failure: str, diff: str, files: str, past: str
) -> Reflection:
    """Ask the reflector model why the tests fail and what to change."""
    values = {"category": category, "failure": failure, "diff": diff, "files": files, "past": past}
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": render(template, values)}]
    return await llm.structured("reflector", messages, Reflection)
