"""Change sets: the shadow's edits as minimal per-file text edits, and applying them.

`compute_change_set` diffs every file the run touched against the text the
run started from (line-level `difflib.SequenceMatcher`; zero-based spans in
the ORIGINAL text). `apply_change_set` is the CLI's `--apply`: all or
nothing, refusing when a file no longer holds the text the run saw.
"""

from __future__ import annotations

import difflib
import os
import tempfile
from pathlib import Path, PurePosixPath
from typing import Literal

from agent_core.models import ChangeSet, FileChange, Position, Span, TextEdit
from agent_core.workspace.ignore import skip_dir
from agent_core.workspace.paths import resolve_inside
from agent_core.workspace.shadow import ShadowWorkspace, UndecodableFile, encode_exact, read_exact


class ChangeSetConflict(RuntimeError):
    """The change set cannot be applied (the message says which file and why)."""


def is_excluded(rel: str) -> bool:
    """Artifacts of tooling, never part of a change set (a skipped folder's files: ignore.py)."""
    path = PurePosixPath(rel)
    if any(skip_dir(part) for part in path.parts):
        return True
    return path.suffix in (".pyc", ".pyo") or (path.suffix == ".xml" and "junit" in path.name.lower())


def _position(lines: list[str], index: int) -> Position:
    """Start of line `index`, or the end of the text when it has no final newline."""
    if index < len(lines) or not lines or lines[-1].endswith(("\n", "\r")):
        return Position(line=index, character=0)
    return Position(line=len(lines) - 1, character=len(lines[-1]))


def text_edits(original: str, new: str) -> list[TextEdit]:
    """Minimal line-level edits turning `original` into `new`, in document order."""
    before = original.splitlines(keepends=True)
    after = new.splitlines(keepends=True)
    edits = []
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        span = Span(start=_position(before, i1), end=_position(before, i2))
        edits.append(TextEdit(span=span, new_text="".join(after[j1:j2])))
    return edits


def _offset(text_lines: list[str], pos: Position) -> int:
    return sum(len(line) for line in text_lines[: pos.line]) + pos.character


def apply_text_edits(original: str, edits: list[TextEdit]) -> str:
    """Apply non-overlapping edits (spans against `original`) and return the new text."""
    lines = original.splitlines(keepends=True)
    out = original
    for edit in sorted(edits, key=lambda e: (e.span.start.line, e.span.start.character), reverse=True):
        start, end = _offset(lines, edit.span.start), _offset(lines, edit.span.end)
        out = out[:start] + edit.new_text + out[end:]
    return out


def file_change(path: str, original: str | None, new: str | None) -> FileChange | None:
    """The change from `original` to `new` (None meaning absent), or None when equal."""
    if original == new:
        return None
    kind: Literal["modify", "create", "delete"] = (
        "create" if original is None else "delete" if new is None else "modify"
    )
    edits = text_edits(original or "", new or "")
    return FileChange(path=path, kind=kind, original=original, new=new, edits=edits)


def compute_change_set(shadow: ShadowWorkspace) -> ChangeSet:
    """Every touched file whose text differs from what the run started from, sorted by path.

    Only the files the run wrote through its tools are read (`shadow.originals`
    tracks them), never the whole tree; `.gitignore`d ones are left out.
    """
    changes = []
    for rel in sorted(shadow.originals):
        if is_excluded(rel) or shadow.ignored(rel):
            continue
        change = file_change(rel, shadow.originals[rel], shadow.current(rel))
        if change is not None:
            changes.append(change)
    return ChangeSet(changes=changes)


def _check(workspace: Path, change: FileChange) -> Path:
    target = resolve_inside(workspace, change.path)
    current = read_exact(target) if target.is_file() else None
    if change.kind == "create" and current is not None:
        raise ChangeSetConflict(f"{change.path} already exists; the run expected to create it")
    if change.kind != "create" and current != change.original:
        raise ChangeSetConflict(f"{change.path} changed since the run read it; nothing was applied")
    return target


def _new_file_mode() -> int:
    """The mode `open(path, "w")` would give a new file: 0o666 less the process umask."""
    try:  # Linux shows the umask without changing it (os.umask would, for every thread)
        status = Path("/proc/self/status").read_text(encoding="ascii")
        umask = int(next(line for line in status.splitlines() if line.startswith("Umask:")).split()[1], 8)
    except (OSError, StopIteration, ValueError):
        umask = os.umask(0o022)
        os.umask(umask)
    return 0o666 & ~umask


def apply_change_set(workspace: Path, change_set: ChangeSet) -> list[str]:
    """Write the change set into `workspace`, all or nothing; return the paths written."""
    workspace = Path(workspace).resolve()
    try:
        targets = [(_check(workspace, c), c) for c in change_set.changes]
    except ValueError as exc:  # PathRefused
        raise ChangeSetConflict(str(exc)) from exc
    staged: list[tuple[str, Path]] = []
    try:
        for target, change in targets:
            if change.new is None:
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            data = encode_exact(target, change.new)
            fd, tmp = tempfile.mkstemp(prefix=".agentls-", dir=target.parent)
            staged.append((tmp, target))
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.chmod(tmp, target.stat().st_mode & 0o7777 if target.exists() else _new_file_mode())
    except (OSError, UndecodableFile) as exc:
        for tmp, _ in staged:
            os.unlink(tmp)
        raise ChangeSetConflict(f"could not write the change set: {exc}; nothing was applied") from exc
    for tmp, target in staged:
        os.replace(tmp, target)
    for target, change in targets:
        if change.new is None:
            target.unlink()
    return [c.path for c in change_set.changes]
