"""Run one engine call on its own thread and event loop, away from the server's loop.

The engine is async but does some blocking work (copying the shadow
workspace, first imports of the graph libraries, parsing); none of it may
stall `textDocument/codeAction` and the other requests. Each run therefore
gets a thread with a private event loop. Hooks are bridged back to the
server's loop (events with `call_soon_threadsafe`, the safety question with
`run_coroutine_threadsafe`). Cancelling the awaiting task cancels the engine's
task on its own loop and waits for its cleanup before re-raising.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from agent_core.events import RunEvent, RunHooks, SafetyViolation

T = TypeVar("T")
_LIVE: set[threading.Thread] = set()  # engine threads not yet finished (daemons: see join_engine_threads)


def join_engine_threads(timeout: float) -> list[str]:
    """Wait up to `timeout` s for the engine threads to finish; the names of those still running.

    They are daemon threads so that a hung engine cannot keep a terminated
    server alive; but a daemon thread is frozen mid-work at interpreter exit,
    and one still removing (or still making) its shadow copy would leave it
    behind. So the server waits for them, bounded, before it exits.
    """
    deadline = time.monotonic() + timeout
    for thread in list(_LIVE):
        thread.join(max(0.0, deadline - time.monotonic()))
    return sorted(t.name for t in _LIVE if t.is_alive())


class ThreadedHooks:
    """RunHooks called from the engine's thread, delivered on the server's loop."""

    def __init__(self, inner: RunHooks, loop: asyncio.AbstractEventLoop) -> None:
        self._inner, self._loop = inner, loop

    def emit(self, event: RunEvent) -> None:
        self._loop.call_soon_threadsafe(self._inner.emit, event)

    async def approve(self, violations: list[SafetyViolation]) -> bool:
        future = asyncio.run_coroutine_threadsafe(self._inner.approve(violations), self._loop)
        return await asyncio.wrap_future(future)


async def run_in_thread(make: Callable[[], Awaitable[T]], name: str) -> T:
    """Await `make()` on a fresh thread's loop; cancellation is forwarded and waited for."""
    server_loop = asyncio.get_running_loop()
    outcome: asyncio.Future[T] = server_loop.create_future()
    ready = threading.Event()
    box: list[tuple[asyncio.AbstractEventLoop, asyncio.Task[T]]] = []  # the thread's loop and task, once made

    def deliver(settle: Callable[[], None]) -> None:
        if not outcome.done():
            settle()

    def target() -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            task = loop.create_task(_call(make))
            box.append((loop, task))
            ready.set()
            result = loop.run_until_complete(task)
            server_loop.call_soon_threadsafe(deliver, lambda: outcome.set_result(result))
        except BaseException as exc:  # noqa: BLE001 - includes the forwarded CancelledError
            error = asyncio.CancelledError() if isinstance(exc, asyncio.CancelledError) else exc
            server_loop.call_soon_threadsafe(deliver, lambda: outcome.set_exception(error))
        finally:
            ready.set()
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()
            _LIVE.discard(threading.current_thread())

    thread = threading.Thread(target=target, name=name, daemon=True)
    _LIVE.add(thread)
    thread.start()
    try:
        return await asyncio.shield(outcome)
    except asyncio.CancelledError:
        await asyncio.to_thread(ready.wait)
        if box and not box[0][0].is_closed():
            box[0][0].call_soon_threadsafe(box[0][1].cancel)
        try:
            await outcome  # the engine's cleanup: sandbox killed, shadow removed
        except BaseException:  # noqa: BLE001 - the cancellation below is what the caller sees
            pass
        raise


async def _call(make: Callable[[], Awaitable[T]]) -> T:
    return await make()
