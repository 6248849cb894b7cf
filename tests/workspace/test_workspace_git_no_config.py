"""Git runs no program a repository chooses (issue 38): a copy's git has no configuration at all; the user's
own repository keeps the user's configuration but runs no hook and no fsmonitor.

The planted commands write a marker file outside the tree; the tests look for it afterwards.
"""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

import pytest

from agent_core.checks.diffs import apply_diff, read_diff
from agent_core.models import FileChange
from agent_core.workspace.gitstate import commit_fix, dirty_files

FIX = "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"
CALC = "def add(a, b):\n    return a - b\n"


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    (tmp_path / "host").mkdir()
    return tmp_path / "host" / f"PWNED-{uuid.uuid4().hex}"


def git_dir_layout(root: Path, marker: Path) -> Path:
    """A project root that is also a git directory whose config names a filter for every file."""
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "--bare", str(root)], check=True)
    attributes = root.parent / "attributes"
    attributes.write_text("* filter=x diff=x\n")
    with open(root / "config", "a") as config:
        config.write(f'[filter "x"]\n\tclean = touch {marker}.clean\n\tsmudge = touch {marker}.smudge\n'
                     f'[diff "x"]\n\ttextconv = touch {marker}.textconv\n'
                     f"[core]\n\tattributesFile = {attributes}\n\tfsmonitor = touch {marker}.fsmonitor\n")
    (root / ".gitattributes").write_text("* filter=x\n")
    (root / "calc.py").write_text(CALC)
    return root


def test_a_diff_applied_to_a_tree_laid_out_as_a_git_directory_runs_no_filter(tmp_path: Path, marker: Path):
    root = git_dir_layout(tmp_path / "proj", marker)
    diff = read_diff(FIX, root)
    apply_diff(diff, root)
    assert (root / "calc.py").read_text() == CALC.replace("a - b", "a + b")
    assert list(marker.parent.iterdir()) == [], "a command of the tree's git config ran on the host"


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid", *args], cwd=root, check=True,
                   capture_output=True)


def test_commit_in_the_users_repository_runs_no_hook_and_no_fsmonitor(
    tmp_path: Path, marker: Path, monkeypatch: pytest.MonkeyPatch
):
    for key in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{key}_NAME", "t")
        monkeypatch.setenv(f"GIT_{key}_EMAIL", "t@t.invalid")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "calc.py").write_text(CALC)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "start")
    for hook in ("pre-commit", "prepare-commit-msg", "commit-msg", "post-commit"):
        (repo / ".git" / "hooks" / hook).write_text(f"#!/bin/sh\ntouch {marker}.{hook}\n")
        (repo / ".git" / "hooks" / hook).chmod(0o755)
    _git(repo, "config", "core.fsmonitor", f"touch {marker}.fsmonitor; false")
    (repo / "calc.py").write_text(CALC.replace("a - b", "a + b"))
    assert dirty_files(repo, ["calc.py"]) == ["calc.py"]
    fixed = CALC.replace("a - b", "a + b")
    commit = commit_fix(repo, [FileChange(path="calc.py", kind="modify", original=CALC, new=fixed)], "fix add")
    assert len(commit) == 40
    assert list(marker.parent.iterdir()) == [], "a hook or the fsmonitor of the repository ran"
