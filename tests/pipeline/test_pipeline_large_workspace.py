"""`agentls fix` on a project with `.gitignore`d output: the run never sees it, the fix still lands."""

from __future__ import annotations

from pathlib import Path

from engine_support import BUGGY_CALC, FIX_EDIT, make_project, snapshot

IGNORED = {
    ".gitignore": "artifacts/\n*.log\n",
    "artifacts/model.bin": "x" * 100_000,
    "artifacts/stale_calc.py": "def add(a, b):\n    return 0\n",
    "debug.log": "noise\n",
    # run by the sandboxed suite: passes only where the ignored paths were left out of the copy
    "test_shadow.py": (
        "import os\n\n\ndef test_ignored_paths_are_not_in_the_copy():\n"
        "    assert not os.path.exists('artifacts') and not os.path.exists('debug.log')\n"
    ),
}


def test_fix_runs_without_the_ignored_paths_and_applies_only_the_fix(tmp_path: Path, scripted_llm, run_fix):
    project = make_project(tmp_path / "proj", {**BUGGY_CALC, **IGNORED})
    scripted_llm.add("coder", FIX_EDIT)
    before = snapshot(project)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--apply")

    assert run.code == 0, run.stderr
    assert run.json["status"] == "fixed" and run.json["files_changed"] == ["calc.py"]
    assert run.json["tests"] == {"passed": 3, "failed": 0, "errors": 0, "skipped": 0}
    after = snapshot(project)
    assert after["calc.py"] != before["calc.py"]
    assert {rel: data for rel, data in after.items() if rel != "calc.py"} == {
        rel: data for rel, data in before.items() if rel != "calc.py"}
