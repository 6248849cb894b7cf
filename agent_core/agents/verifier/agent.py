"""The verifier call: one plain-text request on the reflector's model, read as an `Evaluation`.

It borrows the reflector's model profile and is accounted, journalled and
headed as `verifier` (like the explainer); the answer is read with the
extract-and-validate of `llm/structured.py`, so a model that wraps its JSON
in prose or a fence is still understood.
"""

from __future__ import annotations

from agent_core.agents.render import render
from agent_core.agents.verifier.prompt import SYSTEM
from agent_core.agents.verifier.schema import Evaluation
from agent_core.llm.base import LLMClient
from agent_core.llm.structured import parse_answer
from agent_core.models import Role

VERIFY_MAX_TOKENS = 300
ROLE: Role = "reflector"
ACCOUNT = "verifier"


class UnreadableEvaluation(ValueError):
    """The verifier's answer is not an Evaluation (the message says why)."""


async def evaluate(llm: LLMClient, template: str, *, goal: str, diff: str, tests: str, threshold: float) -> Evaluation:
    """The model's evaluation of `diff` against `goal`; raise UnreadableEvaluation or LLMError."""
    values = {"goal": goal, "diff": diff, "tests": tests, "threshold": f"{threshold:g}"}
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": render(template, values)}]
    answer = await llm.text(ROLE, messages, max_tokens=VERIFY_MAX_TOKENS, account=ACCOUNT)
    parsed, problem = parse_answer(answer, None, Evaluation)
    if not isinstance(parsed, Evaluation):
        raise UnreadableEvaluation(problem)
    return parsed
