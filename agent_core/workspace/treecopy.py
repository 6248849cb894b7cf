"""Copy a workspace tree for a shadow: skip what `ignore.py` leaves out, copy each file in the kernel.

Each regular file is cloned (`FICLONE`, a copy-on-write reflink, on btrfs,
XFS and other filesystems that share extents), else copied by
`os.copy_file_range`, else by `shutil.copyfile`: file data never passes
through Python's memory, and on a copy-on-write filesystem no data is
written at all. Every copy is a file of its own (never a hard link): the
sandbox takes ownership of the shadow's files before a test run, and a test
may write any of them in place, so a shared inode would let either reach the
user's file. Symbolic links are copied as links; sockets, FIFOs and devices
are left out. File modes and modification times are kept.
"""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from agent_core.workspace.ignore import IgnoreRules, skip_dir

FICLONE = 0x40049409  # linux/fs.h: _IOW(0x94, 9, int)
_UNSUPPORTED = {errno.EOPNOTSUPP, errno.ENOTTY, errno.EXDEV, errno.EINVAL, errno.ENOSYS}


@dataclass
class CopyStats:
    """What a copy did: files cloned (reflinks), files copied, bytes, and entries left out."""

    cloned: int = 0
    copied: int = 0
    bytes: int = 0
    skipped: int = 0
    reflink: bool = True  # turned off at the first clone the filesystem refuses


def _copy_range(src: int, dst: int, size: int) -> bool:
    """Copy `size` bytes in the kernel; False when this filesystem pair cannot."""
    done = 0
    try:
        while done < size:
            step = os.copy_file_range(src, dst, size - done)
            if step == 0:
                break
            done += step
    except OSError as exc:
        if exc.errno in _UNSUPPORTED and done == 0:
            return False
        raise
    return True


def copy_file(source: Path, dest: Path, size: int, stats: CopyStats) -> None:
    """`dest` becomes a copy of `source` of its own: a reflink where possible, else a kernel copy."""
    with open(source, "rb") as src, open(dest, "xb") as dst:
        if stats.reflink and size:
            try:
                fcntl.ioctl(dst.fileno(), FICLONE, src.fileno())
                stats.cloned += 1
                return
            except OSError as exc:
                if exc.errno not in _UNSUPPORTED:
                    raise
                stats.reflink = False
        if _copy_range(src.fileno(), dst.fileno(), size):
            stats.copied += 1
            return
    shutil.copyfile(source, dest)
    stats.copied += 1


def _copy_entry(entry: os.DirEntry, dest: Path, stats: CopyStats) -> None:
    info = entry.stat(follow_symlinks=False)
    if not stat.S_ISREG(info.st_mode):
        stats.skipped += 1
        return
    copy_file(Path(entry.path), dest, info.st_size, stats)
    os.chmod(dest, stat.S_IMODE(info.st_mode))
    os.utime(dest, ns=(info.st_atime_ns, info.st_mtime_ns))
    stats.bytes += info.st_size


def _copy_dir(source: Path, dest: Path, rel: str, rules: IgnoreRules, stats: CopyStats) -> None:
    rules.enter(rel)
    with os.scandir(source) as entries:
        listing = sorted(entries, key=lambda e: e.name)
    for entry in listing:
        child = f"{rel}/{entry.name}" if rel else entry.name
        is_dir = entry.is_dir(follow_symlinks=False)
        if skip_dir(entry.name) or rules.matches(child, is_dir):  # a `.git` file (a worktree's) as well
            stats.skipped += 1
            continue
        target = dest / entry.name
        if entry.is_symlink():
            os.symlink(os.readlink(entry.path), target)
        elif is_dir:
            target.mkdir()
            _copy_dir(Path(entry.path), target, child, rules, stats)
            os.chmod(target, stat.S_IMODE(entry.stat(follow_symlinks=False).st_mode))
        else:
            _copy_entry(entry, target, stats)


def copy_workspace(source: Path, dest: Path, rules: IgnoreRules | None = None) -> CopyStats:
    """Copy `source` into the new folder `dest`, leaving out what `rules` (default: source's) ignore."""
    rules = rules or IgnoreRules(source)
    stats = CopyStats()
    dest.mkdir()
    _copy_dir(Path(source), dest, "", rules, stats)
    return stats
