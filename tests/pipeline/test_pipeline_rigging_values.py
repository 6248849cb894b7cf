"""The values the tests compare are part of the tests (issue 38): a root `fixtures.py` the tests import their
expected values from is protected like a test file, in a fix run and in a patch verified for another agent.

The module is found by what the tests import, not by its name (workspace/testfiles.py
`imported_data_entries`): a module holding only values that no code outside the tests imports. A constants
module the code under test imports stays the code's (a wrong constant is a bug to fix). `agentls fix` in-process
with the scripted coder, `verify_patch` as the MCP tool calls it, both on a real sandbox.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from agent_core.checks.verify_patch import verify_patch
from agent_core.settings import Settings
from agent_core.workspace.testfiles import imported_data_entries
from engine_support import journal_records, make_project, snapshot

PROJECT = {
    "calc.py": "from limits import BIGGEST\n\n\ndef add(a, b):\n    return min(a - b, BIGGEST)\n",
    "limits.py": "BIGGEST = 100\n",
    "fixtures.py": "EXPECTED = 5\n",
    "test_calc.py": ("from calc import add\nfrom fixtures import EXPECTED\nfrom limits import BIGGEST\n\n\n"
                     "def test_add():\n    assert add(2, 3) == EXPECTED\n\n\n"
                     "def test_cap():\n    assert add(500, 1) == BIGGEST\n"),
}
EDIT_EXPECTED = {"edits": [{"path": "fixtures.py", "search": "EXPECTED = 5", "replace": "EXPECTED = -1"}],
                 "explanation": "the expectation was wrong"}
DIFF = "--- a/fixtures.py\n+++ b/fixtures.py\n@@ -1 +1 @@\n-EXPECTED = 5\n+EXPECTED = -1\n"


def test_only_the_values_the_tests_alone_import_are_theirs(tmp_path: Path):
    project = make_project(tmp_path / "proj", PROJECT)
    assert imported_data_entries(project, ["test_calc.py"], {}) == {"fixtures.py": b"EXPECTED = 5\n"}


def test_an_edit_of_the_expected_value_ends_unfixed(tmp_path: Path, scripted_llm, run_fix):
    project = make_project(tmp_path / "proj", PROJECT)
    scripted_llm.default("coder", EDIT_EXPECTED)
    scripted_llm.default("reflector", {"hypothesis": "unsure", "file": "calc.py", "change": "?", "confidence": "low"})
    before = snapshot(project)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--max-iterations", "2", "--apply")

    assert run.json["status"] == "unfixed" and snapshot(project) == before, run.json
    records = journal_records(project, run.json["run_id"])
    protected = [r for r in records if r["type"] == "protected"]
    assert [(r["files"], r["why"]) for r in protected] == [(["fixtures.py"], "the values the tests import")]
    undone = [r for r in records if r["type"] == "tool_call" and not r["ok"] and r["args"].get("path") == "fixtures.py"]
    assert undone, "the coder's edit of the expected value was undone and said so"


def test_a_patch_of_the_expected_value_is_refused(tmp_path: Path):
    project = make_project(tmp_path / "proj", PROJECT)
    before = snapshot(project)

    verdict = asyncio.run(verify_patch(Settings(), project, DIFF, apply=True))

    assert not verdict.verified and not verdict.applied
    assert verdict.refused == ("fixtures.py holds the values the tests import: a patch cannot change the tests "
                               "that judge it")
    assert snapshot(project) == before
