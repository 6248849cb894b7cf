"""Git around `--apply`: refuse to write over uncommitted changes, and commit a fix on its own.

Plain `git` subprocesses (the user's own git, config and identity; no new
dependency), with no hook and no fsmonitor (workspace/gitenv.py): the fix was
verified in the sandbox, and a hook (`pre-commit`, `prepare-commit-msg`,
`commit-msg`, `post-commit`) or an fsmonitor command is code the user did not
ask agentls to run. Outside a git work tree, or without git installed, there
is nothing to check. The commit names only the fix's files (`git commit
--only` semantics), so whatever else the user has staged stays staged and out
of it, and `git revert` undoes exactly the fix.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from agent_core.workspace.gitenv import USER_REPO_OPTIONS

GIT_TIMEOUT_S = 30


class GitError(RuntimeError):
    """A git command failed (the message has git's own words)."""


def _git(workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(["git", *USER_REPO_OPTIONS, *args], cwd=workspace, capture_output=True,
                              text=True, timeout=GIT_TIMEOUT_S, check=False)
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


def commit_files(workspace: Path, paths: list[str], message: str) -> str:
    """Commit exactly `paths` (added, changed or deleted) with `message`; the new commit's id."""
    specs = _pathspecs(paths)
    for args in (("add", "--all", "--", *specs), ("commit", "--no-verify", "--quiet", "-m", message, "--", *specs)):
        done = _git(workspace, *args)
        if done.returncode != 0:
            raise GitError(f"git {args[0]} failed: {(done.stderr or done.stdout).strip()}")
    return _git(workspace, "rev-parse", "HEAD").stdout.strip()
