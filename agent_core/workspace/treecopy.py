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

from agent_core.workspace.ignore import IgnoreRules, installed_metadata, skip_dir

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


def _copy_range(src: int, dst: int, size: int, stats: CopyStats) -> bool:
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
    stats.copied += 1
    return True


def copy_file(source: str, dest: str, info: os.stat_result, stats: CopyStats) -> None:
    """`dest` (new) becomes a copy of `source` of its own, with its mode and times: a reflink, else a kernel copy."""
    src = os.open(source, os.O_RDONLY | os.O_CLOEXEC)
    try:
        dst = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            done = _clone(src, dst, info.st_size, stats) or _copy_range(src, dst, info.st_size, stats)
            if done:
                os.fchmod(dst, stat.S_IMODE(info.st_mode))
                os.utime(dst, ns=(info.st_atime_ns, info.st_mtime_ns))
                return
        finally:
            os.close(dst)
    finally:
        os.close(src)
    shutil.copyfile(source, dest)  # neither works between these filesystems: a copy through user space
    shutil.copystat(source, dest)
    stats.copied += 1


def _clone(src: int, dst: int, size: int, stats: CopyStats) -> bool:
    if not (stats.reflink and size):
        return False
    try:
        fcntl.ioctl(dst, FICLONE, src)
    except OSError as exc:
        if exc.errno not in _UNSUPPORTED:
            raise
        stats.reflink = False
        return False
    stats.cloned += 1
    return True


def _copy_entry(entry: os.DirEntry, dest: str, stats: CopyStats) -> None:
    info = entry.stat(follow_symlinks=False)
    if not stat.S_ISREG(info.st_mode):
        stats.skipped += 1
        return
    copy_file(entry.path, dest, info, stats)
    stats.bytes += info.st_size


def _copy_dir(source: str, dest: str, rel: str, rules: IgnoreRules, stats: CopyStats, whole: bool = False) -> None:
    """`whole`: an installed distribution's metadata (ignore.installed_metadata), copied whatever the rules say."""
    if not whole:
        rules.enter(rel)
    with os.scandir(source) as entries:
        listing = sorted(entries, key=lambda e: e.name)
    for entry in listing:
        child = f"{rel}/{entry.name}" if rel else entry.name
        is_dir = entry.is_dir(follow_symlinks=False)
        metadata = whole or is_dir and installed_metadata(child)
        if not metadata and (skip_dir(entry.name) or rules.matches(child, is_dir)):  # a `.git` file as well
            stats.skipped += 1
            continue
        target = os.path.join(dest, entry.name)
        if entry.is_symlink():
            os.symlink(os.readlink(entry.path), target)
        elif is_dir:
            os.mkdir(target)
            _copy_dir(entry.path, target, child, rules, stats, metadata)
            os.chmod(target, stat.S_IMODE(entry.stat(follow_symlinks=False).st_mode))
        else:
            _copy_entry(entry, target, stats)


def copy_workspace(source: Path, dest: Path, rules: IgnoreRules | None = None) -> CopyStats:
    """Copy `source` into the new folder `dest`, leaving out what `rules` (default: source's) ignore."""
    rules = rules or IgnoreRules(source)
    stats = CopyStats()
    dest.mkdir()
    _copy_dir(str(source), str(dest), "", rules, stats)
    return stats
