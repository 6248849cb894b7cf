"""Text document sync end to end: the model sees the selection as it stands in the unsaved buffer."""

from __future__ import annotations

from lsp_support import CALC, script_fix


def _finished(s, run_id: str) -> bool:
    return any(run_id in m and ("passed" in m or "fixed" in m or "failed" in m or "not applied" in m
                                or "error" in m or "unfixed" in m) for m in s.messages())


async def test_plan_and_fix_shows_the_model_the_selection_as_it_stands_in_the_unsaved_buffer(lsp_session, scripted_llm):
    script_fix(scripted_llm)
    unsaved = CALC.replace("return a + c", "return a + c  # typed, not saved")
    async with lsp_session() as s:
        calc_uri = s.open("calc.py", unsaved, version=2)
        rng = {"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 36}}
        run_id = (await s.command("agentls.planAndFix", {"uri": calc_uri, "range": rng}))["runId"]
        await s.until(lambda: scripted_llm.requests_for("coder"), timeout=120)
        prompt = scripted_llm.requests_for("coder")[0]["messages"][-1]["content"]
        assert (
            "Where the user is looking: (file: calc.py, symbol: add)\n"
            "Selected there:\n    return a + c  # typed, not saved\n"
        ) in prompt
        await s.until(lambda: _finished(s, run_id), timeout=120)
