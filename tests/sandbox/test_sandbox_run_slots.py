"""The run queue's slots: a limit, first come first served, a cancelled waiter takes no slot."""

from __future__ import annotations

import asyncio

import pytest

from agent_core.sandbox.run_slots import RunSlots


async def _worker(slots: RunSlots, name: str, order: list[str], gate: asyncio.Event, limit: int = 2) -> None:
    await slots.acquire(limit)
    order.append(name)
    try:
        await gate.wait()
    finally:
        slots.release()


async def test_at_most_the_limit_run_and_the_rest_start_in_order():
    slots, order, gate = RunSlots(), [], asyncio.Event()
    tasks = [asyncio.create_task(_worker(slots, f"r{i}", order, gate)) for i in range(5)]
    await asyncio.sleep(0.01)
    assert order == ["r0", "r1"] and slots.running == 2 and slots.waiting == 3
    assert not slots.free(2) and not slots.free(9), "a waiting queue means no newcomer starts ahead of it"
    gate.set()
    await asyncio.gather(*tasks)
    assert order == ["r0", "r1", "r2", "r3", "r4"] and slots.running == 0 and slots.free(2)


async def test_a_waiter_cancelled_leaves_the_queue_without_a_slot():
    slots, order, gate = RunSlots(), [], asyncio.Event()
    first = asyncio.create_task(_worker(slots, "a", order, gate, limit=1))
    waiting = asyncio.create_task(_worker(slots, "b", order, gate, limit=1))
    last = asyncio.create_task(_worker(slots, "c", order, gate, limit=1))
    await asyncio.sleep(0.01)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert slots.waiting == 1
    gate.set()
    await asyncio.gather(first, last)
    assert order == ["a", "c"] and slots.running == 0


async def test_a_raised_limit_lets_more_start():
    slots = RunSlots()
    await slots.acquire(1)
    assert not slots.free(1) and slots.free(3)
    await slots.acquire(3)
    assert slots.running == 2
