"""Who the sandboxed run is: a passwd and group entry, and a writable HOME, for the run's uid.

A run's uid (uids.py: one per run when agentls is root, else the user's own)
has no entry in the host's /etc/passwd, so `pwd.getpwuid(os.getuid())`
raises KeyError, and with it `getpass.getuser()` without LOGNAME, and
`Path.expanduser()`/`Path.home()` on Python 3.7 when a test drops HOME.
Both backends therefore show a generated /etc/passwd and /etc/group,
read-only, that name root, nobody and the run's uid ("sandbox", home
`SANDBOX_HOME`, the run's private /tmp, which is writable) and nothing else
of the host's accounts. The files are written once per uid into a
world-readable folder outside every workspace and bound over /etc.
"""

from __future__ import annotations

import os
from pathlib import Path

SANDBOX_USER = "sandbox"
SANDBOX_HOME = "/tmp"  # the run's private tmpfs: writable by the run's uid, gone with the run
ETC_ROOT = Path("/var/tmp/agentls-etc")
_NOBODY = 65534


def passwd_text(uid: int, gid: int) -> str:
    """/etc/passwd: root, nobody and the run's uid (when it is neither)."""
    lines = ["root:x:0:0:root:/root:/bin/sh"]
    if uid != _NOBODY:
        lines.append(f"nobody:x:{_NOBODY}:{_NOBODY}:nobody:/nonexistent:/usr/sbin/nologin")
    if uid != 0:
        lines.append(f"{SANDBOX_USER}:x:{uid}:{gid}:{SANDBOX_USER}:{SANDBOX_HOME}:/bin/sh")
    return "\n".join(lines) + "\n"


def group_text(gid: int) -> str:
    """/etc/group: root, nogroup and the run's gid (when it is neither)."""
    lines = ["root:x:0:"]
    if gid != _NOBODY:
        lines.append(f"nogroup:x:{_NOBODY}:")
    if gid != 0:
        lines.append(f"{SANDBOX_USER}:x:{gid}:")
    return "\n".join(lines) + "\n"


def write_if_changed(path: Path, text: str, mode: int = 0o644) -> None:
    """Write a shared file (one other runs may be reading) only when its text changes, by an atomic rename."""
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    tmp.chmod(mode)
    os.replace(tmp, path)


def identity_files(uid: int, gid: int, root: Path = ETC_ROOT) -> tuple[Path, Path]:
    """(passwd, group) files for a run as uid:gid, written on first use and kept for later runs."""
    folder = root / f"{uid}-{gid}"
    folder.mkdir(mode=0o755, parents=True, exist_ok=True)
    root.chmod(0o755)
    folder.chmod(0o755)
    passwd, group = folder / "passwd", folder / "group"
    write_if_changed(passwd, passwd_text(uid, gid))
    write_if_changed(group, group_text(gid))
    return passwd, group
