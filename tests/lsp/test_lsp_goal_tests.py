"""End to end over stdio: a runTask on a feature no test covers ends with the feature and its generated tests.

The workspace's tests pass before the change, so they cannot tell a right
change from a wrong one: the tester writes tests of the goal first, those
that fail before the change are kept, the coder makes them pass, and the one
workspace edit carries both the feature and the new test file.
"""

from __future__ import annotations

import json

from lsp_support import FIXED_CALC, apply_text_edits
from lsprotocol import types as lsp

GOAL = "add a sub(a, b) function to calc.py that returns a - b"
GOAL_TEST_FILE = "tests/test_goal_add_sub_function_to.py"
TESTER = {
    "tests": [
        {
            "name": "test_sub",
            "code": "from calc import sub\n\n\ndef test_sub():\n    assert sub(5, 3) == 2\n",
            "kind": "pytest",
            "target": "sub",
            "rationale": "sub subtracts",
        },
        {
            "name": "test_add_still_adds",
            "code": "from calc import add\n\n\ndef test_add_still_adds():\n    assert add(2, 2) == 4\n",
            "kind": "pytest",
            "target": "add",
            "rationale": "passes before the change: dropped",
        },
    ]
}
PLAN = {
    "approach": "Add sub.",
    "subtasks": [{"id": "t1", "description": "add sub(a, b) to calc.py", "files": ["calc.py"]}],
}
CODER = {
    "edits": [
        {
            "path": "calc.py",
            "search": "def mul(a, b):\n",
            "replace": "def sub(a, b):\n    return a - b\n\n\ndef mul(a, b):\n",
        }
    ]
}
EXPLAINED = "calc.py had no sub. It has one now, and tests/test_goal_add_sub_function_to.py::test_sub passes."


def _ended(s, run_id: str) -> bool:
    return any(v.kind == "end" for v in s.client.progress_reports.get(f"agentls/{run_id}", []))


def _edits_by_uri(edit: lsp.WorkspaceEdit) -> tuple[list[str], dict[str, list]]:
    created, texts = [], {}
    for change in edit.document_changes:
        if isinstance(change, lsp.CreateFile):
            created.append(change.uri)
        elif isinstance(change, lsp.TextDocumentEdit):
            texts.setdefault(change.text_document.uri, []).extend(change.edits)
    return created, texts


async def test_run_task_without_a_test_for_the_feature_returns_the_feature_and_its_tests(lsp_session, scripted_llm):
    async with lsp_session() as s:
        (s.root / "calc.py").write_text(FIXED_CALC)  # the project's own tests pass: nothing covers sub yet
        scripted_llm.add("tester", TESTER)
        scripted_llm.add("planner", PLAN)
        scripted_llm.add("coder", CODER)
        scripted_llm.add("explainer", EXPLAINED)
        run_id = (await s.command("agentls.runTask", {"goal": GOAL}))["runId"]
        await s.until(lambda: s.state.applied_edits and _ended(s, run_id), timeout=180)

        (applied,) = s.state.applied_edits
        created, texts = _edits_by_uri(applied.edit)
        test_uri = s.uri(GOAL_TEST_FILE)
        assert created == [test_uri], "the generated test file is created by the same edit"
        assert "def sub(a, b):\n    return a - b" in apply_text_edits(FIXED_CALC, texts[s.uri("calc.py")])
        test_text = apply_text_edits("", texts[test_uri])
        assert "from calc import sub" in test_text and "def test_sub():" in test_text
        assert "test_add_still_adds" not in test_text, "a generated test that passed before the change is dropped"
        (annotation,) = applied.edit.change_annotations.values()
        assert annotation.needs_confirmation is True, "the user sees (and may drop) the test file in the preview"

        notice, end = [m for m in s.messages() if run_id in m]
        assert notice.endswith(
            f"wrote 1 test(s) of the goal in {GOAL_TEST_FILE}; they fail now and must pass after the change"
        )
        assert ": ok: 2 passed, 0 failed" in end and end.endswith(EXPLAINED), end
        tester_prompt = json.dumps(scripted_llm.requests_for("tester")[0]["messages"])
        assert "add a sub(a, b) function" in tester_prompt and "import calc" in tester_prompt
        coder_prompt = json.dumps(scripted_llm.requests_for("coder")[0]["messages"])
        assert "test_sub" in coder_prompt, "the coder works from the goal's failing test"
        assert not (s.root / GOAL_TEST_FILE).exists(), "nothing is written behind the editor's back"
