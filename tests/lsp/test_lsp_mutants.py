"""Surviving mutants of a gen-tests run in the editor: Information diagnostics and "Generate a test for this".

The real server over stdio (pytest-lsp), the scripted model, the real sandbox.
"""

from __future__ import annotations

import asyncio

from lsprotocol import types as lsp

ZERO_TEST = {
    "name": "test_mul_zero",
    "code": "from calc import mul\n\n\ndef test_mul_zero():\n    assert mul(0, 5) == 0\n",
    "kind": "pytest",
    "target": "mul",
    "rationale": "zero times anything",
}


def _survivors(s, uri: str) -> list[lsp.Diagnostic]:
    return [d for d in s.client.diagnostics.get(uri, []) if d.severity == lsp.DiagnosticSeverity.Information]


async def test_surviving_mutants_become_information_diagnostics_with_an_action(lsp_session, scripted_llm):
    scripted_llm.default("tester", {"tests": [ZERO_TEST]})  # the follow-up gets the same test: it kills no survivor
    async with lsp_session() as s:
        uri = s.open("calc.py")
        mul_line = {"start": {"line": 5, "character": 4}, "end": {"line": 5, "character": 4}}
        await s.command("agentls.generateTests", {"uri": uri, "range": mul_line})
        await s.until(lambda: _survivors(s, uri), timeout=240)

        # mul(0, 5) == 0 kills `a` -> `a - 1` and `a + 1`; these four changes go unnoticed
        diags = _survivors(s, uri)
        assert sorted(d.message for d in diags) == sorted(
            [
                "no test notices if `*` becomes `/` here",
                "no test notices if `*` becomes `//` here",
                "no test notices if `b` becomes `(b + 1)` here",
                "no test notices if `b` becomes `(b - 1)` here",
            ]
        )
        assert {(d.range.start.line, d.source, d.code) for d in diags} == {(5, "agentls", "agentls.survivingMutant")}

        params = lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            range=diags[0].range,
            context=lsp.CodeActionContext(diagnostics=[]),
        )
        actions = await asyncio.wait_for(s.client.text_document_code_action_async(params), 10)
        by_title = {a.title: a for a in actions}
        action = by_title["Generate a test for this"]
        assert action.kind == lsp.CodeActionKind.QuickFix and action.diagnostics[0].code == "agentls.survivingMutant"
        assert action.command.command == "agentls.generateTests"
        assert action.command.arguments[0]["uri"] == uri
        assert action.command.arguments[0]["range"]["start"]["line"] == 5
        # a surviving mutant is no failure: Plan and fix stays a rewrite, not a quick fix
        assert by_title["Plan and fix"].kind == lsp.CodeActionKind.RefactorRewrite
