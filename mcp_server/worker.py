"""Run one engine call on its own thread and event loop, with its events and its cancellation bridged back.

The engine does blocking work (copying the shadow, first imports of the
graph, parsing) that must not stall the server's loop, where progress and
`notifications/cancelled` are handled. The language server has the same
bridge (`lsp_server/engine_thread.py`) for plain asyncio; this one is written
for the SDK's anyio: a cancelled anyio scope cancels every await inside it
again and again, so the clean-up (cancel the engine's task, wait until it has
killed its sandboxed processes and removed its shadow copy) runs in a
shielded scope, or it would be cut short at its first await.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from agent_core.events import RunEvent, SafetyViolation

T = TypeVar("T")
OnEvent = Callable[[RunEvent], Awaitable[None]]
_LIVE: set[threading.Thread] = set()
_RUNNING: dict[threading.Thread, tuple[asyncio.AbstractEventLoop, asyncio.Task[Any]]] = {}  # for cancel_all


class QueuedHooks:
    """RunHooks called on the engine's thread; events are queued for the server's loop. Unsafe code is refused:
    an MCP call has nobody to ask."""

    def __init__(self, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[RunEvent]) -> None:
        self._loop, self._queue = loop, queue

    def emit(self, event: RunEvent) -> None:
        self._loop.call_soon_threadsafe(self._queue.put_nowait, event)

    async def approve(self, violations: list[SafetyViolation]) -> bool:
        return False


def cancel_all() -> None:
    """Cancel every engine call still running (on SIGTERM): each kills its sandbox and removes its copy."""
    for loop, task in list(_RUNNING.values()):
        try:
            loop.call_soon_threadsafe(task.cancel)
        except RuntimeError:  # its loop has just closed: the call is over
            pass


def join_workers(timeout: float) -> list[str]:
    """Wait up to `timeout` s for engine threads still running (at the server's exit); the names left."""
    deadline = time.monotonic() + timeout
    for thread in list(_LIVE):
        thread.join(max(0.0, deadline - time.monotonic()))
    return sorted(t.name for t in _LIVE if t.is_alive())


async def run_engine_call(make: Callable[[QueuedHooks], Awaitable[T]], on_event: OnEvent | None = None,
                          name: str = "agentls-mcp") -> T:
    """Await `make(hooks)` on a fresh thread's loop; its events go to `on_event`; cancellation is forwarded and
    its clean-up waited for."""
    server_loop = asyncio.get_running_loop()
    events: asyncio.Queue[RunEvent] = asyncio.Queue()
    outcome: asyncio.Future[Any] = server_loop.create_future()
    outcome.add_done_callback(_retrieved)  # a cancelled call's outcome is delivered after nobody awaits it
    thread, ready = _start(make, QueuedHooks(server_loop, events), outcome, name)
    failed: Exception | None = None
    try:
        async with anyio.create_task_group() as group:
            if on_event is not None:
                group.start_soon(_pump, events, on_event)
            try:
                value = await asyncio.shield(outcome)
            except Exception as exc:  # noqa: BLE001 - re-raised below, outside the group (not as a group)
                failed = exc
            group.cancel_scope.cancel()
    except anyio.get_cancelled_exc_class():
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(ready.wait)
            running = _RUNNING.get(thread)
            if running is not None:
                with contextlib.suppress(RuntimeError):  # its loop closed meanwhile: the call is over
                    running[0].call_soon_threadsafe(running[1].cancel)
            await anyio.to_thread.run_sync(thread.join)
        raise
    if failed is not None:
        raise failed
    return value


def _start(make: Callable[[QueuedHooks], Awaitable[T]], hooks: QueuedHooks, outcome: asyncio.Future[Any],
           name: str) -> tuple[threading.Thread, threading.Event]:
    """Start the thread running `make(hooks)` on its own loop; its result or exception goes to `outcome`."""
    server_loop = outcome.get_loop()
    ready = threading.Event()  # set once the call's task exists (or the thread failed before)

    def deliver(setter: Callable[[Any], None], value: Any) -> None:
        if not outcome.done():
            setter(value)

    def target() -> None:
        loop = asyncio.new_event_loop()
        try:
            task = loop.create_task(_call(make, hooks))
            _RUNNING[threading.current_thread()] = (loop, task)
            ready.set()
            value = loop.run_until_complete(task)
            server_loop.call_soon_threadsafe(deliver, outcome.set_result, value)
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting side, cancellation included
            error = asyncio.CancelledError() if isinstance(exc, asyncio.CancelledError) else exc
            server_loop.call_soon_threadsafe(deliver, outcome.set_exception, error)
        finally:
            _RUNNING.pop(threading.current_thread(), None)
            ready.set()
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()
            _LIVE.discard(threading.current_thread())

    thread = threading.Thread(target=target, name=name, daemon=True)
    _LIVE.add(thread)
    thread.start()
    return thread, ready


def _retrieved(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


async def _pump(events: asyncio.Queue[RunEvent], on_event: OnEvent) -> None:
    while True:
        await on_event(await events.get())


async def _call(make: Callable[[QueuedHooks], Awaitable[T]], hooks: QueuedHooks) -> T:
    return await make(hooks)
