"""SIGTERM stops a command the way Ctrl-C does, and a command starts by sweeping crash leftovers.

`kill` and CI timeouts send SIGTERM, whose default ends the process at once
and leaves the run's shadow copy, its checkpoint database's WAL/SHM files and
its `run.lock` behind. While a command runs, SIGTERM is handed to the SIGINT
handler in force: inside `asyncio.run` that cancels the running task (every
`finally` and `async with` of the run unwinds: sandboxed processes killed,
the copy removed, the lock released), elsewhere it raises KeyboardInterrupt.
`received()` tells the front end which signal stopped it, for its message,
its `--json` line and its exit code (128 + the signal's number).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Iterator
from types import FrameType
from typing import TYPE_CHECKING

from agent_core.engine import Engine
from agent_core.models import RunRequest, RunResult, new_run_id
from agent_core.sandbox.cleanup import remove_leftovers
from agent_core.sandbox.proctree import kill_orphaned_runs

if TYPE_CHECKING:
    from agent_core.events import RunHooks
    from agent_core.settings import Settings

INTERRUPTED = "interrupted"  # RunResult.error_kind of a run stopped by a signal
_received: list[int] = []


def _forward(signum: int, frame: FrameType | None) -> None:
    _received.append(signum)
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):
        handler(signal.SIGINT, frame)
    else:
        raise KeyboardInterrupt


def received() -> int:
    """The signal that interrupted the command: SIGTERM if it came, else SIGINT."""
    return _received[-1] if _received else signal.SIGINT


def describe() -> str:
    """'interrupted (SIGTERM)' or 'interrupted (SIGINT)'."""
    return f"interrupted ({signal.Signals(received()).name})"


def exit_status() -> int:
    """The shell's code for a process stopped by that signal."""
    return 128 + received()


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """While the block runs, SIGTERM does what Ctrl-C does (main thread only)."""
    _received.clear()
    try:
        previous = signal.signal(signal.SIGTERM, _forward)
    except ValueError:  # not the main thread: signals are not ours to handle
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def sweep_dead_owners() -> None:
    """Kill the sandboxed processes and remove the `agentls-*` temp dirs (shadow copies, probes) whose owner
    process is gone."""
    with contextlib.suppress(OSError):
        kill_orphaned_runs()
        remove_leftovers()


def run_engine(settings: Settings, request: RunRequest, hooks: RunHooks, resume: bool = False) -> RunResult:
    """Run the engine to the end; an interrupt (Ctrl-C, SIGTERM) comes back as an `error` result naming it.

    The run was cancelled inside the event loop, so its shadow copy, sandboxed
    processes and lock are gone by the time this returns; its result counts the
    model calls it made (a call cut short by the interrupt among them).
    """
    if request.run_id is None:  # known before the run starts, so an interrupted run can still be named
        request = request.model_copy(update={"run_id": new_run_id()})
    engine = Engine(settings)
    try:
        return asyncio.run(engine.run(request, hooks, resume=True) if resume else engine.run(request, hooks))
    except KeyboardInterrupt:
        return RunResult(run_id=request.run_id or "", kind=request.kind, status="error", error=describe(),
                         error_kind=INTERRUPTED, usage=engine.cancelled_usage,
                         usage_by_role=engine.cancelled_usage_by_role)
