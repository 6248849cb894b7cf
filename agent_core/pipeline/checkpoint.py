"""Resumable runs: the LangGraph SQLite checkpointer, the run lock and the shadow's rebuild.

Checkpoints live in `<workspace>/.agentls/checkpoints.sqlite`, one LangGraph
thread per run (thread_id = run_id), written after every node
(durability "sync"), and deleted when the run completes. Each run has its own
connection (`open_saver`), in WAL mode (readers never block the writer) with a
long busy timeout: concurrent runs take turns at the write lock instead of
failing with `database is locked` when a loaded machine keeps one run's
transaction open for more than SQLite's default 5 s. While a run works
it holds the run's lease (journal/lease.py: an exclusive `flock` on
`<run dir>/run.lock`), so `agentls resume` can tell a live run from an
interrupted one; the lock file also names the run's shadow copy so a resume
can remove the copy a crash left behind.

The shadow workspace is not in the checkpoint; the files the run changed
are (`shadow_files` in the graph state, refreshed after every node). A
resume copies the workspace again and writes those files back, then
continues the graph from its last checkpoint.

The state's test reports and plan are pydantic models: LangGraph's serializer stores
one with its class and rebuilds it on load, for the classes it is allowed to
(`state_serde`: the state's own, `state.STATE_MODELS`; by default it allows
any class with a warning, and blocks all but its own under
LANGGRAPH_STRICT_MSGPACK, handing back a plain dict).
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import aiosqlite
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from agent_core.errors import ResumeError, UnknownRun
from agent_core.journal.lease import RunLease
from agent_core.journal.trace import load_trace
from agent_core.journal.writer import Journal
from agent_core.pipeline.state import STATE_MODELS, RunState
from agent_core.workspace.shadow import ShadowWorkspace, write_exact

CHECKPOINTS = "checkpoints.sqlite"
RESUMABLE_KINDS = ("fix", "task")
BUSY_TIMEOUT_S = 120.0  # how long a checkpoint write waits for another run's write lock


def checkpoint_path(workspace: Path) -> Path:
    return Path(workspace) / ".agentls" / CHECKPOINTS


def shadow_files(shadow: ShadowWorkspace) -> dict[str, str | None]:
    """Current text of every file the run touched (None: the file does not exist now)."""
    return {rel: shadow.current(rel) for rel in sorted(shadow.originals)}


def restore_shadow(shadow: ShadowWorkspace, files: dict[str, str | None]) -> None:
    """Write a checkpoint's changed files into a fresh shadow copy."""
    for rel, text in files.items():
        shadow.remember(rel)
        target = shadow.resolve(rel)
        if text is None:
            target.unlink(missing_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            write_exact(target, text)


def rewind_shadow(shadow: ShadowWorkspace, files: dict[str, str | None]) -> None:
    """Put every file the run touched back to its text in `files`, or to its original text if absent."""
    restore_shadow(shadow, {rel: files.get(rel, original) for rel, original in shadow.originals.items()})


class RunCheckpoint:
    """A run's checkpointer (None: not checkpointed) and lock."""

    def __init__(self, saver: Any, lease: RunLease | None) -> None:
        self.saver, self.lease = saver, lease

    def note_shadow(self, shadow: ShadowWorkspace) -> None:
        if self.lease is not None:
            self.lease.note_shadow(shadow.root)

    async def invoke(
        self, graph: Any, config: dict[str, Any], initial: Mapping[str, Any] | None, shadow: ShadowWorkspace
    ) -> RunState:
        """Run the graph from `initial`, or (None) resume it from its last checkpoint."""
        run_id = config["configurable"]["thread_id"]
        durability = "sync" if self.saver is not None else None
        if initial is None:
            if self.saver is None:
                raise ResumeError(f"run {run_id} cannot be resumed: checkpoints are off (journal disabled)")
            snapshot = await graph.aget_state(config)
            if not snapshot.values or not snapshot.next:
                raise ResumeError(f"run {run_id} has no checkpoint to resume from")
            if self.lease is not None:
                self.lease.remove_stale_shadow()
            restore_shadow(shadow, snapshot.values.get("shadow_files") or {})
        final: RunState = await graph.ainvoke(initial, config, durability=durability)
        if self.saver is not None and hasattr(self.saver, "adelete_thread"):
            await self.saver.adelete_thread(run_id)  # done: nothing left to resume
        return final


def state_serde() -> JsonPlusSerializer:
    """The checkpoints' serializer: rebuilds the models the state holds, and no other class of ours."""
    return JsonPlusSerializer(allowed_msgpack_modules=STATE_MODELS)


@contextlib.asynccontextmanager
async def open_saver(path: Path, busy_timeout_s: float = BUSY_TIMEOUT_S) -> AsyncIterator[AsyncSqliteSaver]:
    """One run's checkpointer on the workspace's database: its own connection, WAL, a long busy timeout."""
    async with aiosqlite.connect(str(path), timeout=busy_timeout_s) as conn:
        await conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
        if (await (await conn.execute("PRAGMA journal_mode")).fetchone() or ("",))[0] != "wal":
            await conn.execute("PRAGMA journal_mode = WAL")  # once per database; the saver's setup asks again
        await conn.execute("PRAGMA synchronous = NORMAL")  # WAL's safe setting: a checkpoint is not a bank ledger
        yield AsyncSqliteSaver(conn, serde=state_serde())


@contextlib.asynccontextmanager
async def run_checkpointer(journal: Journal, given: Any = None) -> AsyncIterator[RunCheckpoint]:
    """The run's lock and the workspace's SQLite checkpointer (or `given`), for the run's duration."""
    if not journal.enabled:
        yield RunCheckpoint(given, None)
        return
    lease = RunLease(journal.dir)
    try:
        if given is not None:
            yield RunCheckpoint(given, lease)
            return
        path = journal.dir.parent.parent / CHECKPOINTS
        async with open_saver(path) as saver:
            yield RunCheckpoint(saver, lease)
    finally:
        lease.release()


def has_checkpoint(workspace: Path, run_id: str) -> bool:
    """Whether the workspace's checkpoint database holds a checkpoint of the run's thread (the saver's own query).

    The connection is read-only, so a look never creates the saver's tables in, or migrates, a database
    that a run may be writing; a file without them reads as "no checkpoint".
    """
    path = checkpoint_path(workspace)
    if not path.is_file():
        return False
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=2, check_same_thread=False)
        with contextlib.closing(conn):
            return SqliteSaver(conn, serde=state_serde()).get_tuple({"configurable": {"thread_id": run_id}}) is not None
    except sqlite3.Error:
        return False


def resumable_run(workspace: Path, run_id: str) -> dict[str, Any]:
    """The run_start record of an interrupted, resumable run; ResumeError says why not."""
    try:
        trace = load_trace(workspace, run_id)
    except UnknownRun as exc:
        raise ResumeError(str(exc)) from None
    start, status = trace.start, trace.summary.status
    if not start.get("request"):
        raise ResumeError(f"run {run_id} did not record its request; it cannot be resumed")
    if start.get("kind") not in RESUMABLE_KINDS:
        raise ResumeError(f"run {run_id} is a {start.get('kind')} run; only fix and task runs can be resumed")
    if status == "running":
        raise ResumeError(f"run {run_id} is running in another process")
    if not has_checkpoint(workspace, run_id):  # a run that completed deleted its checkpoints
        why = "it was interrupted before its first checkpoint" if status == "interrupted" else f"it finished ({status})"
        raise ResumeError(f"run {run_id} has nothing to resume: {why}")
    return start

