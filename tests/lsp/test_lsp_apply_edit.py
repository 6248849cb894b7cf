"""End to end over stdio against the real engine, sandbox and the scripted model:
plan-and-fix, test runs and their diagnostics."""

from __future__ import annotations

from lsp_support import CALC, FIXED_CALC, apply_text_edits, script_fix
from lsprotocol import types as lsp


def _finished(s, run_id: str) -> bool:
    return any(run_id in m and ("passed" in m or "fixed" in m or "failed" in m or "not applied" in m
                                or "error" in m or "unfixed" in m) for m in s.messages())


async def test_run_tests_publishes_linked_diagnostics_at_the_failing_lines(lsp_session):
    async with lsp_session() as s:
        test_uri, calc_uri = s.uri("tests/test_calc.py"), s.uri("calc.py")
        answer = await s.command("agentls.runTests", {})
        # one publishDiagnostics per file: under load the second can arrive a little after the first
        await s.until(lambda: test_uri in s.client.diagnostics and calc_uri in s.client.diagnostics)
        (test_diag,) = s.client.diagnostics[test_uri]
        (src_diag,) = s.client.diagnostics[calc_uri]
        assert answer["runId"]
        assert test_diag.range.start.line == 4 and src_diag.range.start.line == 1
        assert test_diag.source == src_diag.source == "agentls"
        assert test_diag.code == "tests/test_calc.py::test_add" == src_diag.code
        assert test_diag.severity == lsp.DiagnosticSeverity.Error
        assert test_diag.related_information[0].location.uri == calc_uri
        assert test_diag.related_information[0].location.range.start.line == 1
        assert src_diag.related_information[0].location.uri == test_uri
        assert s.state.applied_edits == []
        assert not s.scripted_requests()


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
        assert all(0 <= r.percentage <= 100 for r in reports) and any(r.message for r in reports)


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
