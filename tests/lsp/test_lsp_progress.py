"""`$/progress` end to end: a run waiting on a silent model says it is alive (issue 15, item 7); a run cancelled by
the command or from the progress UI ends its progress and leaves nothing behind; across the search's hand-over to
the model the percentage only rises (issue 40).

The engine repeats the current phase every `WAIT_REPORT_S` (10 s) while a model call waits,
with how long it has waited; the CLI prints it (tests/pipeline/test_pipeline_hung_endpoint.py),
and the language server must carry it to the editor's progress UI.
"""

from __future__ import annotations

import asyncio
import re
from itertools import pairwise

from lsp_support import CALC, FIXED_CALC, script_fix, server_descendants
from lsprotocol import types as lsp

from testkit.project_support import GREET, script_greet
from testkit.scripted_llm import Fault

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


SLOW_TEST = "import time\n\n\ndef test_slow():\n    time.sleep(60)\n"


def _ended(s, run_id: str) -> bool:
    return any(v.kind == "end" for v in s.client.progress_reports.get(f"agentls/{run_id}", []))


async def _no_leftovers(s) -> None:
    pid = s.client._server.pid
    await s.until(lambda: server_descendants(pid) == [], timeout=20)
    await s.until(lambda: not any(s.tmpdir.iterdir()), timeout=20)


async def test_cancel_during_the_llm_call_leaves_no_edit_no_diagnostic_change_no_leftovers(lsp_session, scripted_llm):
    script_fix(scripted_llm, coder_answer=Fault.hang(60))
    async with lsp_session() as s:
        uri = s.open("calc.py")
        run_id = (await s.command("agentls.planAndFix", {"uri": uri}))["runId"]
        await s.until(lambda: scripted_llm.requests_for("coder"), timeout=60)
        answer = await s.command("agentls.cancel", {"runId": run_id})
        assert answer["cancelled"] == [run_id]
        await s.until(lambda: _ended(s, run_id))
        assert s.client.progress_reports[f"agentls/{run_id}"][-1].message == "cancelled"
        await _no_leftovers(s)
        assert s.state.applied_edits == [] and s.client.diagnostics == {}
        assert (s.root / "calc.py").read_text() == CALC


async def test_cancel_from_the_progress_ui_kills_the_sandboxed_tests(lsp_session):
    async with lsp_session() as s:
        (s.root / "tests" / "test_slow.py").write_text(SLOW_TEST)
        pid = s.client._server.pid
        run_id = (await s.command("agentls.runTests", {}))["runId"]
        await s.until(lambda: len(server_descendants(pid)) > 0 and any(s.tmpdir.iterdir()), timeout=60)
        await asyncio.sleep(1.0)  # let pytest get going inside the sandbox
        s.client.window_work_done_progress_cancel(lsp.WorkDoneProgressCancelParams(token=f"agentls/{run_id}"))
        await s.until(lambda: _ended(s, run_id), timeout=30)
        await _no_leftovers(s)
        assert s.client.diagnostics == {}


async def test_progress_only_rises_across_the_search_to_model_hand_over(lsp_session, scripted_llm, monkeypatch):
    monkeypatch.setenv("AGENTLS_SEARCH", "1")  # the server inherits it: the search runs first, finds nothing
    script_greet(scripted_llm)
    async with lsp_session() as s:
        (s.root / "calc.py").write_text(FIXED_CALC)  # the workspace's own bug out of the way: greet's alone
        for rel, text in GREET.items():
            (s.root / rel).write_text(text)
        uri = s.open("greet.py")
        run_id = (await s.command("agentls.planAndFix", {"uri": uri}))["runId"]
        await s.until(lambda: _ended(s, run_id), timeout=600)
        values = s.client.progress_reports[f"agentls/{run_id}"]
    assert len(scripted_llm.requests_for("coder")) == 1, "the model was called after the search"
    reports = [v for v in values if v.kind == "report"]
    messages = [r.message for r in reports]
    searched = max(i for i, m in enumerate(messages) if m and m.startswith("trying single-edit fixes"))
    assert "planning" in messages[searched:], messages
    percentages = [values[0].percentage] + [r.percentage for r in reports if r.percentage is not None]
    assert percentages == sorted(set(percentages)), f"each percentage sent is higher than the last: {percentages}"
    shown = [(r.message, r.percentage) for r in reports]
    assert all(a != b for a, b in pairwise(shown)), f"a report repeated: {shown}"
