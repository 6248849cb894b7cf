"""`has_checkpoint` asks LangGraph's own SQLite saver, read-only, whether a run's thread can be resumed."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path
from typing import TypedDict

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph

from agent_core.pipeline.checkpoint import checkpoint_path, has_checkpoint


class _State(TypedDict):
    count: int


def _graph():
    builder = StateGraph(_State)
    builder.add_node("step", lambda state: {"count": state["count"] + 1})
    builder.add_edge(START, "step")
    builder.add_edge("step", END)
    return builder


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def test_a_thread_written_by_the_saver_is_found_and_the_database_is_left_as_it_was(tmp_path: Path):
    path = checkpoint_path(tmp_path)
    path.parent.mkdir(parents=True)
    async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
        graph = _graph().compile(checkpointer=saver)
        final = await graph.ainvoke({"count": 1}, {"configurable": {"thread_id": "run-a"}}, durability="sync")
    assert final == {"count": 2}
    before = _digest(path)

    assert has_checkpoint(tmp_path, "run-a")
    assert not has_checkpoint(tmp_path, "run-b")
    assert _digest(path) == before, "a look at the checkpoints wrote to the database"


async def test_a_deleted_thread_has_no_checkpoint(tmp_path: Path):
    path = checkpoint_path(tmp_path)
    path.parent.mkdir(parents=True)
    async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
        graph = _graph().compile(checkpointer=saver)
        await graph.ainvoke({"count": 0}, {"configurable": {"thread_id": "done"}}, durability="sync")
        await saver.adelete_thread("done")  # what a completed run does
    assert not has_checkpoint(tmp_path, "done")


def test_no_database_or_one_without_the_savers_tables_reads_as_no_checkpoint(tmp_path: Path):
    assert not has_checkpoint(tmp_path, "run-a")
    path = checkpoint_path(tmp_path)
    path.parent.mkdir(parents=True)
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE unrelated (x)")
    assert not has_checkpoint(tmp_path, "run-a")
    with sqlite3.connect(path) as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables == {"unrelated"}, "the read-only look created the saver's tables"
