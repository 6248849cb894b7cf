"""`workspace/applyEdit` end to end over stdio: a fix, or a new test file, as one versioned edit; an edit refused
by version, by a buffer closed unsaved, or by the editor.
"""

from __future__ import annotations

from lsp_support import CALC, FIX, FIXED_CALC, apply_text_edits, script_fix
from lsprotocol import types as lsp

from testkit.scripted_llm import Fault


def _finished(s, run_id: str) -> bool:
    return any(run_id in m and ("passed" in m or "fixed" in m or "failed" in m or "not applied" in m
                                or "error" in m or "unfixed" in m) for m in s.messages())


async def test_plan_and_fix_applies_a_versioned_minimal_edit_reports_progress_and_clears_diagnostics(
    lsp_session, scripted_llm
):
    script_fix(scripted_llm)
    async with lsp_session() as s:
        calc_uri, test_uri = s.open("calc.py", CALC, version=3), s.uri("tests/test_calc.py")
        await s.command("agentls.runTests", {})
        await s.until(lambda: test_uri in s.client.diagnostics)
        rng = {"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 4}}
        answer = await s.command("agentls.planAndFix", {"uri": calc_uri, "range": rng})
        run_id = answer["runId"]
        await s.until(lambda: s.state.applied_edits, timeout=120)
        (applied,) = s.state.applied_edits
        assert applied.label == f"agentls: Plan and fix ({run_id})"
        (doc_edit,) = applied.edit.document_changes
        assert doc_edit.text_document.uri == calc_uri and doc_edit.text_document.version == 3
        for e in doc_edit.edits:  # minimal: only the changed line, not a whole-file replacement
            assert e.range.start.line == 1 and (e.range.end.line, e.range.end.character) <= (2, 0), e
        assert apply_text_edits(CALC, doc_edit.edits) == FIXED_CALC
        await s.until(lambda: s.cleared(test_uri) and s.cleared(calc_uri))
        await s.until(lambda: _finished(s, run_id))
        kinds = s.progress_kinds()[f"agentls/{run_id}"]
        assert kinds[0] == "begin" and kinds[-1] == "end" and "report" in kinds
        reports = [v for v in s.client.progress_reports[f"agentls/{run_id}"] if v.kind == "report"]
        percentages = [r.percentage for r in reports if r.percentage is not None]  # left out where it holds
        assert all(0 <= p <= 100 for p in percentages) and percentages == sorted(percentages)
        assert any(r.message for r in reports)


async def test_generate_tests_creates_the_test_file_through_one_edit(lsp_session, scripted_llm):
    test = {
        "name": "test_mul",
        "code": "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n",
        "kind": "pytest",
        "target": "mul",
        "rationale": "multiplies",
    }
    scripted_llm.default("tester", {"tests": [test]})
    async with lsp_session() as s:
        (s.root / "tests" / "test_calc.py").unlink()  # no test file yet: the run must create one
        uri = s.open("calc.py")
        rng = {"start": {"line": 5, "character": 4}, "end": {"line": 5, "character": 4}}
        run_id = (await s.command("agentls.generateTests", {"uri": uri, "range": rng}))["runId"]
        await s.until(lambda: s.state.applied_edits or _finished(s, run_id), timeout=120)
        (applied,) = s.state.applied_edits
        assert applied.label == f"agentls: Generate tests ({run_id})"
        operations = applied.edit.document_changes
        created = [op for op in operations if isinstance(op, lsp.CreateFile)]
        inserts = [op for op in operations if isinstance(op, lsp.TextDocumentEdit)]
        assert len(created) == 1 and created[0].uri.endswith(".py") and "/tests/" in created[0].uri, operations
        (insert,) = [op for op in inserts if op.text_document.uri == created[0].uri]
        assert insert.text_document.version is None and "def test_mul" in insert.edits[0].new_text
        assert sorted(p.name for p in (s.root / "tests").iterdir()) == []  # the client creates it, not the server


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
