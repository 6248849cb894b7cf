"""From the editor: a project holding a `.py` file that is not UTF-8 still gets its fix (issue 15, item 2).

The CLI's side is tests/pipeline/test_pipeline_odd_files.py; here the same file
sits in the workspace the language server copies, and a Plan and fix run on
another file must end with its edit applied, not "failed: 'utf-8' codec
can't decode ..." (a message that named no file).
"""

from __future__ import annotations

from lsp_support import CALC, FIXED_CALC, apply_text_edits, script_fix


async def test_a_non_utf8_file_in_the_workspace_does_not_stop_a_fix(lsp_session, scripted_llm):
    script_fix(scripted_llm)
    async with lsp_session() as s:
        (s.root / "broken.py").write_bytes(b"NAME = '\xe9t\xe9'\n")  # latin-1 bytes, no coding cookie
        (s.root / "legacy.py").write_bytes(b"# -*- coding: latin-1 -*-\nNAME = '\xe9t\xe9'\n")
        uri = s.open("calc.py", CALC)
        run_id = (await s.command("agentls.planAndFix", {"uri": uri}))["runId"]
        await s.until(lambda: s.state.applied_edits, timeout=120)
        (applied,) = s.state.applied_edits
        (doc_edit,) = applied.edit.document_changes
        assert apply_text_edits(CALC, doc_edit.edits) == FIXED_CALC
        await s.until(lambda: any(run_id in m for m in s.messages()), timeout=60)
        said = [m for m in s.messages() if run_id in m]
        assert any(f"({run_id}): fixed" in m for m in said) and not any("codec" in m for m in said), said
        prompt = scripted_llm.requests_for("coder")[0]["messages"][-1]["content"]
        assert "broken.py is not valid utf-8 text" in prompt, "the model is told which file was left out"
