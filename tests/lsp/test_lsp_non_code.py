"""A candidate's non-code file in the editor: dropped with a message, or asked about with its diff when named."""

from __future__ import annotations

from lsp_support import FIX, script_fix
from lsprotocol import types as lsp

WITH_RIDERS = {"edits": [*FIX["edits"], {"path": ".envrc", "search": "", "replace": "export PYTHONPATH=.\n"},
                         {"path": ".vscode/tasks.json", "search": "", "replace": "{\"tasks\": []}\n"}],
               "explanation": "add must add"}


async def test_the_file_the_goal_names_is_asked_with_its_diff_and_the_other_is_dropped(lsp_session, scripted_llm):
    script_fix(scripted_llm, WITH_RIDERS)
    scripted_llm.default("explainer", "add used c; it adds b now.")
    async with lsp_session({"search": {"enabled": False}, "verify": {"goalTests": False}}) as s:
        uri = s.open("calc.py")
        goal = "make test_add pass and add a .envrc that exports PYTHONPATH"
        run_id = (await s.command("agentls.planAndFix", {"uri": uri, "goal": goal}))["runId"]
        await s.until(lambda: s.state.applied_edits, timeout=240)
        (question,) = [q for q in s.state.questions if "which the goal names" in q.message]
        assert ".envrc" in question.message and "+export PYTHONPATH=." in question.message
        assert "tasks.json" not in question.message
        (applied,) = s.state.applied_edits
        created = [op.uri for op in applied.edit.document_changes if isinstance(op, lsp.CreateFile)]
        edited = [op.text_document.uri for op in applied.edit.document_changes if isinstance(op, lsp.TextDocumentEdit)]
        assert created == [s.uri(".envrc")] and s.uri(".vscode/tasks.json") not in edited + created
        await s.until(lambda: any("left out of the fix: .vscode/tasks.json" in m for m in s.messages()))
        assert any(run_id in m for m in s.messages())
