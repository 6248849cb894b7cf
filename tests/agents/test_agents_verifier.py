"""The verifier (seeds 000/001): a model's score of the verified diff against the goal, after the tests pass.

Off by default; on here through the project's .agentls.toml. A low score sends
the run back for one more round with the verifier's feedback; a round that
breaks a test is undone and the verified change stands; a run whose tests
fail never reaches the verifier.
"""

from __future__ import annotations

import json
from pathlib import Path

from agent_core.journal.render import render_markdown
from engine_support import FIX_EDIT, WRONG_EDIT, journal_records

VERIFIER_ON = "[verify]\nverifier = true\nthreshold = 0.7\nverifier_rounds = 1\n"
LOW = {
    "score": 0.4,
    "feedback": "add adds now but has no docstring, which the goal asks for.",
    "improvements": ["give add a one-line docstring"],
}
HIGH = {"score": "9/10", "feedback": "add adds and is documented.", "improvements": []}
DOCUMENT = {
    "edits": [
        {"path": "calc.py", "search": "def add(a, b):\n", "replace": 'def add(a, b):\n    """The sum of a and b."""\n'}
    ]
}
BREAK = {"edits": [{"path": "calc.py", "search": "    return a + b", "replace": "    return a * b"}]}
GOAL = "Fix add and document it"
PLAN = {
    "approach": "Fix and document add.",
    "subtasks": [{"id": "t1", "description": "make add add, with a docstring", "files": ["calc.py"]}],
}


def _verdicts(project: Path, run_id: str) -> list[dict]:
    return [r for r in journal_records(project, run_id) if r["type"] == "verdict"]


def _summary(project: Path, run_id: str) -> dict:
    return json.loads((project / ".agentls" / "runs" / run_id / "summary.json").read_text())


def _diff(project: Path, run_id: str) -> str:
    return (project / ".agentls" / "runs" / run_id / "changes.diff").read_text()


def test_a_low_score_sends_the_run_back_with_the_feedback(project: Path, scripted_llm, run_fix):
    (project / ".agentls.toml").write_text(VERIFIER_ON)
    scripted_llm.add("planner", PLAN)
    scripted_llm.add("coder", FIX_EDIT)
    scripted_llm.add("verifier", LOW)
    scripted_llm.add("coder", DOCUMENT)
    scripted_llm.add("verifier", HIGH)
    scripted_llm.add("explainer", "add subtracted. It adds now and says so.")

    run = run_fix(str(project), "--goal", GOAL, "--base-url", scripted_llm.base_url, "--json")

    out = run.json
    assert (run.code, out["status"]) == (0, "fixed"), run.stderr
    calc = (project / "calc.py").read_text()
    assert "return a - b" in calc, "without --apply the workspace is untouched"
    first, _second = scripted_llm.requests_for("verifier")
    assert "+    return a + b" in first["messages"][-1]["content"], "the verifier reads the verified diff"
    assert GOAL in first["messages"][-1]["content"]
    coder_prompts = [json.dumps(r["messages"]) for r in scripted_llm.requests_for("coder")]
    assert (
        len(coder_prompts) == 2 and "has no docstring" in coder_prompts[1] and "one-line docstring" in coder_prompts[1]
    )
    low, high = _verdicts(project, out["run_id"])
    assert (low["score"], low["accepted"], low["next"]) == (0.4, False, "code")
    assert (high["score"], high["accepted"], high["next"]) == (0.9, True, "finalize")
    verdict = _summary(project, out["run_id"])["details"]["verdict"]
    assert verdict["score"] == 0.9 and verdict["feedback"] == "add adds and is documented."
    diff = _diff(project, out["run_id"])
    assert "The sum of a and b." in diff and "+    return a + b" in diff, "both rounds' change"
    trace = render_markdown(project, out["run_id"])
    assert "verifier: score 0.40 (threshold 0.7), another round: add adds now but has no docstring" in trace
    assert "verifier: score 0.90 (threshold 0.7), accepted" in trace
    assert out["usage"]["llm_calls"] == 6, "plan, code, verify, code, verify, explain (no reflector)"


def test_a_round_the_verifier_asked_for_that_breaks_a_test_is_undone(project: Path, scripted_llm, run_fix):
    (project / ".agentls.toml").write_text(VERIFIER_ON)
    scripted_llm.add("planner", PLAN)
    scripted_llm.add("coder", FIX_EDIT)
    scripted_llm.add("verifier", LOW)
    scripted_llm.add("coder", BREAK)
    scripted_llm.add("explainer", "add subtracted. It adds now.")

    run = run_fix(str(project), "--goal", GOAL, "--base-url", scripted_llm.base_url, "--json")

    out = run.json
    assert (run.code, out["status"], out["tests"]["failed"]) == (0, "fixed", 0), run.stderr
    diff = _diff(project, out["run_id"])
    assert "+    return a + b" in diff and "a * b" not in diff
    assert len(scripted_llm.requests_for("verifier")) == 1 and scripted_llm.requests_for("reflector") == []
    (_low, failed) = _verdicts(project, out["run_id"])
    assert "the change verified before it stands" in failed["note"]


def test_failing_tests_never_reach_the_verifier(project: Path, scripted_llm, run_fix):
    (project / ".agentls.toml").write_text(VERIFIER_ON)
    scripted_llm.default("coder", WRONG_EDIT)
    scripted_llm.default(
        "reflector", {"hypothesis": "wrong operator", "file": "calc.py", "change": "use +", "confidence": "low"}
    )

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--max-iterations", "1", "--json")

    assert (run.code, run.json["status"]) == (1, "unfixed"), run.stderr
    assert scripted_llm.requests_for("verifier") == [] and _verdicts(project, run.json["run_id"]) == []
