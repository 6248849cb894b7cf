"""The coder call: one step with its files and feedback in, edits out."""

from __future__ import annotations

from agent_core.agents.coder.answer import parse_coder_answer
from agent_core.agents.coder.prompt import SYSTEM
from agent_core.agents.coder.schema import CoderOutput
from agent_core.agents.render import render
from agent_core.llm.base import LLMClient


def answer_budget(files: str) -> int:
    """Tokens an answer may take: the shown code once over (about 3 characters a token) and some room."""
    return min(4096, 256 + len(files) // 3)


def coder_messages(template: str, *, task: str, files: str, failure: str, hypothesis: str,
                   tool_errors: str = "") -> list[dict[str, str]]:
    """The coder's chat messages for one step."""
    text = render(template, {"task": task, "files": files, "failure": failure, "hypothesis": hypothesis})
    if tool_errors:
        text += f"\nYour previous answer was not used:\n{tool_errors}\n"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]


async def write_candidates(
    llm: LLMClient, messages: list[dict[str, str]], *, n: int, temperature: float, max_tokens: int,
    default_path: str = "", fallback: bool = False,
) -> list[CoderOutput | None]:
    """Up to `n` answers from one request (None: an answer that held no edits); see LLMClient.texts.

    With `fallback` the configured fallback model answers.
    """
    answers = await llm.texts("coder", messages, n, temperature, max_tokens=max_tokens, fallback=fallback)
    return [parse_coder_answer(answer, default_path) for answer in answers]
