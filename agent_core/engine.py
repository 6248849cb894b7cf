"""The engine's front door: one call runs one request end to end.

Both front ends (the CLI and the language server) call `Engine.run`. It never
raises for an expected failure: unfixed, failing tests, an unreachable
endpoint or bad input all come back as a `RunResult` with a status and an
error message. Cancelling the awaiting task stops the run: the LLM call is
abandoned, sandboxed processes are killed, the shadow copy is removed, and
the workspace is untouched (the engine never writes the real workspace; the
front end applies `RunResult.change_set`).
"""

from __future__ import annotations

from agent_core.events import RunHooks
from agent_core.models import RunRequest, RunResult
from agent_core.settings import Settings


class Engine:
    """Runs fix / task / test / gen_tests requests with one settings object."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    async def run(self, request: RunRequest, hooks: RunHooks) -> RunResult:
        raise NotImplementedError("filled in by the pipeline work")
