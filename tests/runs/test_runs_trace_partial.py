"""Reading journals of interrupted runs: a line cut by a crash, no run_end, newest first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_core.errors import UnknownRun
from agent_core.journal.render import render_markdown, render_text
from agent_core.journal.trace import list_runs


def _write(root: Path, run_id: str, records: list[dict], tail: str = "") -> None:
    d = root / ".agentls" / "runs" / run_id
    d.mkdir(parents=True)
    lines = [json.dumps({"run_id": run_id, **r}) for r in records]
    (d / "journal.jsonl").write_text("\n".join(lines) + "\n" + tail)


def test_interrupted_run_is_listed_and_rendered(tmp_path: Path):
    _write(tmp_path, "20260101-000000-aaaa", [
        {"ts": 100.0, "type": "run_start", "kind": "fix", "goal": "old", "settings": {}},
        {"ts": 101.0, "type": "run_end", "status": "unfixed", "iterations": 1, "duration_s": 1.0,
         "usage": {"prompt_tokens": 5, "completion_tokens": 1, "llm_calls": 1}},
    ])
    _write(tmp_path, "20260102-000000-bbbb", [
        {"ts": 200.0, "type": "run_start", "kind": "task", "goal": "new goal", "settings": {}},
        {"ts": 200.5, "type": "node_enter", "node": "plan"},
        {"ts": 201.0, "type": "llm_call", "role": "planner", "schema": "PlannerOutput", "mode": "json_object",
         "messages": [{"role": "user", "content": "Goal: new goal"}], "answer": "{}", "attempts": 2,
         "usage": {"prompt_tokens": 7, "completion_tokens": 3}, "duration_s": 0.5},
    ], tail='{"ts": 202.0, "type": "tool_c')  # the crash cut the last line

    runs = list_runs(tmp_path)
    assert [r.run_id for r in runs] == ["20260102-000000-bbbb", "20260101-000000-aaaa"]
    assert (runs[0].status, runs[0].tokens, runs[0].llm_calls) == ("interrupted", 10, 1)
    assert (runs[1].status, runs[1].tokens) == ("unfixed", 6)
    text = render_text(tmp_path)
    assert text.startswith("Run 20260102-000000-bbbb: task, interrupted")
    assert "plan (unfinished)" in text and "2 attempts" in text and "the run has no end record" in text
    assert "Goal: new goal" in text, "the trimmed prompt"
    md = render_markdown(tmp_path, "20260101-000000-aaaa")
    assert md.startswith("# Run 20260101-000000-aaaa: fix, unfixed") and "status: unfixed" in md


def test_unknown_run_lists_recent_ones(tmp_path: Path):
    with pytest.raises(UnknownRun, match="no runs recorded"):
        render_text(tmp_path)
    _write(tmp_path, "20260101-000000-aaaa", [{"ts": 1.0, "type": "run_start", "kind": "fix", "goal": "g"}])
    with pytest.raises(UnknownRun, match="recent runs: 20260101-000000-aaaa"):
        render_text(tmp_path, "../../etc")
