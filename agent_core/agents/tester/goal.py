"""The tester in the loop: tests for a task's goal, written before the change (seed 002).

One structured call: the goal, the code it is about and how the project's
tests import it in; the answer is `TesterOutput` (the same schema as
generate-tests). The prompt asks for tests that fail on the code as it is
and pass once the goal is met; `pipeline/goal_tests.py` checks exactly that.
"""

from __future__ import annotations

from agent_core.agents.render import render
from agent_core.agents.tester.schema import GeneratedTest, TesterOutput
from agent_core.llm.base import LLMClient

SYSTEM = "You write small, correct pytest tests that specify a change before it is made. Answer with JSON only."

TEMPLATE = """The developer asked for this change; it is NOT made yet:
{goal}

The code as it is now:
{sources}

How the project's modules are imported:
{imports}
{example}
Write 1 to 3 short pytest test functions that check the goal is met. They must FAIL on the code as it is
now and PASS once the change is made. Rules:
- each test is one function named test_<something>; "code" holds its imports, then the function
- import the project's modules exactly as shown above; call the new or changed behaviour directly
- assert exact values the goal promises; no network, no files outside tmp_path
Answer as JSON: {"tests": [{"name": "test_...", "code": "...", "kind": "pytest", "target": "...", "rationale": "..."}]}
"""


async def write_goal_tests(
    llm: LLMClient, *, goal: str, sources: str, imports: str, example: str = "",
) -> list[GeneratedTest]:
    """The tester's tests for `goal` (unchecked: the caller compiles and runs them)."""
    shown = f"\nAn existing test of the project, for its style:\n{example}\n" if example else ""
    text = render(TEMPLATE, {"goal": goal, "sources": sources, "imports": imports, "example": shown})
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]
    answer = await llm.structured("tester", messages, TesterOutput)
    return answer.tests
