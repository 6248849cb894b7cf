"""Verified quick fixes through the real server over stdio: found in the background after a failing test run,
offered on the failing test's diagnostic and the source line, applied through the versioned edit, cancelled
and dropped when a file changes, and never a model request (the scripted endpoint counts)."""

from __future__ import annotations

import asyncio
import time

from lsp_support import FIXED_CALC, apply_text_edits, server_descendants
from lsprotocol import types as lsp

from agent_core.sandbox.proctree import owned_by
from scripted_llm import Fault

COUNT = (
    'def count_up(n):\n    """1, 2, ..., n."""\n    return list(range(1, n))\n\n\ndef double(x):\n    return 2 * x\n'
)
TEST_COUNT = (
    "from count import count_up, double\n\n\ndef test_count_up():\n    assert count_up(3) == [1, 2, 3]\n\n\n"
    "def test_double():\n    assert double(4) == 8\n"
)
TITLE = "Apply verified fix: `range(1, n)` -> `range(1, n + 1)` in count_up (3 tests pass)"
SEARCH_ON = {"search": {"enabled": True}}  # the test suite's environment turns the search off (tests/conftest.py)


def _project(s) -> None:
    """calc.py fixed on disk (its bug is another test's), and the count_up bug with its tests."""
    (s.root / "calc.py").write_text(FIXED_CALC)
    (s.root / "count.py").write_text(COUNT)
    (s.root / "tests" / "test_count.py").write_text(TEST_COUNT)


def _at(line: int, character: int = 0) -> lsp.Range:
    return lsp.Range(
        start=lsp.Position(line=line, character=character), end=lsp.Position(line=line, character=character)
    )


async def _actions(s, uri: str, rng: lsp.Range, diagnostics: list[lsp.Diagnostic] | None = None) -> list:
    params = lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri),
        range=rng,
        context=lsp.CodeActionContext(diagnostics=diagnostics or []),
    )
    return await asyncio.wait_for(s.client.text_document_code_action_async(params), 10) or []


async def _verified(s, uri: str, rng: lsp.Range, diagnostics: list[lsp.Diagnostic] | None = None) -> list:
    return [a for a in await _actions(s, uri, rng, diagnostics) if a.title.startswith("Apply verified fix")]


async def _wait_for_offer(s, uri: str, rng: lsp.Range, timeout: float = 120.0) -> list:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = await _verified(s, uri, rng)
        if found:
            return found
        await asyncio.sleep(0.2)
    raise AssertionError(f"no verified fix within {timeout} s; log: {[m.message for m in s.client.log_messages]}")


async def test_a_one_token_bug_gets_a_verified_quick_fix_that_makes_the_tests_pass(lsp_session):
    async with lsp_session(options=SEARCH_ON) as s:
        _project(s)
        count_uri, test_uri = s.open("count.py", COUNT, version=7), s.uri("tests/test_count.py")
        started = time.monotonic()
        await s.command("agentls.runTests", {})
        await s.until(lambda: test_uri in s.client.diagnostics)  # the assert fails in the test: no source frame
        failed_at = time.monotonic()
        (on_line,) = await _wait_for_offer(s, count_uri, _at(2, 10))
        ready_at = time.monotonic()
        print(
            f"\nverified quick fix offered {ready_at - failed_at:.1f} s after the failing diagnostics "
            f"({ready_at - started:.1f} s after agentls.runTests)"
        )

        (test_diag,) = s.client.diagnostics[test_uri]
        (on_test,) = await _verified(s, test_uri, test_diag.range, [test_diag])
        assert on_line.title == on_test.title == TITLE
        assert on_line.kind == lsp.CodeActionKind.QuickFix and on_line.is_preferred
        assert on_test.diagnostics and on_test.diagnostics[0].code == "tests/test_count.py::test_count_up"
        assert test_diag.range.start.character > 0
        in_indent = _at(test_diag.range.start.line, 1)  # Neovim's cursor in the assert's indentation
        (from_indent,) = await _verified(s, test_uri, in_indent, [test_diag])
        assert from_indent.title == TITLE
        elsewhere = await _verified(s, count_uri, _at(6))
        assert elsewhere == [], "offered on the failing test's diagnostic and the fixed line only"

        answer = await s.command(on_line.command.command, *on_line.command.arguments)
        assert answer == {"applied": True, "reason": ""}
        (applied,) = s.state.applied_edits
        assert applied.label == f"agentls: {TITLE}"
        (doc_edit,) = applied.edit.document_changes
        assert doc_edit.text_document.uri == count_uri and doc_edit.text_document.version == 7
        assert applied.edit.change_annotations["agentls.change"].needs_confirmation, "previewed like Plan and fix"
        fixed = apply_text_edits(COUNT, doc_edit.edits)
        assert fixed == COUNT.replace("range(1, n)", "range(1, n + 1)")
        await s.until(lambda: s.cleared(test_uri))  # the verified report, published with the edit

        (s.root / "count.py").write_text(fixed)  # what the editor saves
        s.client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=count_uri, version=8),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=fixed)],
            )
        )
        run_id = (await s.command("agentls.runTests", {}))["runId"]
        await s.until(lambda: any(run_id in m and "3 passed, 0 failed" in m for m in s.messages()))
        assert not s.scripted_requests(), "the background search never calls the model"


async def test_an_edit_cancels_the_search_in_flight_and_no_stale_fix_is_offered(lsp_session):
    async with lsp_session(options=SEARCH_ON) as s:
        _project(s)
        count_uri, test_uri = s.open("count.py", COUNT, version=1), s.uri("tests/test_count.py")
        await s.command("agentls.runTests", {})
        await s.until(lambda: test_uri in s.client.diagnostics)
        pid = s.client._server.pid
        await s.until(lambda: server_descendants(pid), timeout=30)  # the search's sandboxed processes

        edited = COUNT.replace("list(range(1, n))", "list(range(0, n))")
        s.client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=count_uri, version=2),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=edited)],
            )
        )

        await s.until(lambda: not server_descendants(pid), timeout=30)  # the sandbox was stopped
        await s.until(lambda: not owned_by(pid), timeout=5)  # none of it re-parented away either
        await asyncio.sleep(5)  # longer than the search needs to finish a verified fix here
        assert await _verified(s, count_uri, _at(2, 10)) == []
        assert not any("verified fix ready" in m.message for m in s.client.log_messages)
        assert not s.scripted_requests()


async def test_an_edit_withdraws_a_ready_fix_and_its_command_then_refuses(lsp_session):
    async with lsp_session(options=SEARCH_ON) as s:
        _project(s)
        count_uri = s.open("count.py", COUNT, version=1)
        await s.command("agentls.runTests", {})
        (offer,) = await _wait_for_offer(s, count_uri, _at(2))

        edited = COUNT.replace("    return 2 * x\n", "    return x * 2\n")
        s.client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=count_uri, version=2),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=edited)],
            )
        )

        assert await _verified(s, count_uri, _at(2)) == []
        answer = await s.command(offer.command.command, *offer.command.arguments)
        assert answer["applied"] is False and "no longer current" in answer["reason"]
        assert s.state.applied_edits == []
        assert not s.scripted_requests()


async def test_the_search_yields_to_a_run_the_user_starts_and_resumes_after_it(lsp_session, scripted_llm):
    for role in ("planner", "coder"):
        scripted_llm.add(role, Fault.hang(120))
    async with lsp_session(options=SEARCH_ON) as s:
        _project(s)
        count_uri, test_uri = s.open("count.py", COUNT, version=1), s.uri("tests/test_count.py")
        await s.command("agentls.runTests", {})
        await s.until(lambda: test_uri in s.client.diagnostics)
        pid = s.client._server.pid
        await s.until(lambda: server_descendants(pid), timeout=30)  # the search is running

        goal = {"uri": count_uri, "goal": "count_up(n) should include n"}  # a task: the model is asked (a fix
        run_id = (await s.command("agentls.runTask", goal))["runId"]  # with a typed goal would search first)
        await s.until(lambda: s.scripted_requests(), timeout=90)  # the user's run waits for its model
        await s.until(lambda: not server_descendants(pid), timeout=30)  # and the search gave way
        assert await _verified(s, count_uri, _at(2)) == []

        asked = len(s.scripted_requests())
        await s.command("agentls.cancel", {"runId": run_id})
        (offer,) = await _wait_for_offer(s, count_uri, _at(2))  # resumed once no run was going
        assert offer.title == TITLE
        assert len(s.scripted_requests()) == asked, "only the user's run asked the model"


async def test_a_save_with_run_tests_on_save_runs_the_tests_and_the_search_follows(lsp_session):
    async with lsp_session(options={**SEARCH_ON, "runTestsOnSave": True}) as s:
        _project(s)
        sync = s.capabilities.text_document_sync
        assert sync.save, "didSave is asked for"
        count_uri, test_uri = s.open("count.py", COUNT, version=1), s.uri("tests/test_count.py")
        s.client.text_document_did_save(
            lsp.DidSaveTextDocumentParams(text_document=lsp.TextDocumentIdentifier(count_uri))
        )
        await s.until(lambda: test_uri in s.client.diagnostics, timeout=90)
        await s.until(lambda: any("Run tests" in m and "1 failed" in m for m in s.messages()))  # the save's run
        (offer,) = await _wait_for_offer(s, count_uri, _at(2))
        assert offer.title == TITLE and not s.scripted_requests()


SHOUT = "def shout(s):\n    return s.title()\n"
TEST_SHOUT = 'from shout import shout\n\n\ndef test_shout():\n    assert shout("ab c") == "AB C"\n'
SHOUT_PLAN = {
    "approach": "Upper-case all.",
    "subtasks": [{"id": "t1", "description": "shout upper-cases", "files": ["shout.py"]}],
}
SHOUT_FIX = {
    "edits": [{"path": "shout.py", "search": "    return s.title()\n", "replace": "    return s.upper()\n"}],
    "explanation": "upper, not title",
}


async def test_with_the_model_round_allowed_a_bug_no_mutant_fixes_gets_a_model_fix_verified(lsp_session, scripted_llm):
    scripted_llm.default("planner", SHOUT_PLAN)
    scripted_llm.default("coder", SHOUT_FIX)
    scripted_llm.default("explainer", "shout title-cased; it now upper-cases, so test_shout passes.")
    options = {"search": {"enabled": True, "backgroundModelRound": True}}
    async with lsp_session(options=options) as s:
        (s.root / "calc.py").write_text(FIXED_CALC)
        (s.root / "shout.py").write_text(SHOUT)
        (s.root / "tests" / "test_shout.py").write_text(TEST_SHOUT)
        shout_uri = s.open("shout.py", SHOUT, version=1)
        await s.command("agentls.runTests", {})
        (offer,) = await _wait_for_offer(s, shout_uri, _at(1))
        assert offer.title == "Apply verified fix: `s.title()` -> `s.upper()` in shout (2 tests pass)"
        assert len(scripted_llm.requests_for("coder")) == 1, "one model round, one attempt"
        await s.command(offer.command.command, *offer.command.arguments)
        (applied,) = s.state.applied_edits
        (doc_edit,) = applied.edit.document_changes
        assert apply_text_edits(SHOUT, doc_edit.edits) == SHOUT.replace("title", "upper")
