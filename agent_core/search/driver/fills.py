"""The model's fills made in the background while the search's driver runs (driver/single_edit.py takes them).

A `Fills` awaits `ModelBatches` (driver/interleave.py) in a task of its own, one hole's candidates at a time,
and queues them; the search takes what is ready after each of its driver runs, and waits for the rest once
its own candidates are done. A search on top of a step (driver/steps.py) pauses it, so that the model
fills that search's holes alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

from agent_core.search.candidate import Mutant
from agent_core.search.driver.interleave import ModelBatches


class Fills:
    """The model's fills made in the background while the search's driver runs, from `begin` or `wait_s` seconds
    on (whichever comes first; at once without `wait_s`): `more`'s batches (one hole's
    candidates each, driver/interleave.py) put in a queue as each hole is done, until its deadline passes or its
    endpoint fails, it has no hole left once the search's own candidates are done (`own_over`; before, a driver
    run may still point at a line, `prefer`), or the search ends (`close`)."""

    def __init__(self, more: ModelBatches, wait_s: float | None = None) -> None:
        self.more = more
        self._ready: asyncio.Queue[list[Mutant] | None] = asyncio.Queue()
        self.done = False  # the last batch was taken
        self._error: Exception | None = None
        self._holes = asyncio.Event()  # set when a hole may have come (`prefer`, `own_over`)
        self._own_over = False
        self._go = asyncio.Event()  # set: the filling begins (at once without `wait_s`)
        self._running = asyncio.Event()  # cleared: no next hole is asked (`paused`)
        self._running.set()
        if wait_s is None:
            self._go.set()
        self._wait_s = wait_s
        self._task = asyncio.create_task(self._fill())

    def begin(self) -> None:
        """Begin filling now, if not begun yet."""
        self._go.set()

    async def _fill(self) -> None:
        try:
            if not self._go.is_set():  # `begin`, or `wait_s` from now, whichever comes first
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._go.wait(), self._wait_s)
            while True:
                await self._running.wait()
                batch = await self.more()
                if batch is not None:
                    await self._ready.put(batch)
                    continue
                if self.more.done or self._own_over:
                    break
                self._holes.clear()  # no hole now: wait for a driver run to point at a line, or the search's end
                await self._holes.wait()
        except Exception as exc:  # noqa: BLE001 - raised in the search, where the batches are taken (`_end`)
            self._error = exc
        finally:
            self._ready.put_nowait(None)  # also when the search ended it

    @contextlib.asynccontextmanager
    async def paused(self) -> AsyncIterator[None]:
        """No next hole asked meanwhile (a hole being filled is finished): a search on top of a step has the
        model to itself."""
        self._running.clear()
        try:
            yield
        finally:
            self._running.set()

    def prefer(self, results: list[tuple[Mutant, str]]) -> None:
        """A driver run's results: the lines where a candidate passed the failing tests and the whole suite
        refused it get the next holes (ModelBatches.prefer)."""
        if self.more.prefer(results):
            self._holes.set()

    def own_over(self) -> None:
        """The search's own candidates are done: no driver run will point at a line any more."""
        self._own_over = True
        self._holes.set()
        self._go.set()

    def _end(self) -> None:
        """The last batch was taken: what broke the filling is raised in the search, as a model turn's was."""
        self.done = True
        if self._error is not None:
            raise self._error

    def ready(self) -> list[list[Mutant]]:
        """The batches made since asked last (empty ones left out), without waiting."""
        out: list[list[Mutant]] = []
        while not self.done and not self._ready.empty():
            batch = self._ready.get_nowait()
            if batch is None:
                self._end()
            elif batch:
                out.append(batch)
        return out

    async def next(self, until: float) -> list[Mutant] | None:
        """The next batch, waited for until `until`: None once there are no more, or at `until`."""
        while not self.done:
            left = until - time.monotonic()
            if left <= 0:
                return None
            try:
                batch = await asyncio.wait_for(self._ready.get(), left)
            except TimeoutError:
                return None
            if batch is None:
                self._end()
            elif batch:
                return batch
        return None

    async def close(self) -> None:
        """Stop filling (a sample being drawn is abandoned; the endpoint's stream is closed)."""
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
