"""An exclusive advisory lock on a file (flock), so two agentls processes do not race.

Used around starting a model server and around fetching a model: the second
process waits, then finds the first one's result (a running server, a
verified file) instead of doing the work twice.
"""

from __future__ import annotations

import fcntl
from pathlib import Path
from typing import IO


class FileLock:
    """`with FileLock(path):` holds an exclusive flock on `path` (created if needed)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fh: IO[str] | None = None

    def __enter__(self) -> FileLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = self.path.open("a")
        fcntl.flock(self._fh, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fh is not None:
            fcntl.flock(self._fh, fcntl.LOCK_UN)
            self._fh.close()
            self._fh = None
