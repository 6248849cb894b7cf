"""`--apply` in a git work tree: refused before the run over the user's uncommitted edits, `--allow-dirty`,
`--commit` holding the fix alone (the user's pending edits stay theirs).

A real git repository in a temp folder, the real CLI, sandbox and scripted model.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agent_core.models import FileChange
from agent_core.workspace.gitstate import GitError, commit_fix
from engine_support import FIX_EDIT

BUGGY = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid", *args], cwd=root,
                          check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(project: Path, scripted_llm, monkeypatch: pytest.MonkeyPatch) -> Path:
    for key in ("AUTHOR", "COMMITTER"):  # the fix's commit needs an identity, whatever the machine's git config
        monkeypatch.setenv(f"GIT_{key}_NAME", "t")
        monkeypatch.setenv(f"GIT_{key}_EMAIL", "t@t.invalid")
    (project / ".gitignore").write_text(".agentls/\n")
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    _git(project, "commit", "-qm", "start")
    scripted_llm.default("coder", FIX_EDIT)
    scripted_llm.default("explainer", "add subtracted. It adds now, so test_add passes.")
    return project


def test_uncommitted_edits_to_code_refuse_the_apply_before_the_run(repo: Path, scripted_llm, run_fix):
    edited = BUGGY + "\n\n# the user's work in progress\n"
    (repo / "calc.py").write_text(edited)
    (repo / "test_calc.py").write_text((repo / "test_calc.py").read_text() + "\n# a test being written\n")

    run = run_fix(str(repo), "--base-url", scripted_llm.base_url, "--json", "--apply")

    assert run.code == 2, run.stderr
    assert run.json["status"] == "error" and run.json["applied"] is False
    assert "uncommitted changes to calc.py," in run.json["error"] and "--allow-dirty" in run.json["error"]
    assert "test_calc.py" not in run.json["error"], "a fix never changes a test: an edit there is no obstacle"
    assert scripted_llm.requests == [] and run.json["run_id"] == "", "refused before the run, not after it"
    assert (repo / "calc.py").read_text() == edited

    allowed = run_fix(str(repo), "--base-url", scripted_llm.base_url, "--json", "--apply", "--allow-dirty")

    assert allowed.code == 0 and allowed.json["applied"] is True, allowed.stderr
    assert (repo / "calc.py").read_text() == edited.replace("a - b", "a + b")


def test_a_dirty_file_the_fix_does_not_touch_is_no_obstacle_and_commit_makes_the_fix_its_own_commit(
    repo: Path, scripted_llm, run_fix
):
    (repo / "README.md").write_text("A tiny calculator, being edited.\n")
    _git(repo, "add", "README.md")  # staged by the user: it must stay staged and out of the fix's commit

    run = run_fix(str(repo), "--base-url", scripted_llm.base_url, "--json", "--apply", "--commit")

    assert run.code == 0 and run.json["applied"] is True, run.stderr
    sha = run.json["commit"]
    assert sha and _git(repo, "rev-parse", "HEAD").strip() == sha
    assert _git(repo, "show", "--name-only", "--format=%s", sha).split()[0:1] == ["agentls:"]
    assert _git(repo, "show", "--name-only", "--format=", sha).split() == ["calc.py"]
    message = _git(repo, "log", "-1", "--format=%B")
    assert message.startswith("agentls: add subtracted") and f"agentls run {run.json['run_id']}" in message
    assert _git(repo, "status", "--porcelain").splitlines() == ["M  README.md"]
    _git(repo, "commit", "-qm", "the user's own change")
    _git(repo, "revert", "--no-edit", sha)
    assert (repo / "calc.py").read_text() == BUGGY, "git revert undoes the fix"


def test_commit_outside_a_git_work_tree_is_refused_before_the_run(project: Path, scripted_llm, run_fix):
    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--apply", "--commit")

    assert run.code == 2 and run.json["applied"] is False and run.json["status"] == "error"
    assert "--commit needs a git work tree" in run.json["error"]
    assert (project / "calc.py").read_text() == BUGGY and scripted_llm.requests == []


def test_commit_over_a_pending_edit_in_the_fixed_file_commits_the_fix_alone(repo: Path, scripted_llm, run_fix):
    edited = '"""A tiny calculator (a docstring the user has not committed)."""\n\n' + BUGGY
    (repo / "calc.py").write_text(edited)

    run = run_fix(str(repo), "--base-url", scripted_llm.base_url, "--json", "--apply", "--commit", "--allow-dirty")

    assert run.code == 0 and run.json["applied"] is True, run.stderr
    sha = run.json["commit"]
    shown = _git(repo, "show", "--format=", sha)
    assert "-    return a - b\n+    return a + b\n" in shown and "docstring" not in shown, shown
    assert (repo / "calc.py").read_text() == edited.replace("a - b", "a + b"), "the fix and the user's edit"
    pending = _git(repo, "diff", "HEAD")
    changed = [line for line in pending.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert changed == ['+"""A tiny calculator (a docstring the user has not committed)."""', "+"], pending
    assert _git(repo, "diff", "--cached") == "", "nothing staged behind the user's back"
    _git(repo, "commit", "-qam", "the user's own docstring")
    _git(repo, "revert", "--no-edit", sha)
    assert (repo / "calc.py").read_text() == edited, "git revert undoes the fix and keeps the user's edit"


def test_a_fix_on_lines_the_user_changed_is_not_committed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    for key in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{key}_NAME", "t")
        monkeypatch.setenv(f"GIT_{key}_EMAIL", "t@t.invalid")
    root = tmp_path / "repo"
    root.mkdir()
    (root / "calc.py").write_text(BUGGY)
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "start")
    started = BUGGY.replace("return a - b", "return a - b  # the user's note")  # the line the fix changes
    fixed = started.replace("a - b", "a + b")
    (root / "calc.py").write_text(fixed)
    head = _git(root, "rev-parse", "HEAD")

    with pytest.raises(GitError, match="changes lines of calc.py that have uncommitted changes"):
        commit_fix(root, [FileChange(path="calc.py", kind="modify", original=started, new=fixed)], "agentls: fix")

    assert _git(root, "rev-parse", "HEAD") == head and _git(root, "diff", "--cached") == ""
    assert (root / "calc.py").read_text() == fixed
