"""The last-resort sandbox: a plain child process with rlimits, NOT isolated.

Used only when bubblewrap cannot run (and Docker is not available). The
command still gets a clean environment without secrets, rlimits on CPU,
address space, file size and processes (as a uid of its own when we are root,
so the process limit holds and counts only this run), and a wall-clock timeout that kills its process group
and every process carrying the run's marker. It can reach the network and
write wherever that uid may write: the factory announces this loudly.
"""

from __future__ import annotations

from pathlib import Path

from agent_core.sandbox.base import CommandResult
from agent_core.sandbox.launcher import (
    launch,
    new_marker,
    prepare_local_run,
    prepare_workspace,
)
from agent_core.sandbox.runtime import SandboxRuntime, resolve_runtime
from agent_core.sandbox.uids import claim_run_uid
from agent_core.settings import SandboxSettings

NOT_ISOLATED_WARNING = (
    "agentls: the sandbox is a plain process (bubblewrap and Docker are unavailable): tests run with rlimits "
    "but CAN use the network and write outside the workspace"
)


class ProcessSandbox:
    """Runs commands as a limited child process without namespaces."""

    name = "process"
    isolated = False
    passes_fds = True  # run(pass_fds=...) keeps those descriptors open in the child (testing/channel.py)

    def __init__(self, settings: SandboxSettings | None = None, *, runtime: SandboxRuntime | None = None) -> None:
        self.settings = settings or SandboxSettings()
        self.runtime = runtime or resolve_runtime(self.settings.python)
        self.python = self.runtime.python

    async def run(
        self,
        argv: list[str],
        workspace: Path,
        *,
        timeout_s: float | None = None,
        env: dict[str, str] | None = None,
        pass_fds: tuple[int, ...] = (),
    ) -> CommandResult:
        """Run argv with cwd = workspace, limited and timed, but not isolated."""
        with claim_run_uid() as uid:
            workspace, limits, inner_env = prepare_local_run(
                workspace, self.settings, uid, self.runtime.pythonpath(), timeout_s, env)
            inner_env["TMPDIR"] = str(workspace / ".agentls" / "tmp")
            (workspace / ".agentls" / "tmp").mkdir(parents=True, exist_ok=True)
            prepare_workspace(workspace / ".agentls", uid)
            return await launch(
                argv, cwd=workspace, env=inner_env, timeout_s=limits.timeout_s,
                uid=uid, limits=limits, run_id=new_marker(), pass_fds=pass_fds,
            )
