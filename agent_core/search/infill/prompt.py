"""The prompt asking a model to fill one hole, in the dialect its endpoint speaks (llm/fim.py).

- `tokens`: one raw completion prompt, `<prefix>{before}<suffix>{after}<middle>` with
  the model family's FIM tokens; the answer is the middle.
- `suffix`: the code before as the prompt and the code after as the endpoint's
  `suffix` parameter (the endpoint lays out the FIM prompt itself).
- `chat`: the code with a marker line where the hole is, asking for only the lines
  that go there, in a fenced block.

Every sample of a hole is sent the same prompt (only the temperature and the seed
differ), so a server that caches prompt prefixes reads it once. No test output is
in the prompt unless the caller passes `failure`: written as comments just above
the hole, a failing test's error made a small FIM model continue the comment, so
it goes at the very top of the code before (or in the chat message) instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from agent_core.llm.fim import FimSpec
from agent_core.search.infill.holes import Hole

FAILURE_CHARS = 800
HOLE_MARKER = "<HOLE>"
EXTRA_STOPS = ("\n\n\n",)  # a blank gap ends a middle: the model went on to write another function
_FENCE = re.compile(r"```[a-zA-Z0-9_+-]*\n(.*?)(?:```|\Z)", re.DOTALL)

SYSTEM = (
    "You repair Python code. The user shows a function with one place marked " + HOLE_MARKER + ". Answer with only "
    "the code that belongs at " + HOLE_MARKER + " (complete lines, at the indentation of the code around it), in "
    "one ```python block, and nothing else: no explanation, no other lines of the function."
)


@dataclass(frozen=True)
class InfillPrompt:
    """What one sample sends: a raw `prompt` (with `suffix` for the suffix dialect), or chat `messages`."""

    dialect: str
    prompt: str = ""
    suffix: str | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)
    stop: tuple[str, ...] = ()


def _failure_comment(failure: str) -> str:
    text = failure.strip()[:FAILURE_CHARS]
    return "".join(f"# {line}".rstrip() + "\n" for line in ["The failing test says:", *text.splitlines()]) + "\n"


def _chat(hole: Hole, failure: str | None) -> list[dict[str, Any]]:
    code = f"{hole.before}{hole.indent}{HOLE_MARKER}\n{hole.after}"
    if hole.is_slot:
        ask = (f"A line or two may be missing at {HOLE_MARKER} (a guard, a `continue`, a `return`, an "
               "assignment). Write the missing lines.")
    else:
        ask = (f"The code at {HOLE_MARKER} was:\n```python\n{hole.original}\n```\nand it is wrong. Write the corrected "
               "lines that replace it.")
    text = f"```python\n{code}```\n\n{ask}"
    if failure:
        text += f"\n\nThe failing test says:\n```\n{failure.strip()[:FAILURE_CHARS]}\n```"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]


def build_prompt(hole: Hole, spec: FimSpec, failure: str | None = None) -> InfillPrompt:
    """The prompt of every sample of `hole` for an endpoint speaking `spec`; `failure` (off by default) adds a
    failing test's output (see the module docstring)."""
    if spec.dialect == "chat":
        return InfillPrompt("chat", messages=_chat(hole, failure))
    before = (_failure_comment(failure) if failure else "") + hole.before
    if spec.dialect == "suffix":
        return InfillPrompt("suffix", prompt=before, suffix=hole.after, stop=EXTRA_STOPS)
    tokens = spec.tokens
    if tokens is None:
        raise ValueError("the tokens dialect needs the model family's FIM tokens")
    return InfillPrompt("tokens", prompt=tokens.prompt(before, hole.after), stop=(*tokens.stops[:2], *EXTRA_STOPS))


def answer_code(prompt: InfillPrompt, answer: str) -> str:
    """The code of a sample's answer: a chat answer's first fenced block (its whole text without one), a
    completion as it is."""
    if prompt.dialect != "chat":
        return answer
    match = _FENCE.search(answer)
    return match.group(1) if match else answer
