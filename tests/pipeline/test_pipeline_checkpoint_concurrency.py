"""The checkpointer under concurrent runs: a write lock held longer than SQLite's default 5 s is waited for.

A second connection holds the database's write lock (BEGIN IMMEDIATE) for
5.5 s, as a run whose thread is starved on a loaded machine does between a
checkpoint write and its commit; meanwhile runs in threads of their own (as
the engine's runs are) write checkpoints after every node. With the saver's
default connection they failed with `database is locked`; each run's own
connection (WAL, a long busy timeout) waits its turn.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from pathlib import Path
from typing import TypedDict

from langgraph.graph import END, START, StateGraph

from agent_core.pipeline.checkpoint import open_saver

HOLD_S = 5.5  # longer than sqlite3's default busy timeout (5 s)


class _State(TypedDict, total=False):
    n: int


def _graph(saver):
    g = StateGraph(_State)
    g.add_node("one", lambda s: {"n": s.get("n", 0) + 1})
    g.add_node("two", lambda s: {"n": s["n"] + 1})
    g.add_edge(START, "one")
    g.add_edge("one", "two")
    g.add_edge("two", END)
    return g.compile(checkpointer=saver)


def _run(path: Path, thread_id: str, out: dict[str, object]) -> None:
    async def main() -> int:
        async with open_saver(path) as saver:
            final = await _graph(saver).ainvoke({"n": 0}, {"configurable": {"thread_id": thread_id}},
                                                durability="sync")
            await saver.adelete_thread(thread_id)
            return final["n"]

    try:
        out[thread_id] = asyncio.run(main())
    except Exception as exc:  # noqa: BLE001 - the test reports what each run ended with
        out[thread_id] = repr(exc)


def test_runs_wait_for_a_long_held_write_lock_instead_of_failing(tmp_path: Path):
    path = tmp_path / "checkpoints.sqlite"
    out: dict[str, object] = {}
    _run(path, "setup", out)  # the tables exist, as in a workspace that ran before
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    started = time.monotonic()
    threads = [threading.Thread(target=_run, args=(path, f"run-{i}", out)) for i in range(6)]
    for thread in threads:
        thread.start()
    time.sleep(HOLD_S)
    holder.execute("COMMIT")
    holder.close()
    for thread in threads:
        thread.join(60)
    assert out == {"setup": 2, **{f"run-{i}": 2 for i in range(6)}}
    assert time.monotonic() - started >= HOLD_S
    reader = sqlite3.connect(path)
    assert reader.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert reader.execute("SELECT count(*) FROM checkpoints").fetchone()[0] == 0, "each run deleted its own"
