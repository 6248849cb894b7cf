"""A Generate tests run that finds a suspected bug starts the background search, through the real server over stdio.

The scripted model writes one test that the code fails (its docstring's example says the code is wrong, so
the run keeps it as a suspected bug without asking a judge); the user accepts the new test file; the
zero-token search then finds the one-token fix against the whole suite, the generated file included, and
offers it as a verified quick fix on the generated test's diagnostic and on the source line. Applying it
makes every test pass, and the scripted endpoint counts no request after the gen-tests run's own.
"""

from __future__ import annotations

import asyncio
import time

from lsp_support import FIXED_CALC, apply_text_edits
from lsprotocol import types as lsp

COUNT = (
    "def count_up(n):\n"
    '    """1, 2, ..., n.\n\n'
    "    >>> count_up(3)\n"
    "    [1, 2, 3]\n"
    '    """\n'
    "    return list(range(1, n))\n"
)
BUG_LINE = 6  # 0-based: `return list(range(1, n))`
INCLUDES_N = {
    "name": "test_count_up_includes_n",
    "code": "from count import count_up\n\n\ndef test_count_up_includes_n():\n    assert count_up(3) == [1, 2, 3]\n",
    "kind": "pytest",
    "target": "count_up",
    "rationale": "the docstring's example",
}
EMPTY = {
    "name": "test_count_up_zero",
    "code": "from count import count_up\n\n\ndef test_count_up_zero():\n    assert count_up(0) == []\n",
    "kind": "pytest",
    "target": "count_up",
    "rationale": "nothing to count",
}
TITLE = "Apply verified fix: `range(1, n)` -> `range(1, n + 1)` in count_up"
SEARCH_ON = {"search": {"enabled": True}}  # the test suite's environment turns the search off (tests/conftest.py)


def _at(line: int) -> lsp.Range:
    return lsp.Range(start=lsp.Position(line=line, character=4), end=lsp.Position(line=line, character=4))


async def _verified(s, uri: str, rng: lsp.Range, diagnostics: list[lsp.Diagnostic] | None = None) -> list:
    params = lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri),
        range=rng,
        context=lsp.CodeActionContext(diagnostics=diagnostics or []),
    )
    actions = await asyncio.wait_for(s.client.text_document_code_action_async(params), 10) or []
    return [a for a in actions if a.title.startswith("Apply verified fix")]


async def _wait_for_offer(s, uri: str, rng: lsp.Range, timeout: float = 180.0) -> list:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = await _verified(s, uri, rng)
        if found:
            return found
        await asyncio.sleep(0.2)
    raise AssertionError(f"no verified fix within {timeout} s; log: {[m.message for m in s.client.log_messages]}")


def _created_test_file(s) -> tuple[str, str]:
    """The uri and text of the test file the accepted Generate tests edit creates."""
    (applied,) = s.state.applied_edits
    ops = applied.edit.document_changes
    (created,) = [op for op in ops if isinstance(op, lsp.CreateFile)]
    (insert,) = [op for op in ops if isinstance(op, lsp.TextDocumentEdit) and op.text_document.uri == created.uri]
    return created.uri, apply_text_edits("", insert.edits)


async def test_a_gen_tests_run_that_finds_a_suspected_bug_gets_a_verified_quick_fix(lsp_session, scripted_llm):
    scripted_llm.add("tester", {"tests": [INCLUDES_N]})
    scripted_llm.default("tester", {"tests": [EMPTY]})  # the follow-up round for the surviving mutants
    async with lsp_session(options=SEARCH_ON) as s:
        (s.root / "calc.py").write_text(FIXED_CALC)  # the workspace's other bug is not this test's
        (s.root / "count.py").write_text(COUNT)
        count_uri = s.open("count.py", COUNT, version=3)
        started = time.monotonic()
        run_id = (await s.command("agentls.generateTests", {"uri": count_uri, "range": _at(BUG_LINE)}))["runId"]
        await s.until(lambda: len(s.state.applied_edits) == 1, timeout=240)
        test_uri, test_text = _created_test_file(s)
        assert "def test_count_up_includes_n" in test_text and "suspected bug" in test_text
        await s.until(lambda: test_uri in s.client.diagnostics, timeout=60)  # the suspected bug, on the test
        asked = len(scripted_llm.requests)
        assert asked == 2 and len(scripted_llm.requests_for("tester")) == 2, "the tests, then the follow-up round"

        (on_line,) = await _wait_for_offer(s, count_uri, _at(BUG_LINE))
        print(f"\nverified quick fix offered {time.monotonic() - started:.1f} s after agentls.generateTests")
        test_diag = next(d for d in s.client.diagnostics[test_uri] if d.severity == lsp.DiagnosticSeverity.Error)
        (on_test,) = await _verified(s, test_uri, test_diag.range, [test_diag])
        assert on_line.title == on_test.title and on_line.title.startswith(TITLE), on_line.title
        assert on_line.kind == lsp.CodeActionKind.QuickFix and on_line.is_preferred
        assert str(on_test.diagnostics[0].code).endswith("::test_count_up_includes_n")

        answer = await s.command(on_line.command.command, *on_line.command.arguments)
        assert answer == {"applied": True, "reason": ""}
        fix = s.state.applied_edits[-1]
        assert fix.label == f"agentls: {on_line.title}" and len(s.state.applied_edits) == 2
        (doc_edit,) = fix.edit.document_changes
        assert doc_edit.text_document.uri == count_uri and doc_edit.text_document.version == 3
        fixed = apply_text_edits(COUNT, doc_edit.edits)
        assert fixed == COUNT.replace("range(1, n)", "range(1, n + 1)")

        # what the editor saves: the generated test file and the fixed module; then the user's own test run
        test_path = s.root / test_uri[len(s.root.as_uri()) + 1:]
        test_path.write_text(test_text)
        (s.root / "count.py").write_text(fixed)
        s.client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=count_uri, version=4),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=fixed)],
            )
        )
        tests_run = (await s.command("agentls.runTests", {}))["runId"]
        await s.until(lambda: any(tests_run in m and " 0 failed" in m for m in s.messages()), timeout=90)
        assert any(run_id in m for m in s.messages())
        assert len(scripted_llm.requests) == asked, "the background search never calls the model"
