"""Resumable runs: the LangGraph SQLite checkpointer, the run lock and the shadow's rebuild.

Checkpoints live in `<workspace>/.agentls/checkpoints.sqlite`, one LangGraph
thread per run (thread_id = run_id), written after every node
(durability "sync"), and deleted when the run completes. While a run works
it holds an exclusive `flock` on `<run dir>/run.lock` (released by the
kernel however the process ends), so `agentls resume` can tell a live run
from an interrupted one; the lock file also names the run's shadow copy so
a resume can remove the copy a crash left behind.

The shadow workspace is not in the checkpoint; the files the run changed
are (`shadow_files` in the graph state, refreshed after every node). A
resume copies the workspace again and writes those files back, then
continues the graph from its last checkpoint.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sqlite3
import tempfile
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from agent_core.engine import BadRequest
from agent_core.journal import Journal
from agent_core.workspace.shadow import ShadowWorkspace, write_exact

CHECKPOINTS = "checkpoints.sqlite"
LOCK = "run.lock"
RESUMABLE_KINDS = ("fix", "task")


class ResumeError(BadRequest):
    """A run that cannot be resumed (the message says why)."""


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


def run_is_active(run_dir: Path) -> bool:
    """True while some process holds the run's lock."""
    path = Path(run_dir) / LOCK
    if not path.is_file():
        return False
    with open(path, "a+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
    return False


class RunLease:
    """The exclusive lock of one run directory; remembers the run's shadow path in the lock file."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / LOCK
        self._handle = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - held for the run's lifetime
        try:
            fcntl.flock(self._handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._handle.close()
            raise ResumeError(f"run {run_dir.name} is running in another process") from None
        self._handle.seek(0)
        try:
            self.previous: dict[str, Any] = json.loads(self._handle.read() or "{}")
        except json.JSONDecodeError:
            self.previous = {}
        self._write({"pid": os.getpid()})

    def _write(self, data: dict[str, Any]) -> None:
        self._handle.seek(0)
        self._handle.truncate()
        self._handle.write(json.dumps(data))
        self._handle.flush()

    def note_shadow(self, root: Path) -> None:
        self._write({"pid": os.getpid(), "shadow": str(root)})

    def remove_stale_shadow(self) -> None:
        """Delete the shadow copy a killed process left behind (only an agentls temp dir)."""
        old = self.previous.get("shadow")
        if not old:
            return
        base = Path(old).parent
        temp = Path(tempfile.gettempdir()).resolve()
        if base.name.startswith("agentls-") and base.resolve().parent == temp and base.is_dir():
            from agent_core.sandbox.cleanup import remove_temp_dir

            remove_temp_dir(base)

    def release(self) -> None:
        """Unlock; the lock file goes too (only a killed run leaves one, naming its shadow copy)."""
        with contextlib.suppress(OSError):
            self.path.unlink()
            fcntl.flock(self._handle, fcntl.LOCK_UN)
        self._handle.close()


class RunCheckpoint:
    """A run's checkpointer (None: not checkpointed) and lock."""

    def __init__(self, saver: Any, lease: RunLease | None) -> None:
        self.saver, self.lease = saver, lease

    def note_shadow(self, shadow: ShadowWorkspace) -> None:
        if self.lease is not None:
            self.lease.note_shadow(shadow.root)

    async def invoke(
        self, graph: Any, config: dict, initial: Mapping[str, Any] | None, shadow: ShadowWorkspace
    ) -> dict:
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
        final = await graph.ainvoke(initial, config, durability=durability)
        if self.saver is not None and hasattr(self.saver, "adelete_thread"):
            await self.saver.adelete_thread(run_id)  # done: nothing left to resume
        return final


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
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        path = journal.dir.parent.parent / CHECKPOINTS
        async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
            yield RunCheckpoint(saver, lease)
    finally:
        lease.release()


def has_checkpoint(workspace: Path, run_id: str) -> bool:
    """Whether the workspace's checkpoint database holds a thread for `run_id`."""
    path = checkpoint_path(workspace)
    if not path.is_file():
        return False
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=2)) as conn:
            row = conn.execute("SELECT 1 FROM checkpoints WHERE thread_id = ? LIMIT 1", (run_id,)).fetchone()
    except sqlite3.Error:
        return False
    return row is not None


def resumable_run(workspace: Path, run_id: str) -> dict[str, Any]:
    """The run_start record of an interrupted, resumable run; ResumeError says why not."""
    from agent_core.journal_view import UnknownRun, load_trace

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

