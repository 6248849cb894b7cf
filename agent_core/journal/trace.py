"""Reading run journals back: the list of runs, and one run's `Trace`.

A journal is `<workspace>/.agentls/runs/<run_id>/journal.jsonl` (format in
writer.py). `list_runs` summarises every run, newest first; `load_trace`
groups one run's records into a node-by-node timeline, which render.py shows
as text (`agentls trace`) or Markdown (the LSP command `agentls.showTrace`).
`summary_json` and `trace_json` give the same data as plain JSON values
(`agentls runs --json`, `agentls trace --json`). A line cut short by a crash
is skipped, not fatal.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agent_core.errors import UnknownRun
from agent_core.journal.lease import run_is_active
from agent_core.journal.writer import runs_dir


@dataclass
class RunSummary:
    """One line of `agentls runs`."""

    run_id: str
    kind: str
    status: str  # run_end status, "running" (a process holds the run) or "interrupted"
    goal: str
    started: float
    duration_s: float
    prompt_tokens: int
    completion_tokens: int
    llm_calls: int
    iterations: int
    path: Path

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def started_text(self) -> str:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.started)) if self.started else "-"


@dataclass
class NodeBlock:
    """One node execution and the records written while it ran."""

    node: str
    start: float
    duration_s: float | None  # None: the node never finished (the run was interrupted)
    records: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Trace:
    """A run's journal, grouped for rendering."""

    summary: RunSummary
    start: dict[str, Any]  # run_start record ({} when missing)
    end: dict[str, Any]  # run_end record ({} when missing)
    items: list[NodeBlock | dict[str, Any]]  # node blocks and records outside any node, in order
    resumes: list[dict[str, Any]]


def read_journal(run_dir: Path) -> list[dict[str, Any]]:
    """The records of one journal; unreadable lines (a crash mid-write) are skipped."""
    records = []
    try:
        lines = (run_dir / "journal.jsonl").read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    for line in lines:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and "type" in record:
            records.append(record)
    return records


def summarise(run_dir: Path, records: list[dict[str, Any]]) -> RunSummary:
    """A RunSummary from a journal's records."""
    start = next((r for r in records if r["type"] == "run_start"), {})
    end: dict[str, Any] = next((r for r in reversed(records) if r["type"] == "run_end"), {})
    calls = [r for r in records if r["type"] == "llm_call"]
    usage = end.get("usage") or {
        "prompt_tokens": sum((c.get("usage") or {}).get("prompt_tokens", 0) for c in calls),
        "completion_tokens": sum((c.get("usage") or {}).get("completion_tokens", 0) for c in calls),
        "llm_calls": len(calls),
    }
    first = records[0]["ts"] if records else 0.0
    last = records[-1]["ts"] if records else 0.0
    status = end.get("status") or _unfinished_status(run_dir)
    return RunSummary(
        run_id=run_dir.name, kind=str(start.get("kind", "?")), status=status, goal=str(start.get("goal") or ""),
        started=float(first), duration_s=float(end.get("duration_s") or round(last - first, 3)),
        prompt_tokens=int(usage.get("prompt_tokens", 0)), completion_tokens=int(usage.get("completion_tokens", 0)),
        llm_calls=int(usage.get("llm_calls", len(calls))), iterations=int(end.get("iterations") or 0), path=run_dir,
    )


def _unfinished_status(run_dir: Path) -> str:
    return "running" if run_is_active(run_dir) else "interrupted"


def list_runs(workspace: Path, limit: int | None = None) -> list[RunSummary]:
    """Every run with a journal in `workspace`, newest first."""
    root = runs_dir(workspace)
    if not root.is_dir():
        return []
    out = []
    for run_dir in root.iterdir():
        if run_dir.is_dir() and (run_dir / "journal.jsonl").is_file():
            out.append(summarise(run_dir, read_journal(run_dir)))
    out.sort(key=lambda s: (s.started, s.run_id), reverse=True)
    return out[:limit] if limit else out


def _run_dir(workspace: Path, run_id: str | None) -> Path:
    runs = list_runs(workspace)
    if run_id is None:
        if not runs:
            raise UnknownRun(f"no runs recorded in {runs_dir(workspace)}")
        return runs[0].path
    candidate = runs_dir(workspace) / run_id
    if "/" not in run_id and run_id not in (".", "..") and (candidate / "journal.jsonl").is_file():
        return candidate
    recent = ", ".join(r.run_id for r in runs[:5]) or "none"
    raise UnknownRun(f"no run {run_id!r} in {runs_dir(workspace)}; recent runs: {recent}")


def load_trace(workspace: Path, run_id: str | None = None) -> Trace:
    """The trace of `run_id` (the latest run when None); UnknownRun if there is none."""
    run_dir = _run_dir(Path(workspace), run_id)
    records = read_journal(run_dir)
    items: list[NodeBlock | dict[str, Any]] = []
    open_block: NodeBlock | None = None
    for record in records:
        kind = record["type"]
        if kind == "node_enter":
            open_block = NodeBlock(node=str(record.get("node")), start=record["ts"], duration_s=None)
            items.append(open_block)
        elif kind == "node_exit":
            if open_block is not None and open_block.node == record.get("node"):
                open_block.duration_s = record.get("duration_s")
            open_block = None
        elif kind in ("run_start", "run_end", "run_resume"):
            open_block = None if kind == "run_resume" else open_block
        elif open_block is not None:
            open_block.records.append(record)
        else:
            items.append(record)
    start = next((r for r in records if r["type"] == "run_start"), {})
    end: dict[str, Any] = next((r for r in reversed(records) if r["type"] == "run_end"), {})
    resumes = [r for r in records if r["type"] == "run_resume"]
    return Trace(summarise(run_dir, records), start, end, items, resumes)


def summary_json(summary: RunSummary) -> dict[str, Any]:
    """One run's summary as a JSON object (`started` as ISO 8601 UTC or None, `path` as a string)."""
    started = None
    if summary.started:
        started = datetime.fromtimestamp(summary.started, UTC).isoformat(timespec="milliseconds")
    return {**asdict(summary), "started": started, "path": str(summary.path), "tokens": summary.tokens}


def trace_json(trace: Trace) -> dict[str, Any]:
    """A run's trace as a JSON object: summary, run start/end records, resumes, and the timeline.

    Each timeline item is either a node block (`{"node", "start", "duration_s", "records"}`)
    or a journal record written outside any node, as recorded.
    """
    items = [asdict(item) if isinstance(item, NodeBlock) else item for item in trace.items]
    return {"summary": summary_json(trace.summary), "start": trace.start, "end": trace.end,
            "resumes": trace.resumes, "timeline": items}
