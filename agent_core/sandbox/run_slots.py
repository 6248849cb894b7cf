"""The run queue: at most `max_concurrent_runs` runs work at once; the others wait their turn, first come first served.

Hand-written rather than an `asyncio.Semaphore`: the limit is a setting the
user can change while runs wait (it is read on every acquire), and the queue
must say how many runs are ahead of a waiting one. A run cancelled while it
waits leaves the queue without taking a slot; a slot a run gives back goes
straight to the first waiter, so a newcomer cannot jump the queue. Each
long-lived front end (the language server, the MCP server) keeps one and
takes a slot on its own event loop before a run starts its sandboxes.
"""

from __future__ import annotations

import asyncio
from collections import deque


class RunSlots:
    """Slots for runs; `acquire(limit)` waits in line when every slot is taken."""

    def __init__(self) -> None:
        self.running = 0
        self._waiting: deque[asyncio.Future[None]] = deque()

    @property
    def waiting(self) -> int:
        return sum(1 for f in self._waiting if not f.done())

    def free(self, limit: int) -> bool:
        """Whether a run asking now would start at once."""
        return self.running < max(1, limit) and not self.waiting

    async def acquire(self, limit: int) -> None:
        if self.free(limit):
            self.running += 1
            return
        slot: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append(slot)
        try:
            await slot  # release() hands its slot over: `running` stays counted
        except asyncio.CancelledError:
            if slot.done() and not slot.cancelled():  # handed a slot just as it was cancelled: pass it on
                self.release()
            raise
        finally:
            if slot in self._waiting:
                self._waiting.remove(slot)

    def release(self) -> None:
        while self._waiting:
            slot = self._waiting.popleft()
            if not slot.done():
                slot.set_result(None)
                return
        self.running = max(0, self.running - 1)
