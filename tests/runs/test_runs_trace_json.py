"""`agentls runs --json` and `agentls trace --json`: the same data as the text, as one JSON document."""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta
from pathlib import Path

from runs_support import FIX_AFTER_WRONG, REFLECTION, WRONG_EDIT, journal_records


def test_runs_and_trace_as_json(project: Path, scripted_llm, cli):
    scripted_llm.add("coder", WRONG_EDIT)
    scripted_llm.add("reflector", REFLECTION)
    scripted_llm.add("coder", FIX_AFTER_WRONG)
    run = cli("fix", str(project), "--base-url", scripted_llm.base_url, "--json")
    run_id = run.json["run_id"]

    listing = cli("runs", "--workspace", str(project), "--json")
    assert listing.code == 0, listing.stderr
    (summary,) = json.loads(listing.stdout)
    usage = run.json["usage"]
    assert summary["run_id"] == run_id and (summary["status"], summary["kind"]) == ("fixed", "fix")
    assert (summary["prompt_tokens"], summary["completion_tokens"], summary["llm_calls"]) == (
        usage["prompt_tokens"], usage["completion_tokens"], usage["llm_calls"])
    assert summary["tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert Path(summary["path"]).name == run_id
    assert list(summary)[0] == "schema" and summary["schema"] == 1
    started = datetime.fromisoformat(summary["started"])  # ISO 8601 in UTC, not epoch seconds
    assert summary["started"].endswith("+00:00") and started.utcoffset() == timedelta(0)
    assert abs(started.timestamp() - time.time()) < 3600

    trace = cli("trace", "--workspace", str(project), "--json")
    assert trace.code == 0, trace.stderr
    doc = json.loads(trace.stdout)
    assert doc["schema"] == 1 and doc["summary"] == {k: v for k, v in summary.items() if k != "schema"}
    assert run.json["schema"] == 1
    assert doc["start"]["type"] == "run_start" and doc["end"]["status"] == "fixed"
    blocks = [item for item in doc["timeline"] if "node" in item and "records" in item]
    for node in ("baseline", "plan", "code", "gate", "test", "reflect", "finalize"):
        assert node in [b["node"] for b in blocks]
    assert all(b["duration_s"] is not None for b in blocks)
    calls = [r for b in blocks for r in b["records"] if r["type"] == "llm_call"]
    journal_calls = [r for r in journal_records(project, run_id) if r["type"] == "llm_call"]
    assert calls == journal_calls and [c["role"] for c in calls] == ["coder", "reflector", "coder"]


def test_json_errors_and_empty_workspace(project: Path, cli, tmp_path: Path):
    empty = cli("runs", "--workspace", str(tmp_path / "nothing"), "--json")
    assert (empty.code, json.loads(empty.stdout)) == (0, [])
    unknown = cli("trace", "no-such-run", "--workspace", str(project), "--json")
    assert unknown.code == 2 and "no-such-run" in json.loads(unknown.stdout)["error"]
    assert json.loads(unknown.stdout)["schema"] == 1
    bad_limit = cli("runs", "--workspace", str(project), "--limit", "0", "--json")
    assert bad_limit.code == 2 and "--limit" in json.loads(bad_limit.stdout)["error"]
