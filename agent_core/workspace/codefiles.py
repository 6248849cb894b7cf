"""What a fix may change: the source tree's Python files, and other files only when the user's goal names them.

A candidate that also writes `.envrc`, `.github/workflows/*.yml`,
`.vscode/tasks.json`, a config file or a `.pth` gets code run on the user's
machine outside any sandbox (a shell that loads the directory, CI, an editor
task on folder open). So a fix is code only: a `.py`/`.pyi` file with no
hidden folder or name in its path, not an interpreter start-up hook, and, when
the run creates it, placed beside Python code that already exists (the nearest
existing folder holds a `.py` file). Anything else is dropped from the change
set with a reason, unless the user's own goal names the file; then the user
approves it, shown with its diff (the gate, pipeline/safety/scan.py).
"""

from __future__ import annotations

import re
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
