"""A bound on how much a run may add to its workspace on disk, checked while it runs.

The workspace is the one writable place on the host's disk. RLIMIT_FSIZE caps
each file (`file_size_mb`), not their number: a run that writes many files
could fill the disk (5.5 GB was written in one). A size-limited filesystem
for the copy (a loop device, a quota, an overlay on a sized tmpfs) would need
privileges or host RAM, and the copy must stay on the host's disk for the
runner to read the results; so the run is watched instead: its workspace's
allocated size is summed every `interval` seconds (off the event loop), and
a run that has added more than its bound (as much as its largest file may
hold, `file_size_mb`: a run never adds more than one largest file's worth)
is killed and reported as `limit_hit="workspace_size"`. Files the run has
unlinked but holds open (on the workspace's filesystem) are disk it uses that
no walk sees: they count too, found through `/proc/<pid>/fd` of the run's
processes. Between two checks a writer can go past the
bound by what it writes in that time; the interval grows with the cost of a
check on a big tree (WALK_SHARE), so watching never costs more than a few
percent of a CPU.
"""

from __future__ import annotations

import asyncio
import os
import stat
import time
from collections.abc import Callable
from pathlib import Path

GROWTH_FACTOR = 1  # a run may add this many times its largest-file limit (file_size_mb) to the workspace
MIN_INTERVAL_S = 0.5
WALK_SHARE = 0.05  # at most this share of the time goes on checking


def allocated_bytes(root: Path) -> int:
    """Bytes allocated on disk by the files under `root` (symbolic links not followed; vanishing files skipped)."""
    total = 0
    stack = [str(root)]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(info.st_mode):
                stack.append(entry.path)
            total += info.st_blocks * 512
    return total


def held_unlinked_bytes(pids: list[int], device: int) -> int:
    """Bytes allocated by files on `device` that the processes `pids` hold open and that have no name left."""
    seen: dict[tuple[int, int], int] = {}
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                info = os.stat(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and info.st_nlink == 0 and info.st_dev == device:
                seen[(info.st_dev, info.st_ino)] = info.st_blocks * 512
    return sum(seen.values())


class WorkspaceWatch:
    """The workspace's size at the start of a run and the most the run may add to it."""

    def __init__(self, root: Path, growth_bytes: int, pids: Callable[[], list[int]] | None = None) -> None:
        self.root = root
        self.pids = pids  # the run's processes, whose unlinked open files count (set once the run started)
        self.device = os.stat(root).st_dev
        started = time.monotonic()
        self.start_bytes = allocated_bytes(root)
        self.interval = max(MIN_INTERVAL_S, (time.monotonic() - started) / WALK_SHARE)
        self.limit_bytes = self.start_bytes + growth_bytes
        self.seen_bytes = self.start_bytes

    def grown(self) -> bool:
        """Whether the workspace has grown past its bound (a walk of the tree: call it off the event loop)."""
        started = time.monotonic()
        self.seen_bytes = allocated_bytes(self.root)
        if self.pids is not None:
            self.seen_bytes += held_unlinked_bytes(self.pids(), self.device)
        self.interval = max(MIN_INTERVAL_S, (time.monotonic() - started) / WALK_SHARE)
        return self.seen_bytes > self.limit_bytes

    async def exceeded(self) -> bool:
        """`grown`, measured in a worker thread."""
        return await asyncio.to_thread(self.grown)

    def describe(self) -> str:
        """The line a stopped run's stderr gets."""
        return (f"agentls sandbox: the run added {(self.seen_bytes - self.start_bytes) // 2**20} MiB to its "
                f"workspace, more than its bound of {(self.limit_bytes - self.start_bytes) // 2**20} MiB: stopped\n")
