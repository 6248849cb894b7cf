"""The prompt asking a model to fill one hole, in the dialect its endpoint speaks (llm/fim.py).

- `tokens`: one raw completion prompt, `<prefix>{before}<suffix>{after}<middle>` with
  the model family's FIM tokens; the answer is the middle.
- `suffix`: the code before as the prompt and the code after as the endpoint's
  `suffix` parameter (the endpoint lays out the FIM prompt itself).
- `chat`: the code with a marker line where the hole is, asking for only the lines
  that go there, in a fenced block.

Every sample of a hole is sent the same prompt (only the temperature and the seed
differ), so a server that caches prompt prefixes reads it once. The failing
tests' code (`tests`, infill/tests_code.py) goes in front as other files of the
repository where the family has a layout for that (Qwen2.5-Coder's
`<|repo_name|>`/`<|file_sep|>`), or into the chat message; the same for every
hole, so it is a prefix the cache keeps across holes too. No test output is in
the prompt unless the caller passes `failure`: written as comments just above
the hole, a failing test's error made a small FIM model continue the comment, so
it goes at the very top of the code before (or in the chat message) instead.

A completion also stops where it starts writing the first line after the hole
(with its indentation): the model often goes on with the code that follows,
and samples.py would cut those lines anyway; the stop saves their tokens. With
the family's end tokens and the blank gap that makes four stops, the most an
OpenAI-style endpoint takes.
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
MIN_STOP_CHARS = 8  # the line after a hole is a stop when it is at least this long (stripped)
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


def _chat(hole: Hole, failure: str | None, tests: tuple[tuple[str, str], ...] = ()) -> list[dict[str, Any]]:
    code = f"{hole.before}{hole.indent}{HOLE_MARKER}\n{hole.after}"
    if hole.inline:  # the marker inside the line, its kept parts around it
        code = f"{hole.before}{HOLE_MARKER}{hole.after}"
        where = f"the line with {HOLE_MARKER}"
        missing = f"The brackets on {where} miss an argument (or item)" if hole.kind == "arg" else \
            f"The condition on {where} misses a clause"
        ask = f"{missing}. Write only the expression that goes at {HOLE_MARKER}, on one line (not the rest of it)."
    elif hole.is_slot:
        ask = (f"A line or two may be missing at {HOLE_MARKER} (a guard, a `continue`, a `return`, an "
               "assignment). Write the missing lines.")
    else:
        ask = (f"The code at {HOLE_MARKER} was:\n```python\n{hole.original}\n```\nand it is wrong. Write the corrected "
               "lines that replace it.")
    text = f"```python\n{code}```\n\n{ask}"
    for path, code in tests:
        text += f"\n\nA failing test, in {path}:\n```python\n{code.rstrip()}\n```"
    if failure:
        text += f"\n\nThe failing test says:\n```\n{failure.strip()[:FAILURE_CHARS]}\n```"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]


def _following(hole: Hole) -> tuple[str, ...]:
    """A stop at the first non-blank line after the hole, as it is written there (none when it is too short to
    be told from code the hole may need: a lone `)` or `else:`)."""
    line = next((line for line in hole.after.split("\n") if line.strip()), "")
    return ("\n" + line,) if len(line.strip()) >= MIN_STOP_CHARS else ()


def _stops(hole: Hole) -> tuple[str, ...]:
    """The stops beside the family's end tokens: a blank gap and the line after the hole; for a hole inside a
    line, the line's end (its answer is one line)."""
    return ("\n",) if hole.inline else (*EXTRA_STOPS, *_following(hole))


def build_prompt(hole: Hole, spec: FimSpec, failure: str | None = None,
                 tests: tuple[tuple[str, str], ...] = ()) -> InfillPrompt:
    """The prompt of every sample of `hole` for an endpoint speaking `spec`; `tests`: the failing tests' code,
    (path, code) per file; `failure` (off by default) adds a failing test's output (see the module docstring)."""
    if spec.dialect == "chat":
        return InfillPrompt("chat", messages=_chat(hole, failure, tests))
    before = (_failure_comment(failure) if failure else "") + hole.before
    if spec.dialect == "suffix":
        return InfillPrompt("suffix", prompt=before, suffix=hole.after, stop=_stops(hole))
    tokens = spec.tokens
    if tokens is None:
        raise ValueError("the tokens dialect needs the model family's FIM tokens")
    return InfillPrompt("tokens", prompt=tokens.prompt(before, hole.after, hole.path, tests),
                        stop=(*tokens.stops[:2], *_stops(hole)))


def answer_code(prompt: InfillPrompt, answer: str) -> str:
    """The code of a sample's answer: a chat answer's first fenced block (its whole text without one), a
    completion as it is."""
    if prompt.dialect != "chat":
        return answer
    match = _FENCE.search(answer)
    return match.group(1) if match else answer
