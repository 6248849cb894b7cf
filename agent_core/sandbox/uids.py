"""A distinct unprivileged uid for every sandboxed run (when agentls runs as root).

RLIMIT_NPROC counts the processes *and threads* of a real uid. With one uid
shared by every sandbox, a fork bomb in one run starves the others and a test
suite with a thread pool fails with "can't start new thread" when other runs
are busy. Each run therefore claims a uid of its own from a fixed range: the
claim is an exclusive `flock` on a per-uid lock file, held for the run and
released when the run ends (or its process dies), so concurrent agentls
processes never share a uid. The uids have no passwd entry and own nothing
outside the run's workspace.

When agentls does not run as root there is no uid to switch to; the process
limit then counts what the user already runs (`nproc_for`).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
from collections.abc import Iterator
from pathlib import Path

from agent_core.sandbox.base import SandboxError

UID_BASE = 2_100_000_000
UID_COUNT = 4096
LOCK_DIR = Path("/var/tmp/agentls-uids")


@contextlib.contextmanager
def claim_run_uid(lock_dir: Path = LOCK_DIR) -> Iterator[int | None]:
    """Yield a uid no other run holds (None when not root: no switch); released on exit."""
    if os.geteuid() != 0:
        yield None
        return
    lock_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    start = random.randrange(UID_COUNT)
    for offset in range(UID_COUNT):
        uid = UID_BASE + (start + offset) % UID_COUNT
        fd = os.open(lock_dir / str(uid), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        try:
            yield uid
        finally:
            os.close(fd)  # closing the last descriptor releases the lock
        return
    raise SandboxError(f"all {UID_COUNT} sandbox uids are in use ({lock_dir})")


def threads_of(uid: int) -> int:
    """How many threads (what RLIMIT_NPROC counts) `uid` runs right now."""
    count = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid != uid:
                continue
            count += sum(1 for _ in (entry / "task").iterdir())
        except OSError:
            continue
    return count


def nproc_for(run_uid: int | None, pids: int) -> int:
    """The RLIMIT_NPROC value that lets a run start `pids` more processes and threads.

    A fresh run uid starts from nothing; without a switch, the limit sits
    `pids` above what our own uid already runs (an editor, a desktop), or
    every fork of the run would fail before the test suite starts.
    """
    return pids if run_uid is not None else threads_of(os.getuid()) + pids
