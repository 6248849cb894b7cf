"""End to end over stdio: a run that spends its token budget ends like an unfixed one (its failing tests
marked), and every run's end notification says what it spent."""

from __future__ import annotations

from lsp_support import PLAN

TWO_BUGS = "def add(a, b):\n    return a + c\n"
TESTS = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
WRONG = {"edits": [{"path": "calc.py", "search": "a + c", "replace": "a * c"}], "explanation": "try a product"}


def _end(s, run_id: str):
    return next((v for v in s.client.progress_reports.get(f"agentls/{run_id}", []) if v.kind == "end"), None)


async def test_a_spent_budget_ends_the_run_like_unfixed_and_the_end_says_the_tokens(lsp_session, scripted_llm):
    async with lsp_session(options={"tokenBudget": 50, "maxIterations": 3, "samples": 1}) as s:
        (s.root / "tests" / "test_calc.py").write_text(TESTS)
        scripted_llm.default("planner", PLAN)
        scripted_llm.default("coder", WRONG)
        uri = s.open("calc.py", TWO_BUGS, version=1)
        run_id = (await s.command("agentls.planAndFix", {"uri": uri}))["runId"]
        await s.until(lambda: _end(s, run_id) is not None, timeout=120)
        end = _end(s, run_id)
        assert end.message.startswith("budget_spent: the token budget is spent"), end.message
        assert " tokens (" in end.message and "in 1 model call)" in end.message, end.message
        assert len(scripted_llm.requests) == 1, "no request after the budget"
        await s.until(lambda: s.client.diagnostics.get(s.uri("tests/test_calc.py")), timeout=30)
        assert any(f"({run_id}): budget_spent" in m for m in s.messages())
