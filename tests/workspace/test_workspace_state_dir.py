"""agentls' own state in a workspace (.agentls/) never shows up in the user's `git status`."""

from __future__ import annotations

import subprocess
from pathlib import Path

FIX_EDIT = {"edits": [{"path": "calc.py", "search": "    return a - b", "replace": "    return a + b"}]}


def _git(project: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=project, capture_output=True, text=True, check=True).stdout


def test_a_run_leaves_git_status_clean_but_for_the_fix(project: Path, scripted_llm, run_fix):
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    _git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
    scripted_llm.add("coder", FIX_EDIT)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--apply")

    assert run.code == 0 and run.json["status"] == "fixed", run.stderr
    assert (project / ".agentls" / "runs" / run.json["run_id"]).is_dir(), "the journal is kept in the workspace"
    assert _git(project, "status", "--porcelain").splitlines() == [" M calc.py"], "only the fix, not .agentls/"
    assert (project / ".agentls" / ".gitignore").read_text().splitlines()[-1] == "*"
