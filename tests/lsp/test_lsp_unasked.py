"""End to end over stdio: a client that cannot be asked (Helix) loses no fix.

Its capabilities declare neither `window.showMessage` (it never answers
`window/showMessageRequest`) nor `changeAnnotationSupport`: the verified
change waits as the code action "Apply the fix of run X", which applies it
as one versioned edit; nothing is sent unasked and no question is sent.
"""

from __future__ import annotations

import attrs
from lsp_support import CALC, FIXED_CALC, apply_text_edits, script_fix
from lsprotocol import types as lsp
from pytest_lsp import client_capabilities


def _unaskable() -> lsp.ClientCapabilities:
    """VS Code's capabilities without window.showMessage and without changeAnnotationSupport (as Helix sends)."""
    caps = client_capabilities("visual_studio_code")
    edit = attrs.evolve(caps.workspace.workspace_edit, change_annotation_support=None)
    return attrs.evolve(caps, workspace=attrs.evolve(caps.workspace, workspace_edit=edit),
                        window=attrs.evolve(caps.window, show_message=None))


def _ended(s, run_id: str) -> bool:
    return any(v.kind == "end" for v in s.client.progress_reports.get(f"agentls/{run_id}", []))


def _params(uri: str, line: int) -> lsp.CodeActionParams:
    rng = lsp.Range(start=lsp.Position(line, 0), end=lsp.Position(line, 0))
    return lsp.CodeActionParams(text_document=lsp.TextDocumentIdentifier(uri=uri), range=rng,
                                context=lsp.CodeActionContext(diagnostics=[]))


async def _waiting_fix(s, scripted_llm) -> tuple[str, str]:
    script_fix(scripted_llm)
    uri = s.open("calc.py", CALC, version=3)
    run_id = (await s.command("agentls.planAndFix", {"uri": uri}))["runId"]
    await s.until(lambda: _ended(s, run_id), timeout=120)
    return uri, run_id


async def test_the_fix_waits_as_a_code_action_and_applies_on_demand(lsp_session, scripted_llm):
    async with lsp_session(capabilities=_unaskable()) as s:
        uri, run_id = await _waiting_fix(s, scripted_llm)
        title = f"Apply the fix of run {run_id}"
        assert s.state.questions == [] and s.state.applied_edits == [], "nothing asked, nothing sent unasked"
        end = next(m for m in s.messages() if run_id in m)
        diff_file = s.root / ".agentls" / "previews" / f"{run_id}.diff"
        assert f'the change waits: choose the code action "{title}" in calc.py (diff: {diff_file})' in end
        assert "-    return a + c\n+    return a + b\n" in diff_file.read_text()
        (action,) = [a for a in await s.client.text_document_code_action_async(_params(uri, 5)) if a.title == title]
        assert action.kind == lsp.CodeActionKind.QuickFix and action.command.command == "agentls.applyRunFix"
        answer = await s.command("agentls.applyRunFix", *action.command.arguments)
        assert answer == {"runId": run_id, "applied": True, "reason": ""}
        (applied,) = s.state.applied_edits
        (doc_edit,) = applied.edit.document_changes
        assert doc_edit.text_document.uri == uri and doc_edit.text_document.version == 3
        assert apply_text_edits(CALC, doc_edit.edits) == FIXED_CALC
        assert s.state.questions == []
        after = await s.client.text_document_code_action_async(_params(uri, 5))
        assert title not in [a.title for a in after], "applied: no longer offered"
        again = await s.command("agentls.applyRunFix", {"runId": run_id})
        assert again["applied"] is False and "no change of run" in again["reason"]


async def test_a_waiting_fix_is_refused_and_withdrawn_when_the_buffer_changed(lsp_session, scripted_llm):
    async with lsp_session(capabilities=_unaskable()) as s:
        uri, run_id = await _waiting_fix(s, scripted_llm)
        change = lsp.TextDocumentContentChangePartial(
            range=lsp.Range(start=lsp.Position(0, 0), end=lsp.Position(0, 0)), text="# mine\n")
        s.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=4), content_changes=[change]))
        answer = await s.command("agentls.applyRunFix", {"runId": run_id})
        assert answer["applied"] is False
        assert answer["reason"] == "calc.py changed since the run read it (version 3 -> 4)"
        assert s.state.applied_edits == [] and s.state.questions == []
        assert any(f"the fix of run {run_id} was not applied" in m for m in s.messages())
        actions = await s.client.text_document_code_action_async(_params(uri, 5))
        assert f"Apply the fix of run {run_id}" not in [a.title for a in actions]


async def test_the_safety_gate_rejects_without_asking(lsp_session, scripted_llm):
    eval_fix = {"edits": [{"path": "calc.py", "search": "    return a + c\n", "replace": "    return eval('a + b')\n"}]}
    script_fix(scripted_llm, coder_answer=eval_fix)
    async with lsp_session(capabilities=_unaskable()) as s:
        uri = s.open("calc.py", CALC, version=3)
        run_id = (await s.command("agentls.planAndFix", {"uri": uri}))["runId"]
        await s.until(lambda: _ended(s, run_id), timeout=120)
        assert s.state.questions == [] and s.state.applied_edits == []
        rejected = [m for m in s.messages() if "failed the safety gate" in m]
        assert rejected and rejected[0].endswith("Rejected: this editor cannot be asked.") and "eval" in rejected[0]
        waiting = s.root / ".agentls" / "previews" / f"{run_id}.diff"
        assert not waiting.exists() or "eval(" not in waiting.read_text(), "the rejected change never waits"


async def test_a_failed_run_names_its_best_attempt_instead_of_asking(lsp_session, scripted_llm):
    two_bugs = "def add(a, b):\n    return a + c\n\n\ndef mul(a, b):\n    return a ** b\n"
    two_tests = ("from calc import add, mul\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\n"
                 "def test_mul():\n    assert mul(2, 3) == 6\n")
    script_fix(scripted_llm)  # fixes add only: mul stays wrong, the run ends unfixed with a better attempt
    async with lsp_session(options={"maxIterations": 1}, capabilities=_unaskable()) as s:
        (s.root / "tests" / "test_calc.py").write_text(two_tests)
        uri = s.open("calc.py", two_bugs)
        run_id = (await s.command("agentls.planAndFix", {"uri": uri}))["runId"]
        best = s.root / ".agentls" / "previews" / f"{run_id}-best-attempt.diff"
        await s.until(lambda: any(str(best) in m for m in s.messages()), timeout=120)
        end = next(m for m in s.messages() if str(best) in m)
        assert end.startswith(f"agentls: Plan and fix ({run_id}): unfixed")
        assert "not verified: 1 passed, 1 failed" in end
        assert "+    return a + b" in best.read_text()
        assert s.state.questions == [] and s.state.applied_edits == []
