"""What a change may write: the source tree's Python files, and other files only when the user named them.

A candidate that also writes `.envrc`, `.github/workflows/*.yml`,
`.vscode/tasks.json`, a config file or a `.pth` gets code run on the user's
machine outside any sandbox (a shell that loads the directory, CI, an editor
task on folder open). So a fix is code only: a `.py`/`.pyi` file with no
hidden folder or name in its path, not an interpreter start-up hook, and, when
the run creates it, placed beside Python code that already exists (the nearest
existing folder holds a `.py` file). Anything else is dropped from the change
set with a reason, unless the user's own goal names the file; then the user
approves it, shown with its diff (the gate, pipeline/nodes/gate.py).

`code_only_refusal` is the one rule every front door applies before it
writes anything to the project (the CLI's `--apply`, the editor's workspace
edit, MCP `verify_patch`'s `apply`): a file that is not code rides along only
when the user named it (the CLI: `--goal` with `--allow-non-code`; the editor:
the run's goal, which the gate asked about; MCP: the call's own list of
files), else the whole change is refused with a reason naming each file.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from agent_core.models import FileChange

CODE_SUFFIXES = (".py", ".pyi")
# Python runs these on start-up when they are on sys.path: never part of a fix unasked.
STARTUP_HOOKS = frozenset({"sitecustomize.py", "usercustomize.py"})


@dataclass(frozen=True)
class DroppedFile:
    """A file a candidate changed that is not part of the fix, and why."""

    path: str
    reason: str

    def as_json(self) -> dict[str, str]:
        return {"path": self.path, "reason": self.reason}


def _beside_python(workspace: Path, rel: PurePosixPath) -> bool:
    """Whether the nearest folder of `rel` that exists in the workspace already holds a Python file."""
    folder = workspace.joinpath(*rel.parent.parts)
    while not folder.is_dir() and folder != workspace:
        folder = folder.parent
    try:
        return any(p.suffix == ".py" and p.is_file() for p in folder.iterdir())
    except OSError:
        return False


def name_not_code_reason(path: str) -> str | None:
    """Why a file is, by its workspace-relative path alone, never part of a fix unasked; None when it may be."""
    rel = PurePosixPath(path)
    if rel.suffix not in CODE_SUFFIXES:
        return "not a Python source file"
    if any(part.startswith(".") for part in rel.parts):
        return "a hidden file or folder"
    if rel.name in STARTUP_HOOKS:
        return "an interpreter start-up hook"
    return None


def not_code_reason(workspace: Path, change: FileChange) -> str | None:
    """Why `change` is not a change to the source tree's Python code, or None when it is."""
    named = name_not_code_reason(change.path)
    if named is not None:
        return named
    if change.kind == "create" and not _beside_python(Path(workspace), PurePosixPath(change.path)):
        return "a new file outside the source tree"
    return None


def named_in_goal(path: str, goal: str | None) -> bool:
    """Whether the user's goal names the file: its workspace-relative path, or its name as a word of its own."""
    if not goal:
        return False
    for name in {path, PurePosixPath(path).name}:
        if re.search(rf"(?<![\w./\\-]){re.escape(name)}(?![\w/\\-])", goal):
            return True
    return False


def named_files(paths: Iterable[str], goal: str | None) -> set[str]:
    """The paths among `paths` the user's goal names."""
    return {path for path in paths if named_in_goal(path, goal)}


def change_of(workspace: Path, rel: str) -> FileChange:
    """A change to `rel` known by its path only (a diff's, before it is applied): created when it does not exist."""
    return FileChange(path=rel, kind="modify" if (Path(workspace) / rel).exists() else "create")


def code_only_refusal(workspace: Path, changes: Iterable[FileChange], named: Collection[str], how: str) -> str | None:
    """Why `changes` may not be written: every file that is not code and not in `named`, with its reason, then
    `how` the user lets such a file through; None when each is code or named."""
    refused = [(c.path, reason) for c in changes if c.path not in named and (reason := not_code_reason(workspace, c))]
    if not refused:
        return None
    listed = "; ".join(f"{path} ({reason})" for path, reason in refused)
    return f"not code, and not named by the user: {listed}; {how}"
