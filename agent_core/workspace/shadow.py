"""The shadow workspace: a throw-away copy of the workspace that a run edits.

The copy lives in a temp directory named `agentls-*`, skips environments and
caches, and is overlaid with the editor's unsaved buffers. It remembers the
original text of every file the run touched, so the change set is computed
against what the run saw, not against whatever is on disk later. It is
removed when the `with` block ends, however it ends (error, cancel), and at
interpreter exit as a last resort.
"""

from __future__ import annotations

import os
import shutil
import stat
import weakref
from collections.abc import Mapping
from pathlib import Path

from agent_core.sandbox.cleanup import make_temp_dir
from agent_core.workspace.paths import relative_inside, resolve_inside

SKIP_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".venv", "venv", "env", "__pycache__", "node_modules", ".agentls",
        ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis", "build", "dist",
        ".eggs",
    }
)


def read_exact(path: Path) -> str:
    """A file's text with its line endings kept as they are (no CRLF translation)."""
    with open(path, encoding="utf-8", newline="") as handle:
        return handle.read()


def write_exact(path: Path, text: str) -> None:
    """Write text without translating line endings."""
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)


def _ignore(directory: str, names: list[str]) -> set[str]:
    return {n for n in names if n in SKIP_DIRS or n.endswith(".egg-info")}


def _force_remove(path: str) -> None:
    def retry(func, target, _exc):  # a test may have left read-only directories behind
        try:
            os.chmod(os.path.dirname(target), stat.S_IRWXU)
            os.chmod(target, stat.S_IRWXU)
            func(target)
        except OSError:
            pass

    shutil.rmtree(path, onerror=retry)


class ShadowWorkspace:
    """A temp copy of `source` overlaid with `overlays` (relative path -> unsaved text)."""

    def __init__(self, source: Path, overlays: Mapping[str, str] | None = None) -> None:
        self.source = Path(source).resolve()
        self.overlays = dict(overlays or {})
        self.path: Path | None = None
        self.originals: dict[str, str | None] = {}
        self._finalizer: weakref.finalize | None = None

    def __enter__(self) -> ShadowWorkspace:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self) -> ShadowWorkspace:
        """Make the copy and apply the overlays."""
        if not self.source.is_dir():
            raise NotADirectoryError(f"workspace {self.source} is not a directory")
        base = make_temp_dir("shadow", origin=self.source)  # owner-marked: a crash leftover is swept at the next start
        self._finalizer = weakref.finalize(self, _force_remove, str(base))
        root = base / self.source.name
        shutil.copytree(self.source, root, symlinks=True, ignore=_ignore)
        os.chmod(base, 0o755)  # sandboxes may run tests as an unprivileged uid
        self.path = root
        for rel, text in self.overlays.items():
            target = resolve_inside(root, rel)
            target.parent.mkdir(parents=True, exist_ok=True)
            self.originals[relative_inside(root, rel)] = text
            write_exact(target, text)
        return self

    def close(self) -> None:
        """Remove the copy (idempotent)."""
        if self._finalizer is not None:
            self._finalizer()
            self._finalizer = None

    @property
    def root(self) -> Path:
        if self.path is None:
            raise RuntimeError("shadow workspace is not open")
        return self.path

    def resolve(self, rel: str) -> Path:
        """The shadow path of `rel`, refused if it leaves the workspace."""
        return resolve_inside(self.root, rel)

    def relative(self, rel: str) -> str:
        return relative_inside(self.root, rel)

    def remember(self, rel: str) -> None:
        """Record the text `rel` has before the run first changes it (None if absent)."""
        rel = self.relative(rel)
        if rel in self.originals:
            return
        target = self.resolve(rel)
        self.originals[rel] = read_exact(target) if target.is_file() else None

    def current(self, rel: str) -> str | None:
        target = self.resolve(rel)
        return read_exact(target) if target.is_file() else None
