"""The best attempt is kept: worse or equal attempts are undone, noted for the coder, and retried warmer."""

from __future__ import annotations

import json
from pathlib import Path

from agent_core.agents.explainer.prompt import SYSTEM as EXPLAINER_SYSTEM
from agent_core.models import TestFailure, TestReport
from agent_core.pipeline.attempts import first_state, keep_or_rewind
from agent_core.workspace.shadow import ShadowWorkspace
from engine_support import BUGGY_CALC, FIX_EDIT, WRONG_EDIT

SYNTAX_EDIT = {"edits": [{"path": "calc.py", "search": "    return a - b", "replace": "    return a - b +"}]}
MISSING_EDIT = {"edits": [{"path": "calc.py", "search": "    return a / b", "replace": "    return a + b"}]}


def _report(failed: int, errors: int = 0, message: str = "AssertionError: got 1, want 5") -> TestReport:
    failures = [
        TestFailure(nodeid=f"test_calc.py::test_{i}", file="test_calc.py", line=5, message=message)
        for i in range(failed + errors)
    ]
    return TestReport(passed=1, failed=failed, errors=errors, exit_code=1, failures=failures)


def test_a_worse_attempt_is_rewound_and_a_better_one_kept(project: Path):
    with ShadowWorkspace(project) as shadow:
        calc = shadow.root / "calc.py"
        state = {"best": first_state(_report(failed=1)), "tried": []}

        shadow.remember("calc.py")
        calc.write_text("def add(a, b):\n    return a -\n")  # a collection error: worse than one failure
        out = keep_or_rewind(shadow, state, _report(failed=0, errors=1, message="SyntaxError: invalid syntax"), "DIFF")
        assert out["undone"] is True
        assert calc.read_text() == BUGGY_CALC["calc.py"], "back to the best state (here the original)"
        assert out["tried"] == ["DIFF\nResult: 0 failed, 1 errors: SyntaxError: invalid syntax"]

        calc.write_text("better\n")
        out = keep_or_rewind(shadow, {**state, **out}, _report(failed=0, errors=0), "DIFF2")
        assert out["undone"] is False and out["best"]["files"] == {"calc.py": "better\n"}
        assert out["best"]["score"] == [0, 0, 0] and calc.read_text() == "better\n"


def test_an_equal_attempt_is_undone_too(project: Path):
    with ShadowWorkspace(project) as shadow:
        shadow.remember("calc.py")
        (shadow.root / "calc.py").write_text("def add(a, b):\n    return a * b\n")
        out = keep_or_rewind(shadow, {"best": first_state(_report(failed=1))}, _report(failed=1), "D")
        assert out["undone"] is True and (shadow.root / "calc.py").read_text() == BUGGY_CALC["calc.py"]


def test_retries_run_warmer_and_see_what_was_undone(project: Path, scripted_llm, run_fix):
    scripted_llm.add("coder", WRONG_EDIT)
    scripted_llm.add("reflector", {"hypothesis": "h", "file": "calc.py", "change": "c", "confidence": "low"})
    scripted_llm.add("coder", WRONG_EDIT)
    scripted_llm.add("reflector", {"hypothesis": "h", "file": "calc.py", "change": "c", "confidence": "low"})
    scripted_llm.add(
        "planner",
        {
            "approach": "again",
            "subtasks": [
                {
                    "id": "t1",
                    "description": "fix add in calc.py",
                    "priority": 5,
                    "dependencies": [],
                    "files": ["calc.py"],
                }
            ],
        },
    )
    scripted_llm.add("coder", FIX_EDIT)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json")

    assert run.code == 0 and run.json["status"] == "fixed", run.stderr
    temps = [r["temperature"] for r in scripted_llm.requests_for("coder")]
    assert temps == [0.2, 0.5, 0.8], "configured, then warmer after each undone attempt"
    third = json.dumps(scripted_llm.requests_for("coder")[2]["messages"])
    assert third.count("Tried before") == 1 and third.count("+    return a * b") == 2, "both undone attempts shown"
    reflector = json.dumps(scripted_llm.requests_for("reflector")[0]["messages"])
    assert "(undone, as it did not help" in reflector


def test_no_reflector_call_when_no_edit_could_be_applied(project: Path, scripted_llm, run_fix):
    scripted_llm.add("coder", MISSING_EDIT)  # its search block is not in the file: nothing changes
    scripted_llm.add("coder", SYNTAX_EDIT)  # refused: it would break the syntax
    scripted_llm.add("coder", FIX_EDIT)
    scripted_llm.add("explainer", "add subtracted; it adds now.")

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json")

    assert run.code == 0 and run.json["status"] == "fixed" and run.json["iterations"] == 3, run.stderr
    assert scripted_llm.requests_for("reflector") == [], "nothing changed, so nothing new to diagnose"
    systems = [r["messages"][0]["content"] for r in scripted_llm.requests_for("explainer")]
    assert systems == [EXPLAINER_SYSTEM], "only the explanation"
    prompts = [json.dumps(r["messages"]) for r in scripted_llm.requests_for("coder")]
    assert "the search block was not found" in prompts[1]
    assert "would leave calc.py with a syntax error" in prompts[2]
