"""Replanning: the same failure signature twice in a row asks the planner again, with the failed plan."""

from __future__ import annotations

from pathlib import Path

from testkit.runs_support import PLAN, WRONG_EDIT, prompt_of

OTHER_PLAN = {"approach": "look at add again", "subtasks": [
    {"id": "t1", "description": "fix add in calc.py", "priority": 5, "dependencies": [], "files": ["calc.py"]}]}
HYPOTHESIS = {"hypothesis": "H-REFLECT: add multiplies its arguments", "file": "calc.py",
              "change": "return a + b", "confidence": "medium"}


def test_repeated_signature_replans_with_the_failed_plan_bounded_by_max_revisions(project: Path, scripted_llm, cli):
    (project / ".agentls.toml").write_text("max_revisions = 1\n")
    scripted_llm.add("planner", PLAN)
    scripted_llm.default("planner", OTHER_PLAN)
    scripted_llm.default("coder", WRONG_EDIT)  # applies once; later rounds cannot apply it: same failure
    scripted_llm.default("reflector", HYPOTHESIS)

    run = cli("fix", str(project), "--base-url", scripted_llm.base_url, "--goal", "make add add",
              "--max-iterations", "4", "--json")

    assert run.code == 1 and run.json["status"] == "unfixed", run.stderr
    planner = scripted_llm.requests_for("planner")
    assert len(planner) == 2, "one replan: the third repeat is over max_revisions"
    replan = prompt_of(planner[1])
    assert "the same failure repeated" in replan
    assert "rewrite add with multiplication" in replan, "the failed plan's approach"
    assert "t1: make add in calc.py multiply its arguments" in replan, "the failed plan's step"
    assert "assert 6 == 5" in replan, "the failing output"
    assert "H-REFLECT: add multiplies its arguments" in replan, "the reflection"
    first = prompt_of(planner[0])
    assert "the same failure repeated" not in first and "H-REFLECT" not in first
    assert run.json["iterations"] == 4
