"""The coder call: one step with its files and feedback in, edits out."""

from __future__ import annotations

from agent_core.agents.coder.answer import parse_coder_answer
from agent_core.agents.coder.prompt import SYSTEM
from agent_core.agents.coder.schema import CoderOutput
from agent_core.agents.render import render
from agent_core.llm.base import LLMClient

ANSWER_MAX_TOKENS = 4096


def answer_budget(files: str, rewrite: str = "") -> int:
    """Tokens an answer may take (about 3 characters a token).

    Without `rewrite`: the shown code once over and some room. With it (the functions of a big
    file shown whole to be rewritten, pipeline/focus.py) the answer is those functions, so the
    budget is twice their size and some room, however much of the file's outline and the other
    files the prompt shows. A small model that falls into repeating itself streams until the
    budget: with the files' budget one coder answer on toolz's 1,000-line itertoolz.py (a
    10-line function to rewrite) was still streaming after 600 s on this 2-core machine.
    """
    shown = min(ANSWER_MAX_TOKENS, 256 + len(files) // 3)
    return min(shown, 384 + 2 * len(rewrite) // 3) if rewrite else shown


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
