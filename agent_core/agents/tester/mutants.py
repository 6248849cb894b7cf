"""The tester's follow-up call: tests that notice the changes to the code (mutants) no test notices."""

from __future__ import annotations

from agent_core.agents.render import render
from agent_core.agents.tester.agent import _clip, _messages
from agent_core.agents.tester.schema import GeneratedTest, TesterOutput
from agent_core.llm.base import LLMClient

KILL_TEMPLATE = """Each change below to the code of {module} goes unnoticed by every test:
the tests pass on the original code and still pass on the changed code.
For each change, write a test that FAILS on the changed code and PASSES on the original.

Import what you test with exactly:
{import_line}

Code under test:
```python
{source}
```

Changes that no test notices:
{changes}

Write one short test function per change, named test_<something>. Call the code with inputs that reach the
changed line, and assert the exact value the ORIGINAL code returns.
"code" holds the test's imports (including the import line above) and then the function.
Answer as JSON: {"tests": [{"name": "test_...", "code": "...", "kind": "pytest", "target": "<function tested>", "rationale": "..."}]}
"""


async def write_killing_tests(
    llm: LLMClient, module: str, import_line: str, source: str, changes: list[str]
) -> list[GeneratedTest]:
    """Ask for tests that fail on each of the described mutants and pass on the original code."""
    text = render(
        KILL_TEMPLATE,
        {
            "module": module,
            "import_line": import_line,
            "source": _clip(source),
            "changes": "\n".join(f"- {c}" for c in changes),
        },
    )
    answer = await llm.structured("tester", _messages(text), TesterOutput)
    return answer.tests
