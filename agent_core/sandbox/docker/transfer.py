"""The workspace copied into and out of a container, for an engine that cannot see this machine's files.

A local engine (a unix socket, or TCP on the loopback) gets the shadow
workspace bind-mounted. An engine elsewhere (another host over TCP or SSH)
would mount an empty directory of its own, so there the workspace goes into an
anonymous volume mounted at its parent's path, with the Engine API's archive upload before
the container starts, and comes back (reports, caches, files the run wrote)
with the archive download after it exits. Files the run deleted are not
deleted here. This module holds the tar side; run.py drives the SDK.
"""

from __future__ import annotations

import tarfile
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Literal
from urllib.parse import urlsplit

SPOOL_BYTES = 32 * 1024 * 1024
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")

WorkspaceMode = Literal["auto", "bind", "copy"]


def engine_is_local(url: str) -> bool:
    """Whether the engine shares this machine's filesystem: a socket, a named pipe, or TCP on the loopback."""
    scheme = url.split("://", 1)[0].lower()
    if scheme in ("unix", "http+unix", "npipe"):
        return True
    return scheme in ("tcp", "http", "https") and urlsplit(url).hostname in LOCAL_HOSTS


def copies_workspace(mode: WorkspaceMode, url: str) -> bool:
    """True when the run must copy the workspace (mode `copy`, or `auto` with an engine elsewhere)."""
    return mode == "copy" or (mode == "auto" and not engine_is_local(url))


def workspace_tar(workspace: Path, uid: int, gid: int) -> IO[bytes]:
    """The workspace as a tar stream of its own folder (`NAME/...`), every entry owned by uid:gid.

    It is unpacked into the workspace's parent: the engine applies a folder entry's owner to an
    existing folder but skips a `.` entry, so the folder must be named for the run's uid to own it.
    """
    spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)  # noqa: SIM115 - returned open, for the upload

    def owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid, info.gid, info.uname, info.gname = uid, gid, "", ""
        return info

    with tarfile.open(fileobj=spool, mode="w") as tar:
        tar.add(str(workspace), arcname=workspace.name, filter=owned)
    spool.seek(0)
    return spool


def _safe(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo | None:
    """tarfile's `data` filter (no absolute paths, no escapes, no devices); a refused member is skipped."""
    try:
        return tarfile.data_filter(member, dest)
    except tarfile.FilterError:
        return None


def extract_back(chunks: Iterable[bytes], workspace: Path) -> None:
    """Unpack the engine's archive of the workspace directory over `workspace` (its top folder stripped)."""
    with tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES) as spool:
        for chunk in chunks:
            spool.write(chunk)
        spool.seek(0)
        with tarfile.open(fileobj=spool, mode="r") as tar:
            members = []
            for member in tar.getmembers():
                _top, _, rest = member.name.partition("/")
                if rest:
                    member.name = rest
                    members.append(member)
            tar.extractall(str(workspace), members=members, filter=_safe)
