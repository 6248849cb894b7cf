"""Git around `--apply`: refuse to write over uncommitted changes, and commit a fix on its own.

Plain `git` subprocesses (the user's own git, config and identity; no new
dependency), with no hook and no fsmonitor (workspace/gitenv.py): the fix was
verified in the sandbox, and a hook (`pre-commit`, `prepare-commit-msg`,
`commit-msg`, `post-commit`) or an fsmonitor command is code the user did not
ask agentls to run. Outside a git work tree, or without git installed, there
is nothing to check. The commit holds the fix alone: each fixed file's change
is merged into HEAD's version of the file (`git merge-file`), and the diff
from HEAD is applied (`git apply --cached`) to HEAD's tree in an index of its
own and committed from there. So the user's uncommitted edits, in the fixed
file too, stay uncommitted in the working tree, whatever the user has staged
stays staged, and `git revert` undoes exactly the fix. The user's index then
takes the fix too, so `git status` shows the user's own edits only.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from agent_core.models import FileChange
from agent_core.workspace.gitenv import USER_REPO_OPTIONS

GIT_TIMEOUT_S = 30


class GitError(RuntimeError):
    """A git command failed (the message has git's own words)."""


def _git(workspace: Path, *args: str, index: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run git in `workspace`; with `index`, on that index file instead of the repository's."""
    env = {**os.environ, "GIT_INDEX_FILE": str(index)} if index is not None else None
    try:
        return subprocess.run(["git", *USER_REPO_OPTIONS, *args], cwd=workspace, capture_output=True,
                              text=True, timeout=GIT_TIMEOUT_S, check=False, env=env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"git {args[0]} failed: {exc}") from None


def in_work_tree(workspace: Path) -> bool:
    """Whether `workspace` is inside a git work tree (False without git)."""
    if shutil.which("git") is None:
        return False
    try:
        done = _git(workspace, "rev-parse", "--is-inside-work-tree")
    except GitError:
        return False
    return done.returncode == 0 and done.stdout.strip() == "true"


def _pathspecs(paths: list[str]) -> list[str]:
    return [f":(literal){p}" for p in paths]


def dirty_files(workspace: Path, paths: list[str]) -> list[str]:
    """Which of `paths` (workspace-relative) have uncommitted changes: staged, unstaged or untracked."""
    if not paths:
        return []
    done = _git(workspace, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", *_pathspecs(paths))
    if done.returncode != 0:
        raise GitError(f"git status failed: {done.stderr.strip()}")
    prefix = _git(workspace, "rev-parse", "--show-prefix").stdout.strip()
    entries = [e for e in done.stdout.split("\0") if e]
    found, skip = [], False
    for entry in entries:
        if skip:  # the old name of a rename
            skip = False
            continue
        status, name = entry[:2], entry[3:]
        skip = "R" in status or "C" in status
        found.append(name.removeprefix(prefix))
    return sorted(set(found))


def _checked(workspace: Path, *args: str, index: Path | None = None) -> str:
    done = _git(workspace, *args, index=index)
    if done.returncode != 0:
        raise GitError(f"git {args[0]} failed: {(done.stderr or done.stdout).strip()}")
    return done.stdout


def _head_text(workspace: Path, path: str) -> str | None:
    """The text of `path` (workspace-relative) in HEAD, or None when HEAD has no such file."""
    done = _git(workspace, "show", f"HEAD:./{path}")
    return done.stdout if done.returncode == 0 else None


def _merged(workspace: Path, path: str, head: str, change: FileChange) -> str:
    """HEAD's `head` with the change from `change.original` to `change.new` merged in (git merge-file)."""
    with tempfile.TemporaryDirectory(prefix="agentls-merge-") as tmp:
        texts = {"head": head, "base": change.original or "", "fixed": change.new or ""}
        for name, text in texts.items():
            (Path(tmp) / name).write_text(text, encoding="utf-8")
        done = _git(workspace, "merge-file", "-p", "--quiet", *(str(Path(tmp) / name) for name in texts))
    if done.returncode != 0:
        raise GitError(f"the fix changes lines of {path} that have uncommitted changes: commit it yourself")
    return done.stdout


def _on_head(workspace: Path, change: FileChange) -> FileChange | None:
    """`change` redone on HEAD's version of its file: the fix's lines without the user's uncommitted edits."""
    head = _head_text(workspace, change.path)
    if head is None:
        if change.kind == "create":
            return change
        if change.kind == "delete":
            return None  # a file git never had: nothing to commit
        raise GitError(f"{change.path} was never committed: commit it yourself")
    if change.kind == "delete":
        return FileChange(path=change.path, kind="delete", original=head)
    merged = _merged(workspace, change.path, head, change)
    return None if merged == head else FileChange(path=change.path, kind="modify", original=head, new=merged)


def commit_fix(workspace: Path, changes: list[FileChange], message: str) -> str:
    """Commit `changes` (already written to the working tree) on top of HEAD with `message`, and nothing else;
    the new commit's id.

    Each change is merged into HEAD's version of its file (the run started from the working tree, which may
    hold the user's uncommitted edits), and the diff from HEAD is applied to an index of its own and committed.
    Raises GitError when a fix's lines touch lines the user changed and did not commit: the working tree then
    keeps the fix and the user's edits, and nothing is committed.
    """
    redone = [c for c in (_on_head(workspace, change) for change in changes) if c is not None]
    with tempfile.TemporaryDirectory(prefix="agentls-commit-") as tmp:
        patch, index = Path(tmp) / "fix.diff", Path(tmp) / "index"
        patch.write_text("".join(c.unified_diff() for c in redone), encoding="utf-8")
        head = _git(workspace, "rev-parse", "--verify", "--quiet", "HEAD").returncode == 0
        _checked(workspace, "read-tree", *(["HEAD"] if head else ["--empty"]), index=index)
        _checked(workspace, "apply", "--cached", str(patch), index=index)
        _checked(workspace, "commit", "--no-verify", "--quiet", "-m", message, index=index)
        if _git(workspace, "apply", "--cached", str(patch)).returncode != 0:  # what the user staged there clashes:
            stats = _checked(workspace, "apply", "--numstat", "-z", str(patch)).split("\0")  # paths from the top
            tops = [f":(top,literal){entry.split(chr(9))[-1]}" for entry in stats if entry.count("\t") >= 2]
            _checked(workspace, "reset", "--quiet", "--", *tops)  # the fix's files in the index as committed
    return _checked(workspace, "rev-parse", "HEAD").strip()
