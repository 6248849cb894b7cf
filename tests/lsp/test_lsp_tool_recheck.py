"""End to end over stdio: Plan and fix on a ruff diagnostic is verified by running ruff again, plus the tests.

The project's tests pass before and after any harmless edit, so they cannot
judge a lint fix. The first candidate leaves the unused import (it documents
`mul` instead): the tests pass, ruff still reports F401 on it, and it is not
accepted; the second removes the import and is the one edit the editor gets.
"""

from __future__ import annotations

import json

from lsp_support import FIXED_CALC, apply_text_edits
from lsprotocol import types as lsp

UNUSED = "import os\n\n\n" + FIXED_CALC
RUFF = lsp.Diagnostic(
    range=lsp.Range(start=lsp.Position(line=0, character=7), end=lsp.Position(line=0, character=9)),
    message="`os` imported but unused", source="Ruff", code="F401", severity=lsp.DiagnosticSeverity.Warning,
)
KEEPS_IT = {"edits": [{"path": "calc.py", "search": "def mul(a, b):\n",
                       "replace": "def mul(a, b):\n    \"\"\"The product of a and b.\"\"\"\n"}]}
REMOVES_IT = {"edits": [{"path": "calc.py", "search": "import os\n\n\ndef add", "replace": "def add"}]}
PLAN = {"approach": "Drop the import.", "subtasks": [{"id": "t1", "description": "remove the unused import",
                                                       "files": ["calc.py"]}]}


def _ended(s, run_id: str) -> bool:
    return any(v.kind == "end" for v in s.client.progress_reports.get(f"agentls/{run_id}", []))


def _journal(root, run_id: str) -> list[dict]:
    path = root / ".agentls" / "runs" / run_id / "journal.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_a_ruff_diagnostic_fix_is_rechecked_with_ruff(lsp_session, scripted_llm):
    async with lsp_session(options={"samples": 1}) as s:
        (s.root / "calc.py").write_text(UNUSED)
        uri = s.open("calc.py", UNUSED, version=2)
        params = lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri), range=RUFF.range,
            context=lsp.CodeActionContext(diagnostics=[RUFF]))
        actions = await s.client.text_document_code_action_async(params)
        fix = next(a for a in actions if a.title.startswith("Plan and fix"))
        scripted_llm.default("planner", PLAN)
        scripted_llm.add("coder", KEEPS_IT)
        scripted_llm.default("coder", REMOVES_IT)
        scripted_llm.default("reflector", {"hypothesis": "the import is still there", "file": "calc.py",
                                           "change": "remove import os", "confidence": "high"})
        scripted_llm.default("explainer", "calc.py imported os without using it. The import is gone.")
        run_id = (await s.command(fix.command.command, *fix.command.arguments))["runId"]
        await s.until(lambda: s.state.applied_edits and _ended(s, run_id), timeout=180)

        (applied,) = s.state.applied_edits
        (doc_edit,) = applied.edit.document_changes
        assert apply_text_edits(UNUSED, doc_edit.edits) == FIXED_CALC, "only the candidate that clears F401"
        checks = [r for r in _journal(s.root, run_id) if r["type"] == "tool_check"]
        assert {r["tool"] for r in checks} == {"ruff"}
        assert [bool(r["counted"]) for r in checks] == [True, True, False], "baseline, kept-import, removed-import"
        assert "F401" in checks[1]["counted"][0]
        coder_prompts = [json.dumps(r["messages"]) for r in scripted_llm.requests_for("coder")]
        assert len(coder_prompts) == 2 and "F401" in coder_prompts[1], "the coder hears ruff's finding remains"
        end = next(m for m in s.messages() if run_id in m and ": fixed:" in m)
        assert end.endswith("The import is gone."), end
