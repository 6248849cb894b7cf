"""What locks a sandbox container down, and which limit a finished run ran into (pure; unit-tested).

A run's container has no network, a CPU quota, a memory limit without swap, a
pids limit, a read-only root filesystem with a tmpfs `/tmp` and a `/dev/shm`
sized from the memory setting (constants.tmpfs_sizes; the engine counts
their pages against the memory limit too), the shadow
workspace bind-mounted at its own path as the only writable place, uid 65534
(when we are root), every capability dropped, `no-new-privileges` and
rlimits on file size, core dumps and open files. Labels name the owning
process and host, so that sweep.py can remove what a crashed process left.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

from docker.types import Ulimit

from agent_core.sandbox.constants import SANDBOX_UID, tmpfs_sizes

LABEL_RUN = "agentls.run"
LABEL_OWNER = "agentls.owner_pid"
LABEL_HOST = "agentls.host"


# A test run's CPU weight: a sixteenth of the default 1024, so a local model's server beside it comes first (the
# container's cgroup is weighed against the server's; launcher.yield_cpu does the same for local backends).
CPU_SHARES = 64


def owner_labels() -> dict[str, str]:
    """The labels that mark a container as agentls' and name this process and host as its owner."""
    return {LABEL_RUN: "1", LABEL_OWNER: str(os.getpid()), LABEL_HOST: socket.gethostname()}


def container_options(sandbox: Any, workspace: Path, timeout_s: float) -> dict[str, Any]:
    """Keyword arguments of `containers.create` that make up the isolation (pure; unit-tested)."""
    ws = str(workspace)
    mib = 1024 * 1024
    tmp_mb, shm_mb = tmpfs_sizes(sandbox.memory_mb)
    return {
        "working_dir": ws,
        "network_mode": "none",
        "nano_cpus": int(sandbox.cpus * 1_000_000_000),
        "cpu_shares": CPU_SHARES,
        "mem_limit": sandbox.memory_mb * mib,
        "memswap_limit": sandbox.memory_mb * mib,
        "pids_limit": sandbox.pids,
        "read_only": True,
        "tmpfs": {"/tmp": f"rw,nosuid,nodev,size={tmp_mb}m"},
        "shm_size": shm_mb * mib,
        "volumes": {ws: {"bind": ws, "mode": "rw"}},
        "user": container_user(),
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "ulimits": [
            Ulimit(name="fsize", soft=sandbox.file_size_mb * mib, hard=sandbox.file_size_mb * mib),
            Ulimit(name="core", soft=0, hard=0),
            Ulimit(name="nofile", soft=1024, hard=1024),
        ],
        "labels": {**owner_labels(), "agentls.timeout_s": str(timeout_s)},
        "stdin_open": False,
        "tty": False,
        "detach": True,
    }


def container_user() -> str:
    """uid:gid inside the container: 65534 when we are root (the workspace is handed to it), else our own."""
    if os.geteuid() == 0:
        return f"{SANDBOX_UID}:{SANDBOX_UID}"
    return f"{os.getuid()}:{os.getgid()}"


def limit_hit(state: dict[str, Any], exit_code: int | None, timed_out: bool, output: str) -> str | None:
    """The limit a finished container ran into (memory, file_size, pids), read from its state and output."""
    if timed_out:
        return None
    if state.get("OOMKilled"):
        return "memory"
    if exit_code == 128 + 25 or "File too large" in output:
        return "file_size"
    if exit_code and "No space left on device" in output:
        return "disk"
    if exit_code and ("MemoryError" in output or "Cannot allocate memory" in output):
        return "memory"
    if exit_code and ("Resource temporarily unavailable" in output or "BlockingIOError: [Errno 11]" in output):
        return "pids"
    return None
