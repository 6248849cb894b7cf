"""`agentls.showTrace`: a run's journal as Markdown.

Uses `agent_core.journal_view.render_markdown(workspace, run_id)` when the
engine provides it; otherwise renders `.agentls/runs/<id>/journal.jsonl`
here: one line per entry, LLM calls and test reports summarised.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

RUNS_DIR = Path(".agentls") / "runs"


def latest_run_id(workspace: Path) -> str | None:
    runs = workspace / RUNS_DIR
    if not runs.is_dir():
        return None
    journals = sorted(runs.glob("*/journal.jsonl"), key=lambda p: p.stat().st_mtime)
    return journals[-1].parent.name if journals else None


def _entry_line(entry: dict) -> str:
    kind = entry.get("type", "?")
    if kind == "llm_call":
        usage = entry.get("usage") or {}
        return f"- **llm_call** {entry.get('role')} ({entry.get('schema')}): {usage.get('prompt_tokens', 0)}+{usage.get('completion_tokens', 0)} tokens, {entry.get('duration_s', 0):.2f} s"
    if kind == "test_report":
        report = entry.get("report") or {}
        return f"- **test_report**: {report.get('passed', 0)} passed, {report.get('failed', 0)} failed, {report.get('errors', 0)} errors"
    if kind in ("node_enter", "node_exit"):
        return f"- {kind} `{entry.get('node')}`"
    if kind == "run_start":
        return f"- **run_start** {entry.get('kind')}: {entry.get('goal') or ''}"
    if kind == "run_end":
        return f"- **run_end** {entry.get('status')} after {entry.get('iterations', 0)} iteration(s){': ' + entry['error'] if entry.get('error') else ''}"
    extra = {k: v for k, v in entry.items() if k not in ("ts", "run_id", "type")}
    return f"- **{kind}** `{json.dumps(extra)[:200]}`"


def _fallback(workspace: Path, run_id: str) -> str:
    journal = workspace / RUNS_DIR / run_id / "journal.jsonl"
    if not journal.is_file():
        raise FileNotFoundError(f"no journal for run {run_id} in {workspace / RUNS_DIR}")
    lines = [f"# agentls run {run_id}", ""]
    for raw in journal.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(raw)
        except json.JSONDecodeError:
            continue
        lines.append(_entry_line(entry))
    return "\n".join(lines) + "\n"


def render(workspace: Path, run_id: str) -> str:
    """Markdown of one run's journal (blocking: call off the event loop)."""
    try:
        view = importlib.import_module("agent_core.journal_view")
    except ModuleNotFoundError:
        return _fallback(workspace, run_id)
    return view.render_markdown(workspace, run_id)
