"""`--apply` of `agentls fix | run | resume`: write a verified change set, git-aware, and say what happened.

Before the run (`precheck`): `--commit` needs `--apply` and a git work tree,
and in a git work tree `--apply` is refused while a code file a fix could
change (not a test; workspace/codefiles.py) has uncommitted changes, unless
`--allow-dirty`: a user's edit would sit in the fixed file beside the fix.
After the run, before anything is written: every file must be code, or named
in `--goal` with `--allow-non-code`, and the files the fix touches are checked
for uncommitted changes again (the user may have edited during the run). Then
the change set is written all or nothing (workspace/changeset.py) and, with
`--commit`, its diff alone is committed (workspace/gitstate.py): the user's
uncommitted edits, in the fixed file too, stay uncommitted, and `git revert`
undoes the fix alone. The outcome goes into `result.applied` and
`result.commit` and, on a refusal, `result.error`; nothing here raises.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from agent_core.models import RunResult
from agent_core.workspace.changeset import ChangeSetConflict, apply_change_set
from agent_core.workspace.codefiles import code_only_refusal, name_not_code_reason, named_files
from agent_core.workspace.gitstate import GitError, commit_fix, dirty_files, in_work_tree
from agent_core.workspace.testfiles import is_protected


def add_apply_options(p: argparse.ArgumentParser) -> None:
    """The options that shape --apply."""
    p.add_argument("--apply", action="store_true",
                   help="write the verified change to PATH (all or nothing; refused over uncommitted git changes)")
    p.add_argument("--allow-dirty", dest="allow_dirty", action="store_true",
                   help="with --apply in a git work tree: apply even over uncommitted changes to code (they stay "
                        "uncommitted)")
    p.add_argument("--commit", action="store_true",
                   help="with --apply: commit the fix alone (message: its explanation); git revert undoes it")
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
    """What makes the options unusable before any run: --commit outside a git work tree, or without --apply;
    --apply over uncommitted changes to code a fix could change, without --allow-dirty."""
    if getattr(args, "commit", False) and not args.apply:
        return "--commit commits an applied fix: add --apply"
    git = in_work_tree(workspace)
    if getattr(args, "commit", False) and not git:
        return f"--commit needs a git work tree; {workspace} is not in one"
    if git and getattr(args, "apply", False) and not getattr(args, "allow_dirty", False):
        try:
            dirty = [path for path in dirty_files(workspace, ["."])
                     if name_not_code_reason(path) is None and not is_protected(path)]
        except GitError as exc:
            return str(exc)
        if dirty:
            shown = ", ".join(dirty[:5]) + (f" and {len(dirty) - 5} more" if len(dirty) > 5 else "")
            return (f"uncommitted changes to {shown}, code a fix may change: commit or stash them first, or rerun "
                    "with --allow-dirty (they stay yours: a --commit holds the fix alone)")
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
                result.commit = commit_fix(workspace, result.change_set.changes, commit_message(result))
    except (ChangeSetConflict, GitError, OSError) as exc:
        why = str(exc)
    if why is not None:
        done = "applied, but not committed" if result.applied else "not applied"
        result.error = f"{done}: {why}"
        result.error_kind = "bad_input"
