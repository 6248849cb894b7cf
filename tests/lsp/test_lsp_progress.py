"""A run waiting on a silent model tells the editor it is alive (issue 15, item 7), through `$/progress`.

The engine repeats the current phase every `WAIT_REPORT_S` (10 s) while a model call waits,
with how long it has waited; the CLI prints it (tests/pipeline/test_pipeline_hung_endpoint.py),
and the language server must carry it to the editor's progress UI.
"""

from __future__ import annotations

import re

from lsp_support import script_fix

from scripted_llm import Fault

WAITING = re.compile(r"waiting \d+ s for the coder model")


async def test_a_run_waiting_on_a_hung_model_reports_progress_while_it_waits(lsp_session, scripted_llm):
    script_fix(scripted_llm, coder_answer=Fault.hang(90))
    async with lsp_session({"llmDeadlineS": 120, "llmStallS": 120}) as s:
        uri = s.open("calc.py")
        run_id = (await s.command("agentls.planAndFix", {"uri": uri}))["runId"]
        token = f"agentls/{run_id}"

        def waiting() -> list[str]:
            reports = [v for v in s.client.progress_reports.get(token, []) if v.kind == "report"]
            return [v.message for v in reports if v.message and WAITING.search(v.message)]

        await s.until(lambda: bool(waiting()), timeout=90)
        assert len(scripted_llm.requests_for("coder")) == 1, "one call, still waiting (not a retry)"
        await s.command("agentls.cancel", {"runId": run_id})
        await s.until(lambda: any(v.kind == "end" for v in s.client.progress_reports.get(token, [])), timeout=30)
