"""Temp directories of agentls, and removal of the ones a crash left behind.

Every temp dir agentls makes goes through `make_temp_dir`, which names it
`agentls-<kind>-*` and writes a marker file recording the owning pid. At
server start `remove_leftovers` (called by factory.sweep_leftovers) deletes the dirs whose owner is dead (or,
for dirs without a marker, that are older than `max_age_s`). Cached
sandbox sites (`agentls-site-*`) are never touched.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_core.sandbox.proctree import start_time

PREFIX = "agentls-"
MARKER = ".agentls-owner"
ORIGIN = ".agentls-origin"
_KEEP_PREFIXES = ("agentls-site-",)


def make_temp_dir(kind: str, parent: Path | None = None, origin: Path | None = None) -> Path:
    """A fresh private temp dir `agentls-<kind>-XXXX` owned by this process (remove it when done).

    `origin` records the directory a copy inside it was made from (a shadow's
    workspace): sandboxes read it back with `origin_of` to find the project's
    environment and to show the copy at the original path.
    """
    path = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{kind}-", dir=parent))
    (path / MARKER).write_text(f"{os.getpid()} {start_time(os.getpid())}\n", encoding="utf-8")
    if origin is not None:
        (path / ORIGIN).write_text(str(Path(origin).resolve()), encoding="utf-8")
    return path


def origin_of(copy: Path) -> Path | None:
    """The directory `copy` (a dir directly inside a `make_temp_dir(..., origin=...)` dir) was copied from;
    None when there is none, or when the copy lies inside it (no sandbox can show it at that path)."""
    try:
        recorded = Path((copy.parent / ORIGIN).read_text(encoding="utf-8").strip())
    except OSError:
        return None
    if not recorded.is_absolute() or recorded.name != copy.name or copy.is_relative_to(recorded):
        return None  # a copy inside its origin (a project at /tmp) would be hidden by a bind at the origin
    return recorded


def remove_temp_dir(path: Path | str) -> None:
    """Delete a dir made by `make_temp_dir`, even when a sandbox left read-only files in it.

    Permissions are loosened only inside `path`, and only after a refusal: the
    dir `path` sits in (the system's /tmp) is never touched, even when `path`
    is already gone or a concurrent sweep removes it first.
    """
    top = os.path.abspath(path)

    def _within_top(target: str) -> bool:
        return os.path.commonpath([top, target]) == top

    def _retry(func: Callable[[str], Any], target: str, exc_info: Any) -> None:  # shutil's onerror signature
        target = os.path.abspath(target)
        if not isinstance(exc_info[1], PermissionError):
            return  # gone already (a concurrent sweep), or not ours to fix
        try:
            for node in (os.path.dirname(target), target):
                if _within_top(node) and os.path.isdir(node) and not os.path.islink(node):
                    os.chmod(node, stat.S_IRWXU)
            if func in (os.open, os.scandir, os.listdir) and os.path.isdir(target):
                shutil.rmtree(target, onerror=_retry)  # a dir that could not be read: its contents are still there
            else:
                func(target)
        except OSError:
            pass

    shutil.rmtree(top, onerror=_retry)


def owner_alive(path: Path) -> bool | None:
    """True/False when the marker names a live/dead owner; None without a readable marker."""
    try:
        pid_text, _, started = (path / MARKER).read_text(encoding="utf-8").strip().partition(" ")
        pid = int(pid_text)
    except (OSError, ValueError):
        return None
    current = start_time(pid)
    return bool(current) and (not started or current == started)


def remove_leftovers(max_age_s: float = 24 * 3600, roots: list[Path] | None = None) -> list[Path]:
    """Delete stale agentls-* temp dirs; returns what was removed."""
    removed = []
    now = time.time()
    for root in roots or [Path(tempfile.gettempdir())]:
        try:
            candidates = list(root.glob(f"{PREFIX}*"))
        except OSError:
            continue
        for path in candidates:
            if not path.is_dir() or path.is_symlink() or path.name.startswith(_KEEP_PREFIXES):
                continue
            alive = owner_alive(path)
            if alive is None:
                try:
                    stale = now - path.stat().st_mtime > max_age_s
                except OSError:
                    continue
                if not stale:
                    continue
            elif alive:
                continue
            remove_temp_dir(path)
            removed.append(path)
    return removed

