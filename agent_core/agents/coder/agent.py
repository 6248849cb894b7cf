"""The coder call: one step with its files and feedback in, edits out."""

from __future__ import annotations

from agent_core.agents.coder.answer import parse_coder_answer
from agent_core.agents.coder.prompt import SYSTEM
from agent_core.agents.coder.schema import CoderOutput
from agent_core.agents.render import render
from agent_core.llm.base import LLMClient, StructuredOutputError


def answer_budget(files: str) -> int:
    """Tokens an answer may take: the shown code once over (about 3 characters a token) and some room."""
    return min(4096, 256 + len(files) // 3)


async def write_candidates(
    llm: LLMClient, template: str, *, task: str, files: str, failure: str, hypothesis: str, tool_errors: str = "",
    temperatures: list[float], default_path: str = "", fallback: bool = False,
) -> list[CoderOutput | None]:
    """Several answers for one step, one per temperature (None: an answer that held no edits).

    With `fallback` the configured fallback model answers (LLMClient.texts).
    """
    text = render(template, {"task": task, "files": files, "failure": failure, "hypothesis": hypothesis})
    if tool_errors:
        text += f"\nYour previous answer was not used:\n{tool_errors}\n"
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]
    answers = await llm.texts("coder", messages, temperatures, max_tokens=answer_budget(files), fallback=fallback)
    return [parse_coder_answer(answer, default_path) for answer in answers]


async def write_edits(
    llm: LLMClient, template: str, *, task: str, files: str, failure: str, hypothesis: str, tool_errors: str = "",
    temperature: float | None = None, default_path: str = "",
) -> CoderOutput:
    """Ask the coder model for the edits of one step (`default_path`: the file of a block with no header)."""
    text = render(template, {"task": task, "files": files, "failure": failure, "hypothesis": hypothesis})
    if tool_errors:
        text += f"\nYour previous answer was not used:\n{tool_errors}\n"
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]
    answer = await llm.text("coder", messages, temperature=temperature, max_tokens=answer_budget(files))
    output = parse_coder_answer(answer, default_path)
    if output is None:
        raise StructuredOutputError("coder: the answer held no ```python block and no JSON edits")
    return output
