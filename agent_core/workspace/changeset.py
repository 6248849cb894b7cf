"""Change sets: the shadow's edits as minimal per-file text edits, and applying them.

`compute_change_set` diffs every file the run touched against the text the
run started from (line-level `difflib.SequenceMatcher`; zero-based spans in
the ORIGINAL text), keeping each file's line endings (a CRLF file stays CRLF).
`apply_change_set` is the CLI's `--apply`: all or nothing across files
(temp files beside each target, then renames, undone on any error), keeping
each file's mode (and owner, as root), refusing when a file no longer holds
the text the run saw or is read-only (no write bit: the user protected it,
and a rename would replace it anyway).
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import os
import re
import secrets
import tempfile
from collections.abc import Callable
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


def keep_line_endings(original: str | None, new: str | None) -> str | None:
    """`new` with the line endings of `original`: a file mostly in CRLF stays CRLF (a model writes LF)."""
    if not original or not new:
        return new
    crlf = original.count("\r\n")
    if crlf <= original.count("\n") - crlf:
        return new
    return re.sub(r"(?<!\r)\n", "\r\n", new)


def file_change(path: str, original: str | None, new: str | None) -> FileChange | None:
    """The change from `original` to `new` (None meaning absent, kept in the original's line endings), or None."""
    new = keep_line_endings(original, new)
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
    if target.exists() and not target.is_file():
        raise ChangeSetConflict(f"{change.path} is not a regular file; nothing was applied")
    if change.kind != "create" and target.is_file() and not target.stat().st_mode & 0o222:
        raise ChangeSetConflict(
            f"{change.path} is read-only (mode {target.stat().st_mode & 0o777:o}): agentls does not replace a file "
            "you made read-only; make it writable (chmod u+w) and apply again; nothing was applied")
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


def _side_name(target: Path, kind: str) -> Path:
    """A fresh name beside `target` (same folder, so a rename never crosses a file system)."""
    return target.with_name(f".agentls-{kind}-{secrets.token_hex(6)}-{target.name}")


_NO_LINKS = (errno.EXDEV, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK)


class _Transaction:
    """Apply a change set with renames only, and undo it (hand-written: no library does a multi-file rename swap).

    `stage` writes each new text to a temp file beside its target with the
    target's mode (and owner, when running as root, so applying as root does
    not hand the user's file to root); `commit` keeps each old file under a
    side name (a hard link: the target is never missing) and renames the temp
    file over it; `rollback` renames the old files back, removes what was new,
    the temp files and the folders it made; `finish` drops the side names.
    """

    def __init__(self) -> None:
        self.staged: list[tuple[Path | None, Path]] = []  # (temp file or None: delete, target)
        self.done: list[tuple[Path, Path | None]] = []  # (target, its old file's side name or None: was new)
        self.made_dirs: list[Path] = []

    def _mkdirs(self, folder: Path) -> None:
        missing = []
        while not folder.exists():
            missing.append(folder)
            folder = folder.parent
        for path in reversed(missing):
            path.mkdir()
            self.made_dirs.append(path)
            _own_like(path, folder)

    def stage(self, target: Path, new: str | None) -> None:
        if new is None:
            self.staged.append((None, target))
            return
        self._mkdirs(target.parent)
        data = encode_exact(target, new)
        fd, name = tempfile.mkstemp(prefix=".agentls-new-", dir=target.parent)
        tmp = Path(name)
        self.staged.append((tmp, target))
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if target.exists():
            os.chmod(tmp, target.stat().st_mode & 0o7777)
            _own_like(tmp, target)
        else:
            os.chmod(tmp, _new_file_mode())
            _own_like(tmp, target.parent)

    def commit(self) -> None:
        for tmp, target in self.staged:
            side = _side_name(target, "old") if target.exists() else None
            if tmp is None:  # a delete: the old file moves aside until the whole change set is in
                if side is not None:
                    os.replace(target, side)
                self.done.append((target, side))
                continue
            if side is not None:
                try:
                    os.link(target, side)
                except OSError as exc:
                    if exc.errno not in _NO_LINKS:
                        raise
                    os.replace(target, side)  # no hard links on this file system: a moment without the file
            self.done.append((target, side))
            os.replace(tmp, target)

    def rollback(self) -> list[str]:
        """Undo in reverse order; the problems met (best effort: every step is tried)."""
        problems: list[str] = []

        def attempt(step: Callable[..., object], *args: object) -> None:
            try:
                step(*args)
            except OSError as exc:
                problems.append(str(exc))

        for target, side in reversed(self.done):
            if side is not None:
                attempt(os.replace, side, target)
            else:
                attempt(target.unlink, True)
        for tmp, _ in self.staged:
            if tmp is not None:
                attempt(tmp.unlink, True)
        for folder in reversed(self.made_dirs):
            attempt(folder.rmdir)
        return problems

    def finish(self) -> None:
        for _, side in self.done:
            if side is not None:
                with contextlib.suppress(OSError):
                    side.unlink()


def _own_like(path: Path, model: Path) -> None:
    """Give `path` the owner and group of `model` when running as root (as anyone else it is already the user's)."""
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        st = model.stat()
        os.chown(path, st.st_uid, st.st_gid)


def apply_change_set(workspace: Path, change_set: ChangeSet) -> list[str]:
    """Write the change set into `workspace`, all or nothing; return the paths written.

    Any failure (a file the user changed meanwhile, a path that cannot be
    written, a rename refused) raises `ChangeSetConflict` with every file as
    it was and no temp file left.
    """
    workspace = Path(workspace).resolve()
    try:
        targets = [(_check(workspace, c), c) for c in change_set.changes]
    except (ValueError, OSError) as exc:  # PathRefused, UndecodableFile, an unreadable file
        raise ChangeSetConflict(f"{exc}; nothing was applied" if "nothing was applied" not in str(exc)
                                else str(exc)) from exc
    txn = _Transaction()
    try:
        for target, change in targets:
            txn.stage(target, change.new)
        txn.commit()
    except (OSError, UndecodableFile) as exc:
        problems = txn.rollback()
        undo = f" (undoing it also failed: {'; '.join(problems)})" if problems else ""
        raise ChangeSetConflict(f"could not write the change set: {exc}; nothing was applied{undo}") from exc
    txn.finish()
    return [c.path for c in change_set.changes]
