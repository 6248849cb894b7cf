"""Reading, on the host, a file the sandbox could have written: never through a link, never unbounded.

Code under test owns the workspace copy while it runs: it can replace any
file or folder there with a symbolic link to a host file (`/root/.ssh/...`),
a FIFO that blocks a reader for ever, or a file of gigabytes. Every host-side
read of such a file (a test report, a coverage file, a log) goes through
`read_planted`: each path component is opened relative to the one before it
with `O_NOFOLLOW` (a link anywhere on the way is refused, not only at the
end), the file must be a regular file (`fstat`), is opened non-blocking, and
at most `cap` bytes are read. Anything else reads as nothing.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePath, PurePosixPath

DEFAULT_CAP = 16 * 1024 * 1024
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def read_fd(fd: int, cap: int = DEFAULT_CAP) -> bytes:
    """Up to `cap` bytes of an open regular file, from its start (the file offset is left alone)."""
    chunks: list[bytes] = []
    size = 0
    while size < cap:
        chunk = os.pread(fd, min(1 << 20, cap - size), size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def read_planted(root: Path, rel: str | PurePath, cap: int = DEFAULT_CAP) -> bytes:
    """The first `cap` bytes of `root / rel`, or b"" when any component is a link, it is not a regular file,
    or it cannot be read. `root` itself is trusted (the host made it); `rel` must stay inside it."""
    parts = PurePosixPath(str(rel)).parts
    if not parts or any(part in ("..", "/") for part in parts):
        return b""
    fds: list[int] = []
    try:
        fds.append(os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC))
        for part in parts[:-1]:
            fds.append(os.open(part, _DIR_FLAGS, dir_fd=fds[-1]))
        fds.append(os.open(parts[-1], _FILE_FLAGS, dir_fd=fds[-1]))
        if not stat.S_ISREG(os.fstat(fds[-1]).st_mode):
            return b""
        return read_fd(fds[-1], cap)
    except OSError:  # ELOOP (a link), ENOENT, EACCES, ENOTDIR...
        return b""
    finally:
        for fd in fds:
            os.close(fd)


def read_planted_text(root: Path, rel: str | PurePath, cap: int = DEFAULT_CAP) -> str:
    """`read_planted` decoded as UTF-8 (undecodable bytes replaced)."""
    return read_planted(root, rel, cap).decode("utf-8", errors="replace")


def fresh_dir(root: Path, rel: str | PurePath) -> Path:
    """`root / rel` as a real folder, made on the host before a sandboxed run writes there: a link or a file a
    run planted on the way inside `root` (`.agentls` -> /etc) is removed first, or the host would create the
    folder, and write into it, wherever the link points."""
    current = root
    for part in PurePosixPath(str(rel)).parts:
        current = current / part
        if current.is_symlink() or (current.exists() and not current.is_dir()):
            current.unlink()
        current.mkdir(exist_ok=True)
    return current
