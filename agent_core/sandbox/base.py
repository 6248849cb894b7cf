"""The sandbox seam: run a command on a shadow workspace, isolated and limited.

Backends (bubblewrap, docker, plain process) implement `Sandbox`; `factory.py`
picks one from settings. A command that fails or times out is data
(`CommandResult`), not an exception; exceptions mean the sandbox itself broke.
"""

from __future__ import annotations

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
