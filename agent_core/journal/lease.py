"""A run's lease: an exclusive `flock` on `<run dir>/run.lock` while the run works.

The kernel releases the lock however the process ends, so `run_is_active`
tells a live run from an interrupted one. The lock file also names the run's
shadow copy, so a resume can remove the copy a killed process left behind.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from agent_core.errors import ResumeError
from agent_core.sandbox.cleanup import remove_temp_dir

LOCK = "run.lock"


def run_is_active(run_dir: Path) -> bool:
    """True while some process holds the run's lock."""
    path = Path(run_dir) / LOCK
    if not path.is_file():
        return False
    with open(path, "a+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
    return False


class RunLease:
    """The exclusive lock of one run directory; remembers the run's shadow path in the lock file."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / LOCK
        self._handle = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - held for the run's lifetime
        try:
            fcntl.flock(self._handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._handle.close()
            raise ResumeError(f"run {run_dir.name} is running in another process") from None
        self._handle.seek(0)
        try:
            self.previous: dict[str, Any] = json.loads(self._handle.read() or "{}")
        except json.JSONDecodeError:
            self.previous = {}
        self._write({"pid": os.getpid()})

    def _write(self, data: dict[str, Any]) -> None:
        self._handle.seek(0)
        self._handle.truncate()
        self._handle.write(json.dumps(data))
        self._handle.flush()

    def note_shadow(self, root: Path) -> None:
        self._write({"pid": os.getpid(), "shadow": str(root)})

    def remove_stale_shadow(self) -> None:
        """Delete the shadow copy a killed process left behind (only an agentls temp dir)."""
        old = self.previous.get("shadow")
        if not old:
            return
        base = Path(old).parent
        temp = Path(tempfile.gettempdir()).resolve()
        if base.name.startswith("agentls-") and base.resolve().parent == temp and base.is_dir():
            remove_temp_dir(base)

    def release(self) -> None:
        """Unlock; the lock file goes too (only a killed run leaves one, naming its shadow copy)."""
        with contextlib.suppress(OSError):
            self.path.unlink()
            fcntl.flock(self._handle, fcntl.LOCK_UN)
        self._handle.close()
