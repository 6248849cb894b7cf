"""End to end over stdio: a run that fails marks the failing tests and offers its best attempt."""

from __future__ import annotations

from lsp_support import FIX, PLAN, apply_text_edits
from lsprotocol import types as lsp

from testkit.scripted_llm import Fault

TWO_BUGS = "def add(a, b):\n    return a + c\n\n\ndef mul(a, b):\n    return a ** b\n"


ADD_FIXED = TWO_BUGS.replace("a + c", "a + b")


TWO_TESTS = ("from calc import add, mul\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\n"
             "def test_mul():\n    assert mul(2, 3) == 6\n")


REFLECTION = {"hypothesis": "mul is wrong", "file": "calc.py", "change": "?", "confidence": "low"}


def _ended(s, run_id: str) -> bool:
    return any(v.kind == "end" for v in s.client.progress_reports.get(f"agentls/{run_id}", []))


def _two_bugs(s, scripted_llm) -> str:
    """A workspace with two bugs; the coder fixes one: the run ends unfixed with a better attempt."""
    (s.root / "tests" / "test_calc.py").write_text(TWO_TESTS)
    scripted_llm.default("planner", PLAN)
    scripted_llm.default("coder", FIX)
    scripted_llm.default("reflector", REFLECTION)
    return s.open("calc.py", TWO_BUGS, version=3)


def _lines(s, relative: str) -> list[int]:
    return sorted(d.range.start.line for d in s.client.diagnostics.get(s.uri(relative), []))


async def test_an_unfixed_run_marks_the_failing_tests_and_its_best_attempt_can_be_seen_then_applied(
        lsp_session, scripted_llm):
    async with lsp_session(options={"maxIterations": 1}) as s:
        uri = _two_bugs(s, scripted_llm)
        s.state.answers = ["Show best attempt", "Apply"]
        run_id = (await s.command("agentls.planAndFix", {"uri": uri}))["runId"]
        await s.until(lambda: s.state.applied_edits, timeout=120)
        assert _lines(s, "tests/test_calc.py") == [4, 8], "both failing tests, as the code stands"
        assert _lines(s, "calc.py") == [1], "and the source line of add's NameError"
        offer, question = s.state.questions
        assert offer.type == lsp.MessageType.Warning and [a.title for a in offer.actions] == ["Show best attempt"]
        assert offer.message.startswith(f"agentls: Plan and fix ({run_id}): unfixed:")
        assert [a.title for a in question.actions] == ["Apply", "Discard"]
        assert "not verified: 1 passed, 1 failed, 0 errors" in question.message
        (shown,) = s.client.shown_documents
        diff_file = s.root / ".agentls" / "previews" / f"{run_id}-best-attempt.diff"
        assert shown.uri == diff_file.as_uri()
        text = diff_file.read_text()
        assert "# test result: not verified: 1 passed, 1 failed, 0 errors\n" in text
        assert "-    return a + c\n+    return a + b\n" in text
        (applied,) = s.state.applied_edits
        (doc_edit,) = applied.edit.document_changes
        assert doc_edit.text_document.uri == uri and doc_edit.text_document.version == 3
        assert apply_text_edits(TWO_BUGS, doc_edit.edits) == ADD_FIXED
        await s.until(lambda: any(f"({run_id}) best attempt: applied" in m for m in s.messages()))


async def test_the_best_attempt_is_refused_when_the_buffer_changed_since_the_run(lsp_session, scripted_llm):
    async with lsp_session(options={"maxIterations": 1}) as s:
        uri = _two_bugs(s, scripted_llm)

        def edit_then_apply(_params) -> str:
            change = lsp.TextDocumentContentChangePartial(
                range=lsp.Range(start=lsp.Position(0, 0), end=lsp.Position(0, 0)), text="# mine\n")
            s.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=4), content_changes=[change]))
            return "Apply"

        s.state.answers = ["Show best attempt", edit_then_apply]
        run_id = (await s.command("agentls.planAndFix", {"uri": uri}))["runId"]
        await s.until(lambda: any(f"({run_id}) best attempt: not applied" in m for m in s.messages()), timeout=120)
        refusal = next(m for m in s.messages() if "best attempt: not applied" in m)
        assert refusal.endswith("calc.py changed since the run read it (version 3 -> 4)")
        assert s.state.applied_edits == []


async def test_dismissing_the_offer_applies_nothing_and_keeps_the_diagnostics(lsp_session, scripted_llm):
    async with lsp_session(options={"maxIterations": 1}) as s:
        uri = _two_bugs(s, scripted_llm)
        s.state.answer = None
        run_id = (await s.command("agentls.planAndFix", {"uri": uri}))["runId"]
        await s.until(lambda: _ended(s, run_id) and s.state.questions, timeout=120)
        assert len(s.state.questions) == 1 and s.client.shown_documents == [] and s.state.applied_edits == []
        assert _lines(s, "tests/test_calc.py") == [4, 8]


async def test_a_run_that_ends_in_error_marks_the_failing_tests(lsp_session, scripted_llm):
    scripted_llm.default("planner", PLAN)
    scripted_llm.add("coder", Fault.status(401))  # the endpoint rejects the key: the run stops with an error
    async with lsp_session() as s:
        uri = s.open("calc.py")
        run_id = (await s.command("agentls.planAndFix", {"uri": uri}))["runId"]
        await s.until(lambda: _ended(s, run_id), timeout=120)
        end = next(m for m in s.client.messages if run_id in m.message)
        assert end.type == lsp.MessageType.Warning and "error: endpoint" in end.message
        assert _lines(s, "tests/test_calc.py") == [4] and _lines(s, "calc.py") == [1]
        (diag,) = s.client.diagnostics[s.uri("tests/test_calc.py")]
        assert diag.code == "tests/test_calc.py::test_add" and diag.source == "agentls"
        assert s.state.questions == [] and s.state.applied_edits == []


async def test_an_attempt_that_did_no_better_is_shown_but_cannot_be_applied(lsp_session, scripted_llm):
    wrong = {"edits": [{"path": "calc.py", "search": "    return a + c\n", "replace": "    return a - b\n"}]}
    scripted_llm.default("planner", PLAN)
    scripted_llm.default("coder", wrong)
    scripted_llm.default("reflector", REFLECTION)
    async with lsp_session(options={"maxIterations": 1}) as s:
        uri = s.open("calc.py")
        s.state.answers = ["Show best attempt"]
        run_id = (await s.command("agentls.planAndFix", {"uri": uri}))["runId"]
        await s.until(lambda: any("cannot be applied" in m for m in s.messages()), timeout=120)
        (offer,) = s.state.questions  # no Apply / Discard question follows
        assert [a.title for a in offer.actions] == ["Show best attempt"]
        text = (s.root / ".agentls" / "previews" / f"{run_id}-best-attempt.diff").read_text()
        assert "-    return a + c\n+    return a - b\n" in text and "did no better than the code as it is" in text
        assert s.state.applied_edits == [] and _lines(s, "tests/test_calc.py") == [4]


def _done(s, run_id: str) -> bool:
    return any(run_id in m for m in s.messages())


async def test_a_failing_run_is_reported_and_the_server_keeps_answering(lsp_session, scripted_llm):
    scripted_llm.default("planner", Fault.status(500, times=100))
    scripted_llm.default("coder", Fault.status(500, times=100))
    async with lsp_session({"maxRetries": 0}) as s:
        uri = s.open("calc.py")
        run_id = (await s.command("agentls.planAndFix", {"uri": uri}))["runId"]
        await s.until(lambda: _done(s, run_id), timeout=90)
        report = next(m for m in s.client.messages if run_id in m.message)
        assert report.type in (lsp.MessageType.Warning, lsp.MessageType.Error) and "error" in report.message
        params = lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            range=lsp.Range(start=lsp.Position(0, 0), end=lsp.Position(0, 0)),
            context=lsp.CodeActionContext(diagnostics=[]),
        )
        titles = [a.title for a in await s.client.text_document_code_action_async(params)]
        assert len(titles) == 3 and "Plan and fix with a hint..." in titles
        assert s.state.applied_edits == []
