"""The tester calls: write tests for a target, repair one test, judge one failure."""

from __future__ import annotations

from dataclasses import dataclass

from agent_core.agents.render import render
from agent_core.agents.tester.prompt import JUDGE_TEMPLATE, REPAIR_TEMPLATE, SYSTEM
from agent_core.agents.tester.schema import GeneratedTest, TesterOutput, Verdict
from agent_core.llm.base import LLMClient

MAX_SOURCE_CHARS = 6000


@dataclass
class TargetContext:
    """What the model sees about one target."""

    name: str  # qualname, e.g. "Stack.push"
    module: str  # import path of the module, e.g. "shop.cart"
    import_line: str  # e.g. "from shop.cart import Cart"
    source: str  # the definition, decorators included
    docstring: str | None
    imports: list[str]  # the module's import statements
    existing: list[str]  # names of existing tests that already reference the target


def _messages(text: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]


def _clip(text: str, limit: int = MAX_SOURCE_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + "\n# ... (truncated)"


async def write_tests(
    llm: LLMClient, template: str, target: TargetContext, temperature: float | None = None
) -> list[GeneratedTest]:
    """Ask for new tests of one target (`temperature`: the role's own unless given)."""
    existing = ""
    if target.existing:
        existing = "Existing tests already cover: " + ", ".join(target.existing[:10]) + ". Test other behaviour.\n"
    text = render(
        template,
        {
            "module": target.module,
            "import_line": target.import_line,
            "imports": "\n".join(target.imports) or "(nothing)",
            "target": target.name,
            "source": _clip(target.source),
            "existing": existing,
        },
    )
    answer = await llm.structured("tester", _messages(text), TesterOutput, temperature=temperature)
    return answer.tests


async def repair_test(llm: LLMClient, target: TargetContext, test: GeneratedTest, error: str) -> GeneratedTest | None:
    """Ask for a corrected version of a test that does not run; None if the model gave none."""
    text = render(
        REPAIR_TEMPLATE,
        {
            "target": target.name,
            "import_line": target.import_line,
            "source": _clip(target.source),
            "test_code": test.code,
            "error": _clip(error, 2000),
            "test_name": test.name,
            "kind": test.kind,
        },
    )
    answer = await llm.structured("tester", _messages(text), TesterOutput)
    return answer.tests[0] if answer.tests else None


async def judge_failure(llm: LLMClient, target: TargetContext, test: GeneratedTest, failure: str) -> Verdict:
    """Ask whether a failing test exposes a bug in the code or is itself wrong."""
    text = render(
        JUDGE_TEMPLATE,
        {
            "target": target.name,
            "docstring": target.docstring or "(no docstring)",
            "source": _clip(target.source),
            "test_code": test.code,
            "failure": _clip(failure, 2000),
        },
    )
    return await llm.structured("tester", _messages(text), Verdict)
