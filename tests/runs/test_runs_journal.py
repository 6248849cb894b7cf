"""The run journal: every model call recorded, no secret anywhere, and readable through trace/runs."""

from __future__ import annotations

from pathlib import Path

from testkit.runs_support import FIX_AFTER_WRONG, PLAN, REFLECTION, SECRET, WRONG_EDIT, journal_records, run_dir


def test_journal_records_every_call_and_no_secret(project: Path, scripted_llm, cli):
    scripted_llm.add("planner", PLAN)
    scripted_llm.add("coder", {**WRONG_EDIT, "explanation": f"I used the key {SECRET} to check"})  # a model echoing it
    scripted_llm.add("reflector", REFLECTION)
    scripted_llm.add("coder", FIX_AFTER_WRONG)
    scripted_llm.add("explainer", "add multiplied; it adds now.")

    run = cli("fix", str(project), "--base-url", scripted_llm.base_url, "--goal", "make add add", "--json")

    assert run.code == 0 and run.json["status"] == "fixed", run.stderr
    run_id = run.json["run_id"]
    records = journal_records(project, run_id)
    calls = [r for r in records if r["type"] == "llm_call"]
    assert len(calls) == len(scripted_llm.requests) == 5
    assert [c["role"] for c in calls] == [r["role"] for r in scripted_llm.requests]
    for call, request in zip(calls, scripted_llm.requests, strict=True):
        assert call["messages"][-1]["content"] == request["messages"][-1]["content"]
        assert call["usage"]["prompt_tokens"] > 0
    assert sum(c["usage"]["prompt_tokens"] for c in calls) == run.json["usage"]["prompt_tokens"]
    files = [p for p in run_dir(project, run_id).iterdir() if p.is_file()]
    assert {"journal.jsonl", "summary.json", "changes.diff"} <= {p.name for p in files}
    for path in [*files, project / ".agentls" / "checkpoints.sqlite"]:
        assert SECRET.encode() not in path.read_bytes(), path
    assert "I used the key [redacted] to check" in calls[1]["answer"], "the echoed key is scrubbed, the rest kept"


def test_trace_and_runs_show_the_run(project: Path, scripted_llm, cli):
    scripted_llm.add("coder", WRONG_EDIT)
    scripted_llm.add("reflector", REFLECTION)
    scripted_llm.add("coder", FIX_AFTER_WRONG)
    run = cli("fix", str(project), "--base-url", scripted_llm.base_url, "--json")
    run_id = run.json["run_id"]

    text = cli("trace", "--workspace", str(project))  # latest run by default
    assert text.code == 0, text.stderr
    assert text.stdout.startswith(f"Run {run_id}: fix, fixed")
    for node in ("baseline", "plan", "code", "gate", "test", "reflect", "finalize"):
        assert f"] {node} (" in text.stdout
    assert "LLM reflector -> Reflection" in text.stdout and "add multiplies instead of adding" in text.stdout
    assert "tool replace_in_file(calc.py) ok" in text.stdout
    assert "tests: 2 passed, 0 failed, 0 errors" in text.stdout
    assert "+    return a + b" in text.stdout, "the final change set"

    md = cli("trace", run_id, "--workspace", str(project), "--markdown")
    assert md.code == 0 and md.stdout.startswith(f"# Run {run_id}: fix, fixed") and "## Timeline" in md.stdout

    listing = cli("runs", "--workspace", str(project))
    row = next(line for line in listing.stdout.splitlines() if line.startswith(run_id))
    tokens = run.json["usage"]["prompt_tokens"] + run.json["usage"]["completion_tokens"]
    assert row.split()[1:3] == ["fixed", "fix"] and f" {tokens} " in row

    unknown = cli("trace", "no-such-run", "--workspace", str(project))
    assert unknown.code == 2 and "no run 'no-such-run'" in unknown.stderr and run_id in unknown.stderr
