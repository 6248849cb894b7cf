"""Exclusive locks between agentls processes, with a time limit and a named holder.

Used around starting a model server and around fetching a model: the second
process waits, then finds the first one's result (a running server, a
verified file) instead of doing the work twice. The lock itself is the
`filelock` library's (an flock, released by the kernel when its holder dies);
beside it `<lock>.holder` records who holds it (pid, command line, since
when), so a wait that runs out says whom it waited for instead of hanging.

`AGENTLS_MODEL_LOCK_TIMEOUT` (seconds) overrides every caller's default wait.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import filelock

ENV_LOCK_TIMEOUT = "AGENTLS_MODEL_LOCK_TIMEOUT"


class LockBusy(RuntimeError):
    """The lock stayed held for longer than the wait allowed (the message names the holder),
    or the wait is not a number."""


def lock_timeout(default_s: float) -> float:
    """The wait for a lock: AGENTLS_MODEL_LOCK_TIMEOUT when set, else the caller's default."""
    raw = os.environ.get(ENV_LOCK_TIMEOUT, "").strip()
    try:
        return float(raw) if raw else default_s
    except ValueError:
        raise LockBusy(f"{ENV_LOCK_TIMEOUT}={raw!r} is not a number of seconds") from None


def holder_path(lock: Path) -> Path:
    return lock.with_name(lock.name + ".holder")


def describe_holder(lock: Path) -> str:
    """Who holds `lock`, from its holder file ("another process" when none is recorded)."""
    try:
        holder = json.loads(holder_path(lock).read_text(encoding="utf-8"))
        pid, command, since = int(holder["pid"]), str(holder["command"]), float(holder["since"])
    except (OSError, ValueError, KeyError, TypeError):
        return "another process (no holder recorded)"
    started = time.strftime("%H:%M:%S", time.localtime(since))
    return f"pid {pid} ({command}, since {started})"


def _command_line() -> str:
    try:
        words = Path("/proc/self/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        words = [sys.executable, *sys.argv]
    return " ".join(w for w in words if w)[:200]


def _record_holder(lock: Path) -> None:
    target = holder_path(lock)
    tmp = target.with_name(f"{target.name}.{os.getpid()}")
    record = {"pid": os.getpid(), "command": _command_line(), "since": time.time()}
    tmp.write_text(json.dumps(record), encoding="utf-8")
    os.replace(tmp, target)


@contextmanager
def exclusive(lock: Path, timeout_s: float, purpose: str) -> Iterator[None]:
    """Hold an exclusive lock on `lock` (created if needed) for the `with` body.

    Raises LockBusy when another process keeps it for more than `timeout_s`
    seconds; the message says what the lock guards (`purpose`) and who holds it.
    """
    lock.parent.mkdir(parents=True, exist_ok=True)
    file_lock = filelock.FileLock(lock, timeout=timeout_s)
    try:
        file_lock.acquire()
    except filelock.Timeout:
        raise LockBusy(
            f"waited {timeout_s:g} s for the lock on {purpose} ({lock}); it is held by {describe_holder(lock)}. "
            f"If that process is stuck, stop it and try again ({ENV_LOCK_TIMEOUT} sets the wait)"
        ) from None
    try:
        _record_holder(lock)
        yield
    finally:
        holder_path(lock).unlink(missing_ok=True)
        file_lock.release()
