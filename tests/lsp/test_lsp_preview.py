"""End to end over stdio: a verified change is previewed with its reason before anything is applied.

A client with `changeAnnotationSupport` (VS Code's) gets the edit annotated
with `needsConfirmation`; any other client is asked Apply / Show diff /
Discard with `window/showMessageRequest` first.
"""

from __future__ import annotations

import attrs
from lsp_support import CALC, FIXED_CALC, apply_text_edits, script_fix
from lsprotocol import types as lsp
from pytest_lsp import client_capabilities

EXPLAINED = "add returned a + c, an undefined name. It now returns a + b, so tests/test_calc.py::test_add passes."
QUESTION_BUTTONS = ["Apply", "Show diff", "Discard"]


def _no_annotations() -> lsp.ClientCapabilities:
    """VS Code's capabilities without changeAnnotationSupport: documentChanges (versioned edits) but no preview."""
    caps = client_capabilities("visual_studio_code")
    edit = attrs.evolve(caps.workspace.workspace_edit, change_annotation_support=None)
    return attrs.evolve(caps, workspace=attrs.evolve(caps.workspace, workspace_edit=edit))


def _ended(s, run_id: str) -> bool:
    return any(v.kind == "end" for v in s.client.progress_reports.get(f"agentls/{run_id}", []))


def _buttons(question: lsp.ShowMessageRequestParams) -> list[str]:
    return [a.title for a in question.actions or []]


async def _fix(s, scripted_llm) -> tuple[str, str]:
    script_fix(scripted_llm)
    scripted_llm.add("explainer", EXPLAINED)  # the fix passes first time: no reflection
    uri = s.open("calc.py", CALC, version=3)
    run_id = (await s.command("agentls.planAndFix", {"uri": uri}))["runId"]
    return uri, run_id


async def test_a_client_with_annotation_support_previews_the_versioned_edit_with_its_reason(lsp_session, scripted_llm):
    async with lsp_session() as s:
        uri, run_id = await _fix(s, scripted_llm)
        await s.until(lambda: s.state.applied_edits and _ended(s, run_id), timeout=120)
        (applied,) = s.state.applied_edits
        (annotation_id, annotation), = applied.edit.change_annotations.items()
        assert annotation.needs_confirmation is True
        assert annotation.label == f"agentls: Plan and fix ({run_id})" and annotation.description == EXPLAINED
        (doc_edit,) = applied.edit.document_changes
        assert doc_edit.text_document.uri == uri and doc_edit.text_document.version == 3
        assert all(isinstance(e, lsp.AnnotatedTextEdit) and e.annotation_id == annotation_id for e in doc_edit.edits)
        assert apply_text_edits(CALC, doc_edit.edits) == FIXED_CALC
        assert s.state.questions == [], "the client previews: the server asks nothing"
        end = next(m for m in s.messages() if run_id in m)
        assert end.startswith(f"agentls: Plan and fix ({run_id}): fixed:") and end.endswith(EXPLAINED)
        assert f"{EXPLAINED} (" in s.client.progress_reports[f"agentls/{run_id}"][-1].message, "then what it spent"
        trace = await s.command("agentls.showTrace", {"runId": run_id})
        assert (
            f"explanation (model): {EXPLAINED}" in trace["markdown"]
            and f"explanation: {EXPLAINED}" in trace["markdown"]
        )


async def test_preview_edits_off_sends_the_annotation_without_needs_confirmation(lsp_session, scripted_llm):
    async with lsp_session(options={"previewEdits": False}) as s:
        _, run_id = await _fix(s, scripted_llm)
        await s.until(lambda: s.state.applied_edits and _ended(s, run_id), timeout=120)
        (annotation,) = s.state.applied_edits[0].edit.change_annotations.values()
        assert annotation.needs_confirmation is False and annotation.description == EXPLAINED


async def test_without_annotation_support_the_server_asks_and_apply_sends_the_versioned_edit(lsp_session, scripted_llm):
    async with lsp_session(capabilities=_no_annotations()) as s:
        s.state.answer = "Apply"
        _, run_id = await _fix(s, scripted_llm)
        await s.until(lambda: s.state.applied_edits and _ended(s, run_id), timeout=120)
        (question,) = s.state.questions
        assert _buttons(question) == QUESTION_BUTTONS
        assert question.message == f"agentls: Plan and fix ({run_id}): {EXPLAINED}\nApply the change to calc.py?"
        (applied,) = s.state.applied_edits
        (doc_edit,) = applied.edit.document_changes
        assert doc_edit.text_document.version == 3 and apply_text_edits(CALC, doc_edit.edits) == FIXED_CALC
        assert not next(iter(applied.edit.change_annotations.values())).needs_confirmation


async def test_show_diff_opens_the_change_as_a_diff_file_then_apply_applies_it(lsp_session, scripted_llm):
    async with lsp_session(capabilities=_no_annotations()) as s:
        s.state.answers = ["Show diff", "Apply"]
        _, run_id = await _fix(s, scripted_llm)
        await s.until(lambda: s.state.applied_edits and _ended(s, run_id), timeout=120)
        first, second = s.state.questions
        assert _buttons(first) == QUESTION_BUTTONS and _buttons(second) == ["Apply", "Discard"]
        (shown,) = s.client.shown_documents  # pytest-lsp's client records and accepts them
        diff_file = s.root / ".agentls" / "previews" / f"{run_id}.diff"
        assert shown.uri == diff_file.as_uri() and shown.take_focus
        text = diff_file.read_text()
        assert text.startswith(f"# agentls: Plan and fix ({run_id})\n# {EXPLAINED}\n")
        assert "--- a/calc.py\n+++ b/calc.py\n" in text and "-    return a + c\n+    return a + b\n" in text
        (doc_edit,) = s.state.applied_edits[0].edit.document_changes
        assert apply_text_edits(CALC, doc_edit.edits) == FIXED_CALC


async def test_discard_applies_nothing(lsp_session, scripted_llm):
    async with lsp_session(capabilities=_no_annotations()) as s:
        s.state.answers = ["Show diff", "Discard"]
        _, run_id = await _fix(s, scripted_llm)
        await s.until(lambda: _ended(s, run_id), timeout=120)
        assert len(s.state.questions) == 2 and s.state.applied_edits == []
        assert any(run_id in m and "not applied: discarded: nothing was applied" in m for m in s.messages())
        assert (s.root / "calc.py").read_text() == CALC


async def test_dismissing_the_question_applies_nothing(lsp_session, scripted_llm):
    async with lsp_session(capabilities=client_capabilities("neovim")) as s:  # no documentChanges either
        s.state.answer = None
        _, run_id = await _fix(s, scripted_llm)
        await s.until(lambda: _ended(s, run_id), timeout=120)
        (question,) = s.state.questions
        assert _buttons(question) == QUESTION_BUTTONS and s.state.applied_edits == []
