"""End to end: cancel, edits refused by version or by the editor, the safety gate, one run per file."""

from __future__ import annotations

import asyncio

import pytest
from lsp_support import CALC, FIX, apply_text_edits, script_fix, server_descendants
from lsprotocol import types as lsp

from scripted_llm import Fault

SLOW_TEST = "import time\n\n\ndef test_slow():\n    time.sleep(60)\n"
EVAL_FIX = {"edits": [{"path": "calc.py", "search": "    return a + c\n", "replace": "    return eval('a + b')\n"}]}


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


async def test_a_document_edited_during_the_run_refuses_the_edit_by_version(lsp_session, scripted_llm):
    script_fix(scripted_llm, coder_answer=Fault.hang(4, then=FIX))
    async with lsp_session() as s:
        uri = s.open("calc.py", version=1)
        run_id = (await s.command("agentls.planAndFix", {"uri": uri}))["runId"]
        await s.until(lambda: scripted_llm.requests_for("coder"), timeout=60)
        change = lsp.TextDocumentContentChangePartial(
            range=lsp.Range(start=lsp.Position(0, 0), end=lsp.Position(0, 0)), text="# my edit\n"
        )
        s.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=2), content_changes=[change]))
        await s.until(lambda: any(run_id in m and "not applied" in m for m in s.messages()), timeout=90)
        refusal = next(m for m in s.client.messages if run_id in m.message)
        assert "calc.py changed since the run read it (version 1 -> 2)" in refusal.message
        assert s.state.applied_edits == []  # refused before sending: nothing clobbered


async def test_a_document_closed_without_saving_during_the_run_is_named_as_such(lsp_session, scripted_llm):
    script_fix(scripted_llm, coder_answer=Fault.hang(4, then=FIX))
    async with lsp_session() as s:
        uri = s.open("calc.py", text="# unsaved note\n" + CALC)
        run_id = (await s.command("agentls.planAndFix", {"uri": uri}))["runId"]
        await s.until(lambda: scripted_llm.requests_for("coder"), timeout=60)
        s.client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri)))
        await s.until(lambda: any(run_id in m and "not applied" in m for m in s.messages()), timeout=90)
        refusal = next(m for m in s.client.messages if run_id in m.message)
        assert "calc.py was closed without saving since the run read it" in refusal.message
        assert "changed on disk" not in refusal.message
        assert s.state.applied_edits == [] and (s.root / "calc.py").read_text() == CALC


async def test_an_edit_the_editor_rejects_is_reported_and_nothing_else_is_written(lsp_session, scripted_llm):
    script_fix(scripted_llm)
    async with lsp_session() as s:
        s.state.accept_edits = False
        uri = s.open("calc.py")
        run_id = (await s.command("agentls.planAndFix", {"uri": uri}))["runId"]
        await s.until(lambda: any(run_id in m and "not applied" in m for m in s.messages()), timeout=90)
        assert len(s.state.applied_edits) == 1
        assert any("the user said no" in m for m in s.messages())
        assert (s.root / "calc.py").read_text() == CALC and s.client.diagnostics == {}


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


async def test_a_second_run_on_the_same_file_is_refused_while_another_file_may_run(lsp_session, scripted_llm):
    script_fix(scripted_llm, coder_answer=Fault.hang(60))
    async with lsp_session() as s:
        uri = s.open("calc.py")
        first = await s.command("agentls.planAndFix", {"uri": uri})
        second = await s.command("agentls.generateTests", {"uri": uri})
        assert first["runId"] and second["runId"] is None and first["runId"] in second["error"]
        assert any("already going on calc.py" in m for m in s.messages())
        other = await s.command("agentls.runTests", {"uri": s.uri("tests/test_calc.py")})
        assert other["runId"] and other["runId"] != first["runId"]
        answer = await s.command("agentls.cancel", {})
        assert set(answer["cancelled"]) == {first["runId"], other["runId"]}
        await _no_leftovers(s)
        await s.until(lambda: _ended(s, first["runId"]), timeout=30)
        assert not any("internal error" in m for m in s.messages())
