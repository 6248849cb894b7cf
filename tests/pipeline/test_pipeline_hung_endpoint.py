"""`agentls fix` against an endpoint that hangs: it stops at the model call's deadline,
says why, counts what it sent."""

from __future__ import annotations

from pathlib import Path

from agent_core.llm import retrying
from engine_support import snapshot
from testkit.scripted_llm import Fault

SETTINGS = "request_timeout_s = 1.0\nmax_retries = 5\nretry_backoff_s = 0.01\nllm_deadline_s = 2.5\n"


def test_a_hung_endpoint_ends_the_run_at_the_deadline(project: Path, scripted_llm, run_fix, monkeypatch):
    monkeypatch.setattr(retrying, "WAIT_REPORT_S", 0.5)
    (project / ".agentls.toml").write_text(SETTINGS)
    scripted_llm.default("coder", Fault.hang(60))
    before = snapshot(project)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--apply")

    assert run.code == 2, run.stderr
    out = run.json
    assert out["status"] == "error"
    assert out["error"].endswith("no answer within the 2.5 s deadline of one model call (llm_deadline_s)")
    sent = len(scripted_llm.requests_for("coder"))
    assert sent in (2, 3), "retried within the deadline, not 1 + max_retries times"
    assert out["usage"]["llm_calls"] == 1, "the call that was sent and never answered is counted"
    assert snapshot(project) == before
    waiting = [line for line in run.stderr.splitlines() if "s for the coder model; " in line]
    assert waiting and "coding" in waiting[0], "the current phase was reported again while the call waited"


def test_an_errored_run_reports_the_calls_it_made_before_the_error(project: Path, scripted_llm, run_fix):
    (project / ".agentls.toml").write_text(SETTINGS)
    plan = {
        "approach": "x",
        "subtasks": [
            {"id": "t1", "description": "make add add", "priority": 3, "dependencies": [], "files": ["calc.py"]}
        ],
    }
    scripted_llm.add("planner", plan)
    scripted_llm.default("coder", Fault.status(503))

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--goal", "make add add")

    assert run.json["status"] == "error" and "HTTP 503" in run.json["error"]
    assert len(scripted_llm.requests_for("planner")) == 1
    assert run.json["usage"]["llm_calls"] == 2, "the planner's answered call and the coder's failed one"
    assert run.json["usage"]["prompt_tokens"] > 0, "the planner's tokens are not lost"
