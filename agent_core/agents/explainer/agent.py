"""The explainer call: a verified diff and the failure it fixed in, one or two sentences out."""

from __future__ import annotations

from agent_core.agents.explainer.prompt import SYSTEM
from agent_core.agents.render import render
from agent_core.llm.base import LLMClient
from agent_core.models import Role

EXPLAIN_MAX_TOKENS = 120  # two sentences; a small model that rambles is cut short, not waited for
ROLE: Role = "reflector"  # the explainer borrows the reflector's model profile...
ACCOUNT = "explainer"  # ...and is accounted, journalled and headed under its own name


async def explain(llm: LLMClient, template: str, *, goal: str, failure: str, diff: str, tests: str) -> str:
    """The model's raw answer (the caller checks it and falls back to a template)."""
    values = {"goal": goal, "failure": failure, "diff": diff, "tests": tests}
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": render(template, values)}]
    return await llm.text(ROLE, messages, max_tokens=EXPLAIN_MAX_TOKENS, account=ACCOUNT)
