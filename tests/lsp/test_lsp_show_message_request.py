"""`window/showMessageRequest` end to end: the safety gate asks the user, and Approve or Reject decides."""

from __future__ import annotations

import pytest
from lsp_support import CALC, apply_text_edits, script_fix

EVAL_FIX = {"edits": [{"path": "calc.py", "search": "    return a + c\n", "replace": "    return eval('a + b')\n"}]}


def _ended(s, run_id: str) -> bool:
    return any(v.kind == "end" for v in s.client.progress_reports.get(f"agentls/{run_id}", []))


@pytest.mark.parametrize("answer", ["Approve", "Reject"])
async def test_safety_gate_asks_the_user(lsp_session, scripted_llm, answer):
    script_fix(scripted_llm, coder_answer=EVAL_FIX)
    async with lsp_session() as s:
        s.state.answer = answer
        uri = s.open("calc.py")
        run_id = (await s.command("agentls.planAndFix", {"uri": uri}))["runId"]
        await s.until(lambda: _ended(s, run_id), timeout=90)
        (question,) = s.state.questions
        assert [a.title for a in question.actions] == ["Approve", "Reject"]
        assert "eval" in question.message and run_id in question.message
        if answer == "Approve":
            (applied,) = s.state.applied_edits
            assert "eval('a + b')" in apply_text_edits(CALC, applied.edit.document_changes[0].edits)
        else:
            assert s.state.applied_edits == []
            assert any(run_id in m and "not" not in m.split(run_id)[0] for m in s.messages())
