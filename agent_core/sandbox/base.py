"""The sandbox seam: run a command on a shadow workspace, isolated and limited.

Backends (bubblewrap, docker, plain process) implement `Sandbox`; `factory.py`
picks one from settings. A command that fails or times out is data
(`CommandResult`), not an exception; exceptions mean the sandbox itself broke.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, Field


class CommandResult(BaseModel):
    """Outcome of one sandboxed command."""

    exit_code: int | None = Field(description="Exit code; None when killed before exiting.")
    stdout: str = ""
    stderr: str = ""
    duration_s: float = 0.0
    timed_out: bool = False
    limit_hit: str | None = Field(default=None, description="'memory', 'pids', 'cpu', 'file_size', ... if known.")


class SandboxError(RuntimeError):
    """The sandbox could not be set up or run (not a failing command)."""


class Sandbox(Protocol):
    """Runs untrusted commands with `workspace` as the only writable place."""

    name: str
    isolated: bool
    python: str  # the Python interpreter to call inside the sandbox (a path or a name on its PATH)

    async def run(
        self,
        argv: list[str],
        workspace: Path,
        *,
        timeout_s: float | None = None,
        env: dict[str, str] | None = None,
    ) -> CommandResult:
        """Run argv with cwd = workspace. Cancelling the awaiting task kills every process it started."""
        ...


# Environment variable names that may carry secrets; never passed into a sandbox.
_SECRET_NAME = re.compile(
    r"(^AGENTLS_|^OPENAI_|_API_KEY$|API_KEY|_TOKEN$|^TOKEN$|SECRET|PASSWORD|PASSWD|CREDENTIAL|_KEY$|^AWS_|^SSH_)",
    re.IGNORECASE,
)


def is_secret_name(name: str) -> bool:
    """True for variable names that look like they hold a secret (or configure agentls itself)."""
    return bool(_SECRET_NAME.search(name))


def sandbox_env(extra: Mapping[str, str] | None = None, *, pythonpath: str | None = None) -> dict[str, str]:
    """The minimal environment of a sandboxed command: fixed basics plus `extra` minus secrets."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        # glibc reserves 64 MiB of address space per malloc arena (one per thread, up to 8 per
        # core): under the address-space limit a few dozen threads would exhaust it.
        "MALLOC_ARENA_MAX": "2",
    }
    for key, value in (extra or {}).items():
        if not is_secret_name(key):
            env[key] = value
    if pythonpath:
        env["PYTHONPATH"] = pythonpath + (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env
