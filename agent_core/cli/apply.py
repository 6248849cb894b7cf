"""`--apply` of `agentls fix | run | resume`: write a verified change set, git-aware, and say what happened.

Before anything is written: every file must be code (workspace/codefiles.py),
or named in `--goal` with `--allow-non-code`; in a git work tree the files the
fix touches must have no uncommitted changes unless `--allow-dirty` (a user's
edit would be mixed into the fix with no way to tell them apart); `--commit`
needs a git work tree. Then the change set is written all or nothing
(workspace/changeset.py) and, with `--commit`, committed on its own so
`git revert` undoes it. The outcome goes into `result.applied` and
`result.commit` and, on a refusal, `result.error`; nothing here raises.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from agent_core.models import RunResult
from agent_core.workspace.changeset import ChangeSetConflict, apply_change_set
from agent_core.workspace.codefiles import code_only_refusal, named_files
from agent_core.workspace.gitstate import GitError, commit_files, dirty_files, in_work_tree


def add_apply_options(p: argparse.ArgumentParser) -> None:
    """The options that shape --apply."""
    p.add_argument("--apply", action="store_true",
                   help="write the verified change to PATH (all or nothing; refused over uncommitted git changes)")
    p.add_argument("--allow-dirty", dest="allow_dirty", action="store_true",
                   help="with --apply in a git work tree: apply even over uncommitted changes to the fix's files")
    p.add_argument("--commit", action="store_true",
                   help="with --apply: commit the fix on its own (message: its explanation); git revert undoes it")
    p.add_argument("--allow-non-code", dest="allow_non_code", action="store_true",
                   help="let a fix change a file that is not the source tree's Python (a dotfile, CI, editor "
                        "tasks, config) when --goal names that file")


def commit_message(result: RunResult) -> str:
    """The fix's commit message: a short subject, the explanation, the run id."""
    body = (result.explanation or "").strip()
    subject = body.split(". ")[0].splitlines()[0] if body else f"fix {', '.join(result.change_set.files)}"
    subject = subject if len(subject) <= 68 else subject[:67] + "…"
    return f"agentls: {subject}\n\n{body + chr(10) + chr(10) if body else ''}agentls run {result.run_id}\n"


def precheck(args: argparse.Namespace, workspace: Path) -> str | None:
    """What makes the options unusable before any run: --commit outside a git work tree, or without --apply."""
    if getattr(args, "commit", False) and not args.apply:
        return "--commit commits an applied fix: add --apply"
    if getattr(args, "commit", False) and not in_work_tree(workspace):
        return f"--commit needs a git work tree; {workspace} is not in one"
    return None


def _refusal(args: argparse.Namespace, workspace: Path, goal: str | None, result: RunResult) -> str | None:
    files = result.change_set.files
    named = named_files(files, goal) if getattr(args, "allow_non_code", False) else set()
    if result.goal_tests:
        named.add(result.goal_tests.path)  # the tester's new test file of a task
    refused = code_only_refusal(workspace, result.change_set.changes, named,
                                "a fix changes such a file only when --goal names it, with --allow-non-code")
    if refused:
        return refused
    git = in_work_tree(workspace)
    if getattr(args, "commit", False) and not git:
        return "--commit needs a git work tree"
    if git and not getattr(args, "allow_dirty", False):
        dirty = dirty_files(workspace, files)
        if dirty:
            return (f"uncommitted changes to {', '.join(dirty)}: commit or stash them first, "
                    "or rerun with --allow-dirty")
    return None


def apply_result(args: argparse.Namespace, workspace: Path, goal: str | None, result: RunResult) -> None:
    """Apply `result`'s verified change set on --apply; record the outcome in `result`."""
    result.applied = False
    if not (args.apply and result.status == "fixed" and result.change_set.changes):
        return
    try:
        why = _refusal(args, workspace, goal, result)
        if why is None:
            apply_change_set(workspace, result.change_set)
            result.applied = True
            if getattr(args, "commit", False):
                result.commit = commit_files(workspace, result.change_set.files, commit_message(result))
    except (ChangeSetConflict, GitError, OSError) as exc:
        why = str(exc)
    if why is not None:
        done = "applied, but not committed" if result.applied else "not applied"
        result.error = f"{done}: {why}"
        result.error_kind = "bad_input"
