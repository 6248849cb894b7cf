"""The path guard: every path a run touches must resolve inside its workspace.

Paths come from a model, so they are untrusted: absolute paths, `..` steps and
symlinks that lead out are refused with `PathRefused`, whose message the file
tools hand back to the model as data and the journal records.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath


class PathRefused(ValueError):
    """A path that is not inside the workspace (the message says why)."""


def resolve_inside(root: Path, path: str) -> Path:
    """The absolute path of `path` (relative to `root`), refused if it leaves `root`.

    The check runs on the fully resolved path, so a symlink inside the workspace
    that points outside it is refused as well as `../x` or `/etc/passwd`.
    """
    if not isinstance(path, str) or not path.strip():
        raise PathRefused("refused: empty path")
    if "\x00" in path:
        raise PathRefused(f"refused: {path!r} contains a NUL byte")
    root_resolved = root.resolve()
    candidate = Path(path)
    if candidate.is_absolute():
        joined = candidate
    else:
        if ".." in PurePosixPath(path.replace("\\", "/")).parts:
            raise PathRefused(f"refused: {path!r} is outside the workspace ('..' is not allowed)")
        joined = root_resolved / candidate
    resolved = Path(os.path.realpath(joined))
    if resolved != root_resolved and root_resolved not in resolved.parents:
        why = "is a symlink that points" if _crosses_symlink(root_resolved, joined) else "is"
        raise PathRefused(f"refused: {path!r} {why} outside the workspace")
    return resolved


def relative_inside(root: Path, path: str) -> str:
    """The workspace-relative POSIX form of `path`, after the same checks."""
    resolved = resolve_inside(root, path)
    rel = resolved.relative_to(root.resolve()).as_posix()
    if rel == ".":
        raise PathRefused(f"refused: {path!r} is the workspace itself, not a file")
    return rel


def _crosses_symlink(root: Path, joined: Path) -> bool:
    current = joined
    while current != current.parent:
        if current.is_symlink():
            return True
        if current == root:
            return False
        current = current.parent
    return False
