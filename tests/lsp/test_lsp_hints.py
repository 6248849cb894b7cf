"""End to end over stdio: the user's hint, from "Plan and fix with a hint..." and "Retry with a hint...".

The editor client asks the hint and sends the code action's command with
`hint` added; the scripted model's recorded requests show it reached the
model's prompts, and the run's trace names it.
"""

from __future__ import annotations

from lsp_support import FIX, PLAN, script_fix
from lsprotocol import types as lsp

HINT = "the bug is the undefined name on the return line of add"
TWO_BUGS = "def add(a, b):\n    return a + c\n\n\ndef mul(a, b):\n    return a ** b\n"
TWO_TESTS = ("from calc import add, mul\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\n"
             "def test_mul():\n    assert mul(2, 3) == 6\n")


def _ended(s, run_id: str) -> bool:
    return any(v.kind == "end" for v in s.client.progress_reports.get(f"agentls/{run_id}", []))


def _params(uri: str, line: int, diagnostics: list[lsp.Diagnostic] | None = None) -> lsp.CodeActionParams:
    rng = lsp.Range(start=lsp.Position(line, 4), end=lsp.Position(line, 4))
    return lsp.CodeActionParams(text_document=lsp.TextDocumentIdentifier(uri=uri), range=rng,
                                context=lsp.CodeActionContext(diagnostics=diagnostics or []))


def _prompts_with(llm, text: str) -> set[str]:
    """The roles of the recorded model requests whose messages carry `text`."""
    return {r["role"] for r in llm.requests if any(text in str(m.get("content")) for m in r.get("messages", []))}


async def test_plan_and_fix_with_a_hint_reaches_the_model_and_the_trace(lsp_session, scripted_llm):
    script_fix(scripted_llm)
    async with lsp_session() as s:
        uri = s.open("calc.py")
        actions = await s.client.text_document_code_action_async(_params(uri, 1))
        by_title = {a.title: a for a in actions}
        plain, hinted = by_title["Plan and fix"], by_title["Plan and fix with a hint..."]
        assert hinted.kind == plain.kind and hinted.command.command == "agentls.planAndFixWithHint"
        assert list(hinted.command.arguments) == list(plain.command.arguments)
        refused = await s.command("agentls.planAndFixWithHint", hinted.command.arguments[0])
        assert refused["runId"] is None and "no hint came with agentls.planAndFixWithHint" in refused["error"]
        assert scripted_llm.requests == [], "no run started without a hint"
        answer = await s.command("agentls.planAndFixWithHint", {**hinted.command.arguments[0], "hint": f"  {HINT} "})
        run_id = answer["runId"]
        await s.until(lambda: s.state.applied_edits and _ended(s, run_id), timeout=120)
        assert "coder" in _prompts_with(scripted_llm, f"The user's hint: {HINT}")
        trace = await s.command("agentls.showTrace", {"runId": run_id})
        assert f"hint: {HINT}" in trace["markdown"]


async def test_retry_with_a_hint_runs_the_failed_request_again_with_the_hint(lsp_session, scripted_llm):
    scripted_llm.default("planner", PLAN)
    scripted_llm.default("coder", FIX)  # fixes add only: mul stays wrong, the run ends unfixed
    scripted_llm.default("reflector", {"hypothesis": "mul is wrong", "file": "calc.py", "change": "?",
                                       "confidence": "low"})
    async with lsp_session(options={"maxIterations": 1}) as s:
        (s.root / "tests" / "test_calc.py").write_text(TWO_TESTS)
        uri = s.open("calc.py", TWO_BUGS)
        s.state.answer = None  # the offer of the best attempt is dismissed
        first = (await s.command("agentls.planAndFix", {"uri": uri}))["runId"]
        test_uri = s.uri("tests/test_calc.py")
        await s.until(lambda: _ended(s, first) and len(s.client.diagnostics.get(test_uri, [])) == 2, timeout=120)
        assert _prompts_with(scripted_llm, "The user's hint") == set()
        marked = s.client.diagnostics[test_uri]
        mul_line = next(d for d in marked if d.code == "tests/test_calc.py::test_mul").range.start.line
        actions = await s.client.text_document_code_action_async(_params(test_uri, mul_line, marked))
        (retry,) = [a for a in actions if a.title == "Retry with a hint..."]
        assert retry.kind == lsp.CodeActionKind.QuickFix and [d.code for d in retry.diagnostics] == [
            "tests/test_calc.py::test_mul"]
        assert retry.command.command == "agentls.retryWithHint" and list(retry.command.arguments) == [{"runId": first}]
        refused = await s.command("agentls.retryWithHint", {"runId": first})
        assert refused["runId"] is None and "no hint came" in refused["error"]
        answer = await s.command("agentls.retryWithHint", {"runId": first, "hint": "mul must multiply: a * b"})
        second = answer["runId"]
        assert answer["retryOf"] == first and second not in (None, first)
        await s.until(lambda: _ended(s, second), timeout=120)
        assert "coder" in _prompts_with(scripted_llm, "The user's hint: mul must multiply: a * b")
        trace = (await s.command("agentls.showTrace", {"runId": second}))["markdown"]
        assert "hint: mul must multiply: a * b" in trace and "calc.py" in trace
        unknown = await s.command("agentls.retryWithHint", {"runId": "nosuchrun", "hint": "x"})
        assert unknown["runId"] is None and "no failed run nosuchrun" in unknown["error"]
